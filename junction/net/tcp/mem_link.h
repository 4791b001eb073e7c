// mem_link.h — for tests: two hosts' TCP services wired back to back through an in-memory
// link with seeded faults (drop, duplicate, reorder, delay), driven by the cores' poll hooks.
//
// Frames live in a fixed pool (no allocation per packet); each destination core has a queue
// ordered by delivery time. A host's core c transmits through its TcpTx; the frame is steered
// to the receiving host's core by FlowCore, as the dpdk side does. Each core's poll hook
// delivers due frames and advances both hosts' engines on that core. Test code: the queues
// take a spinlock.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "junction/net/tcp/tcp_socket.h"
#include "junction/sched/core_hooks.h"
#include "junction/sched/sched.h"
#include "junction/sched/spinlock.h"

namespace junction::net::tcp::testing {

struct LinkFaults {
  double drop = 0;       // probability a frame is lost
  double duplicate = 0;  // ... delivered twice
  double reorder = 0;    // ... held back by up to reorder_ns (later frames overtake it)
  std::int64_t delay_ns = 20'000;   // one-way latency
  std::int64_t reorder_ns = 300'000;
  std::uint64_t seed = 1;
};

struct LinkStats {
  std::atomic<std::uint64_t> frames{0}, dropped{0}, dropped_data{0}, duplicated{0}, reordered{0};
};

class MemLink {
 public:
  static constexpr std::size_t kFrameBytes = 1500;

  MemLink(int cores, LinkFaults faults, std::size_t pool_frames = 16384)
      : cores_(cores), faults_(faults), rng_(faults.seed), pool_(pool_frames * kFrameBytes) {
    free_.reserve(pool_frames);
    for (std::size_t i = 0; i < pool_frames; ++i) free_.push_back(pool_.data() + i * kFrameBytes);
    for (int h = 0; h < 2; ++h) {
      for (int c = 0; c < cores; ++c) {
        queues_[h].push_back(std::make_unique<Queue>());
        queues_[h].back()->items.reserve(pool_frames);
        txs_[h].push_back(std::make_unique<Tx>(this, h));
      }
    }
    gate_ = std::make_shared<Gate>();
    gate_->busy = std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(cores));
  }
  ~MemLink() { Stop(); }

  // Host h's TcpTx of each core, for TcpService::Create.
  std::vector<TcpTx*> tx(int h) {
    std::vector<TcpTx*> v;
    for (auto& t : txs_[h]) v.push_back(t.get());
    return v;
  }
  void Attach(int h, TcpService* svc, Ipv4Addr addr) {
    svc_[h] = svc;
    addr_[h] = addr;
  }

  // From a uthread: registers the poll hook and a ticker on every core (keeps the cores
  // polling while the test runs).
  void Start() {
    for (int c = 0; c < cores_; ++c) {
      auto h = sched::Spawn([this, c] {
        // The hook outlives the link (hooks stay until the runtime ends): it holds the gate,
        // and touches the link only while the gate is open.
        sched::AddPollHook([g = gate_, this, c] {
          auto& busy = g->busy[static_cast<std::size_t>(c)];
          busy.store(true, std::memory_order_seq_cst);
          if (!g->stopped.load(std::memory_order_seq_cst)) Poll(c);
          busy.store(false, std::memory_order_seq_cst);
        });
        while (!gate_->stopped.load(std::memory_order_acquire)) sched::SleepFor(std::chrono::microseconds(50));
      }, sched::SpawnOptions{.core = c, .stealable = false});
      if (h) tickers_.push_back(std::move(*h));
    }
  }
  // From a uthread: stops the hooks touching the engines (call before destroying them).
  void Stop() {
    gate_->stopped.store(true, std::memory_order_seq_cst);
    for (int c = 0; c < cores_; ++c) {
      while (gate_->busy[static_cast<std::size_t>(c)].load(std::memory_order_seq_cst)) sched::Yield();
    }
    for (auto& t : tickers_) t.Join();
    tickers_.clear();
  }

  const LinkStats& stats() const { return stats_; }

 private:
  struct Item {
    std::int64_t at;
    std::uint64_t order;
    std::byte* frame;
    std::uint16_t len;
    bool operator>(const Item& o) const { return at != o.at ? at > o.at : order > o.order; }
  };
  struct Queue {
    sched::Spinlock lock;
    std::vector<Item> items;  // a min-heap on (at, order)
  };
  class Tx final : public TcpTx {
   public:
    Tx(MemLink* link, int host) : link_(link), host_(host) {}
    std::optional<TxFrame> Alloc(Ipv4Addr, Ipv4Addr, std::size_t len) override {
      if (len > kFrameBytes) return std::nullopt;
      std::byte* f = link_->Take();
      if (f == nullptr) return std::nullopt;
      return TxFrame{std::span(f, kFrameBytes), f};
    }
    void Send(TxFrame f, std::size_t len) override { link_->Transmit(host_, static_cast<std::byte*>(f.handle), len); }
    void Discard(TxFrame f) override { link_->Give(static_cast<std::byte*>(f.handle)); }
    TxChecksum checksum_mode() const override { return TxChecksum::kSoftware; }
    std::uint16_t mtu() const override { return 1500; }

   private:
    MemLink* link_;
    int host_;
  };

  std::byte* Take() {
    pool_lock_.lock();
    std::byte* f = nullptr;
    if (!free_.empty()) {
      f = free_.back();
      free_.pop_back();
    }
    pool_lock_.unlock();
    return f;
  }
  void Give(std::byte* f) {
    pool_lock_.lock();
    free_.push_back(f);
    pool_lock_.unlock();
  }

  void Transmit(int from, std::byte* f, std::size_t len) {
    const int to = 1 - from;
    stats_.frames.fetch_add(1, std::memory_order_relaxed);
    // Steer as the receiving host's IP layer would: by its view of the 4-tuple.
    const std::uint16_t sport = static_cast<std::uint16_t>((std::to_integer<unsigned>(f[0]) << 8) | std::to_integer<unsigned>(f[1]));
    const std::uint16_t dport = static_cast<std::uint16_t>((std::to_integer<unsigned>(f[2]) << 8) | std::to_integer<unsigned>(f[3]));
    const int core = FlowCore(FourTuple{addr_[to], dport, addr_[from], sport}, cores_);
    const bool data = len > 20 + 12 || (std::to_integer<unsigned>(f[13]) & 0x03) != 0;
    rng_lock_.lock();
    const double u_drop = uni_(rng_), u_dup = uni_(rng_), u_re = uni_(rng_), u_delay = uni_(rng_);
    rng_lock_.unlock();
    if (u_drop < faults_.drop) {
      stats_.dropped.fetch_add(1, std::memory_order_relaxed);
      if (data) stats_.dropped_data.fetch_add(1, std::memory_order_relaxed);
      Give(f);
      return;
    }
    const std::int64_t now = sched::MonoNs();
    std::int64_t at = now + faults_.delay_ns;
    if (u_re < faults_.reorder) {
      at += static_cast<std::int64_t>(u_delay * static_cast<double>(faults_.reorder_ns));
      stats_.reordered.fetch_add(1, std::memory_order_relaxed);
    }
    if (u_dup < faults_.duplicate) {
      if (std::byte* d = Take(); d != nullptr) {
        std::memcpy(d, f, len);
        stats_.duplicated.fetch_add(1, std::memory_order_relaxed);
        Push(to, core, Item{at + 1000, 0, d, static_cast<std::uint16_t>(len)});
      }
    }
    Push(to, core, Item{at, 0, f, static_cast<std::uint16_t>(len)});
  }

  void Push(int host, int core, Item it) {
    Queue& q = *queues_[host][static_cast<std::size_t>(core)];
    q.lock.lock();
    it.order = order_++;
    q.items.push_back(it);
    std::push_heap(q.items.begin(), q.items.end(), std::greater<>());
    q.lock.unlock();
  }

  void Poll(int core) {
    const std::int64_t now = sched::MonoNs();
    for (int h = 0; h < 2; ++h) {
      Queue& q = *queues_[h][static_cast<std::size_t>(core)];
      Engine& e = svc_[h]->engine(core);
      for (int burst = 0; burst < 64; ++burst) {
        q.lock.lock();
        if (q.items.empty() || q.items.front().at > now) {
          q.lock.unlock();
          break;
        }
        std::pop_heap(q.items.begin(), q.items.end(), std::greater<>());
        Item it = q.items.back();
        q.items.pop_back();
        q.lock.unlock();
        e.Input(RxSegment{addr_[1 - h], addr_[h], std::span<const std::byte>(it.frame, it.len), false});
        Give(it.frame);
      }
      e.Advance(now);
    }
  }

  int cores_;
  LinkFaults faults_;
  sched::Spinlock rng_lock_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> uni_{0.0, 1.0};
  std::vector<std::byte> pool_;
  sched::Spinlock pool_lock_;
  std::vector<std::byte*> free_;
  std::vector<std::unique_ptr<Queue>> queues_[2];
  std::vector<std::unique_ptr<Tx>> txs_[2];
  TcpService* svc_[2] = {nullptr, nullptr};
  Ipv4Addr addr_[2];
  std::atomic<std::uint64_t> order_{0};
  struct Gate {
    std::atomic<bool> stopped{false};
    std::unique_ptr<std::atomic<bool>[]> busy;  // [core]: a hook is inside Poll
  };
  std::shared_ptr<Gate> gate_;
  std::vector<sched::JoinHandle> tickers_;
  LinkStats stats_;
};

}  // namespace junction::net::tcp::testing
