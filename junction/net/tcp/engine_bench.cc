// engine_bench.cc — the TCP engine's own cost: two engines on one thread, back to back through
// a FIFO of fixed frames (no NIC, no runtime): 64-byte request/response and bulk transfer.
#include <benchmark/benchmark.h>

#include <cstring>
#include <deque>
#include <vector>

#include "junction/net/tcp/engine.h"

namespace junction::net::tcp {
namespace {

const Ipv4Addr kA(10, 0, 0, 1);
const Ipv4Addr kB(10, 0, 0, 2);

// Frames from one engine to the other; buffers come from a fixed pool.
using Pool = std::vector<std::byte*>;

class Wire final : public TcpTx {
 public:
  explicit Wire(Pool* pool) : pool_(pool) {}
  std::optional<TxFrame> Alloc(Ipv4Addr, Ipv4Addr, std::size_t) override {
    if (pool_->empty()) return std::nullopt;
    std::byte* b = pool_->back();
    pool_->pop_back();
    return TxFrame{std::span(b, 1500), b};
  }
  void Send(TxFrame f, std::size_t len) override { q.push_back({static_cast<std::byte*>(f.handle), len}); }
  void Discard(TxFrame f) override { pool_->push_back(static_cast<std::byte*>(f.handle)); }
  TxChecksum checksum_mode() const override { return TxChecksum::kSoftware; }
  std::uint16_t mtu() const override { return 1500; }
  std::deque<std::pair<std::byte*, std::size_t>> q;

 private:
  Pool* pool_;
};

struct Pair {
  Pair() : store(4096 * 1500), wa(&pool), wb(&pool) {
    for (int i = 0; i < 4096; ++i) pool.push_back(store.data() + i * 1500);
    EngineOptions oa, ob;
    oa.local_addr = kA;
    ob.local_addr = kB;
    a = std::make_unique<Engine>(oa, &wa);
    b = std::make_unique<Engine>(ob, &wb);
    (void)b->Listen(Endpoint{kB, 80}, 16, nullptr);
    ca = *a->Connect(Endpoint{kB, 80});
    Pump();
    cb = b->Accept(80);
  }
  void Pump() {
    while (!wa.q.empty() || !wb.q.empty()) {
      Deliver(wa, *b, kA, kB);
      Deliver(wb, *a, kB, kA);
    }
  }
  void Deliver(Wire& w, Engine& to, Ipv4Addr src, Ipv4Addr dst) {
    while (!w.q.empty()) {
      auto [buf, len] = w.q.front();
      w.q.pop_front();
      to.Input(RxSegment{src, dst, std::span<const std::byte>(buf, len), false});
      pool.push_back(buf);
    }
  }
  std::vector<std::byte> store;
  Pool pool;
  Wire wa, wb;
  std::unique_ptr<Engine> a, b;
  Conn* ca = nullptr;
  Conn* cb = nullptr;
};

void BM_Rpc64(benchmark::State& state) {
  Pair p;
  std::byte msg[64] = {}, buf[64];
  for (auto _ : state) {
    (void)p.a->Send(p.ca, msg);
    p.Pump();
    (void)p.b->Recv(p.cb, buf);
    (void)p.b->Send(p.cb, msg);
    p.Pump();
    (void)p.a->Recv(p.ca, buf);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Rpc64);

void BM_Bulk(benchmark::State& state) {
  Pair p;
  std::vector<std::byte> chunk(64 * 1024), sink(256 * 1024);
  std::uint64_t bytes = 0;
  for (auto _ : state) {
    std::span<const std::byte> left(chunk);
    while (!left.empty()) {
      auto n = p.a->Send(p.ca, left);
      if (n) left = left.subspan(*n);
      p.Pump();
      while (true) {
        auto r = p.b->Recv(p.cb, sink);
        if (!r || *r == 0) break;
        bytes += *r;
      }
      p.Pump();
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}
BENCHMARK(BM_Bulk);

}  // namespace
}  // namespace junction::net::tcp

BENCHMARK_MAIN();
