// async_queue.cc — the writer thread, the worker uthreads and the callback retries.
#include "faasd-shim/async/async_queue.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "junction/http/headers.h"

namespace faasnode::async {

using junction::ErrorCode;
using junction::MakeError;
namespace sched = junction::sched;

junction::Status<std::unique_ptr<AsyncQueue>> AsyncQueue::Open(const AsyncOptions& options, InvokeRoute invoke,
                                                              junction::net::Stack* stack) {
  if (options.workers < 1 || options.workers > 1024) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("async.workers = {}: give 1 to 1024 worker uthreads", options.workers));
  }
  if (options.callback_attempts < 1 || options.callback_attempts > 100) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("async.callback_attempts = {}: give 1 to 100", options.callback_attempts));
  }
  if (options.callback_base_delay.count() < 1 || options.callback_timeout.count() < 1) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "async.callback_base_delay_ms and async.callback_timeout_ms must be at least 1");
  }
  if (!invoke || stack == nullptr) {
    return MakeError(ErrorCode::kInvalidArgument, "async queue: an invoke route and a stack are required");
  }
  auto db = QueueDb::Open(options.db_path);
  if (!db) return std::unexpected(db.error());
  auto pending = (*db)->LoadPending();
  if (!pending) {
    return MakeError(ErrorCode::kIo, fmt::format("async queue {}: {}", options.db_path, pending.error().message()));
  }
  std::unique_ptr<AsyncQueue> q(new AsyncQueue(options, std::move(invoke), stack, std::move(*db)));
  std::vector<std::unique_ptr<QueuedCall>> restored;
  for (auto& c : *pending) restored.push_back(std::make_unique<QueuedCall>(std::move(c)));
  q->restored_ = restored.size();
  if (!restored.empty()) {
    spdlog::info("async: {} queued call(s) not done before the last stop; running them again", restored.size());
  }
  q->AddReady(std::move(restored));
  q->writer_ = std::thread([p = q.get()] { p->WriterLoop(); });
  return q;
}

AsyncQueue::AsyncQueue(const AsyncOptions& options, InvokeRoute invoke, junction::net::Stack* stack,
                       std::unique_ptr<QueueDb> db)
    : options_(options), invoke_(std::move(invoke)), stack_(stack), db_(std::move(db)) {}

AsyncQueue::~AsyncQueue() {
  if (sched::InRuntime()) {
    Stop();
  } else if (writer_.joinable()) {  // never started workers, or stopped off the runtime
    {
      std::lock_guard lock(ops_mu_);
      writer_stop_ = true;
    }
    ops_cv_.notify_one();
    writer_.join();
  }
}

junction::Status<void> AsyncQueue::Start() {
  for (int i = 0; i < options_.workers; ++i) {
    auto h = sched::Spawn([this] { WorkerLoop(); });
    if (!h) return std::unexpected(h.error());
    workers_.push_back(std::move(*h));
  }
  return {};
}

junction::Status<std::int64_t> AsyncQueue::Enqueue(QueuedCall call) {
  if (stop_.load(std::memory_order_acquire)) {
    return MakeError(ErrorCode::kClosed, "the node is shutting down; send the request again once it is back");
  }
  Waiter w;
  w.thread = sched::Self();
  Op op;
  op.kind = Op::Kind::kInsert;
  op.call = std::make_unique<QueuedCall>(std::move(call));
  op.waiter = &w;
  Post(std::move(op));
  while (!w.done.load(std::memory_order_acquire)) sched::Park();
  if (!w.status) return std::unexpected(w.status.error());
  Bump(enqueued_);
  return w.id;
}

void AsyncQueue::Post(Op op) {
  {
    std::lock_guard lock(ops_mu_);
    ops_.push_back(std::move(op));
  }
  ops_cv_.notify_one();
}

void AsyncQueue::WriterLoop() {
  std::vector<Op> batch;
  while (true) {
    {
      std::unique_lock lock(ops_mu_);
      ops_cv_.wait(lock, [&] { return !ops_.empty() || writer_stop_; });
      if (ops_.empty() && writer_stop_) return;
      batch.swap(ops_);
    }
    WriteBatch(batch);
    batch.clear();
  }
}

void AsyncQueue::WriteBatch(std::vector<Op>& ops) {
  // Inserts first, in one transaction: the enqueuers wait for this commit.
  std::vector<QueuedCall*> inserts;
  for (auto& op : ops) {
    if (op.kind == Op::Kind::kInsert) inserts.push_back(op.call.get());
  }
  if (!inserts.empty()) {
    junction::Status<void> s = db_->Insert(inserts);
    if (!s) spdlog::error("async: queuing {} call(s) failed: {}", inserts.size(), s.error().message());
    std::vector<std::unique_ptr<QueuedCall>> accepted;
    std::vector<Waiter*> waiters;
    for (auto& op : ops) {
      if (op.kind != Op::Kind::kInsert) continue;
      op.waiter->status = s;
      op.waiter->id = op.call->id;
      if (s) accepted.push_back(std::move(op.call));
      waiters.push_back(op.waiter);
    }
    // The rows are durable: hand the calls to workers and wake the enqueuers (their 202s).
    AddReady(std::move(accepted));
    for (Waiter* w : waiters) {
      const sched::ThreadRef t = w->thread;
      w->done.store(true, std::memory_order_release);
      sched::Unpark(t);
    }
  }
  // Then the workers' reports, in order, one transaction.
  bool any = false;
  for (const auto& op : ops) any |= op.kind != Op::Kind::kInsert;
  if (!any) return;
  if (auto b = db_->Begin(); !b) {
    spdlog::error("async: {}", b.error().message());
    return;
  }
  for (const auto& op : ops) {
    junction::Status<void> s;
    switch (op.kind) {
      case Op::Kind::kInsert:
        continue;
      case Op::Kind::kResult:
        s = db_->SaveResult(op.id, op.result);
        break;
      case Op::Kind::kAttempts:
        s = db_->SaveAttempts(op.id, op.attempts);
        break;
      case Op::Kind::kDone:
        s = db_->MarkDone(op.id, op.outcome);
        if (++done_since_prune_ >= 1000) {
          done_since_prune_ = 0;
          if (auto p = db_->PruneDone(options_.keep_done_rows); !p) {
            spdlog::warn("async: pruning done rows: {}", p.error().message());
          }
        }
        break;
    }
    if (!s) spdlog::error("async: updating call row {}: {}", op.id, s.error().message());
  }
  if (auto c = db_->Commit(); !c) {
    spdlog::error("async: {}", c.error().message());
    db_->Rollback();
  }
}

void AsyncQueue::AddReady(std::vector<std::unique_ptr<QueuedCall>> calls) {
  if (calls.empty()) return;
  std::vector<sched::ThreadRef> wake;
  {
    std::lock_guard lock(work_lock_);
    for (auto& c : calls) ready_.push_back(std::move(c));
    wake.swap(idle_workers_);
  }
  for (sched::ThreadRef t : wake) sched::Unpark(t);
}

void AsyncQueue::WorkerLoop() {
  const sched::ThreadRef self = sched::Self();
  while (!stop_.load(std::memory_order_acquire)) {
    std::unique_ptr<QueuedCall> call;
    sched::Deadline next = sched::Clock::now() + std::chrono::seconds(1);
    {
      std::lock_guard lock(work_lock_);
      const auto now = sched::Clock::now();
      for (auto it = delayed_.begin(); it != delayed_.end();) {
        if (it->due <= now) {
          ready_.push_back(std::move(it->call));
          it = delayed_.erase(it);
        } else {
          next = std::min(next, it->due);
          ++it;
        }
      }
      if (!ready_.empty()) {
        call = std::move(ready_.front());
        ready_.pop_front();
      } else {
        idle_workers_.push_back(self);
      }
    }
    if (call) {
      Process(std::move(call));
      continue;
    }
    sched::ParkUntil(next);
    std::lock_guard lock(work_lock_);
    std::erase(idle_workers_, self);
  }
}

void AsyncQueue::RunFunction(QueuedCall& call) {
  // As the queue worker does: POST /function/NAME[.NS][/path][?query] with the original headers.
  std::string path = "/function/" + call.function + call.path;
  std::string target = call.query.empty() ? path : path + "?" + call.query;
  junction::http::Request req;
  req.method = junction::http::Method::kPost;
  req.method_name = "POST";
  req.target = target;
  req.path = path;
  req.query = call.query;
  req.body = call.body;
  bool has_call_id = false;
  for (const auto& [k, v] : call.headers) {
    if (junction::http::EqualsIgnoreCase(k, "X-Call-Id")) {
      has_call_id = true;
      req.headers.Add(k, call.call_id);
    } else {
      req.headers.Add(k, v);
    }
  }
  if (!has_call_id) req.headers.Add("X-Call-Id", call.call_id);
  junction::http::Reply reply;
  const auto t0 = sched::Clock::now();
  invoke_(req, std::string_view(path).substr(std::string_view("/function/").size()), reply);
  CallResult r;
  r.seconds = std::chrono::duration<double>(sched::Clock::now() - t0).count();
  r.status = reply.status;
  r.body = std::move(reply.body);
  // The function's headers and the node's own (the header lines), less those the callback
  // sets itself.
  auto own = [](std::string_view k) {
    return junction::http::EqualsIgnoreCase(k, "X-Call-Id") || junction::http::EqualsIgnoreCase(k, "X-Duration-Seconds") ||
           junction::http::EqualsIgnoreCase(k, "X-Function-Status") ||
           junction::http::EqualsIgnoreCase(k, "X-Function-Name");
  };
  for (auto& [k, v] : reply.headers) {
    if (!own(k)) r.headers.emplace_back(std::move(k), std::move(v));
  }
  (void)junction::http::ForEachHeaderLine(reply.header_lines, [&](std::string_view k, std::string_view v) {
    if (!own(k)) r.headers.emplace_back(std::string(k), std::string(v));
  });
  call.result = std::move(r);
  Op op;
  op.kind = Op::Kind::kResult;
  op.id = call.id;
  op.result = *call.result;
  Post(std::move(op));
}

void AsyncQueue::Process(std::unique_ptr<QueuedCall> call) {
  if (!call->result) RunFunction(*call);
  const CallResult& r = *call->result;
  auto done = [&](std::string outcome) {
    spdlog::debug("async: call {} ({}): {}", call->call_id, call->function, outcome);
    Op op;
    op.kind = Op::Kind::kDone;
    op.id = call->id;
    op.outcome = std::move(outcome);
    Post(std::move(op));
    Bump(completed_);
  };
  if (call->callback_url.empty()) {
    done(fmt::format("no callback; the function answered {}", r.status));
    return;
  }
  auto url = ParseCallbackUrl(call->callback_url);
  if (!url) {  // checked at enqueue; only a row from an older node could fail here
    done(url.error().message());
    return;
  }
  HeaderList headers = r.headers;
  headers.emplace_back("X-Duration-Seconds", fmt::format("{:.6f}", r.seconds));
  headers.emplace_back("X-Function-Status", std::to_string(r.status));
  headers.emplace_back("X-Function-Name", call->function);
  headers.emplace_back("X-Call-Id", call->call_id);
  auto answered = PostCallback(*stack_, call->callback_url, headers, r.body, sched::Clock::now() + options_.callback_timeout);
  call->attempts += 1;
  const bool ok = answered && *answered != 429 && *answered < 500;
  if (ok) {
    Bump(callbacks_ok_);
    done(fmt::format("callback answered {} after {} attempt(s)", *answered, call->attempts));
    return;
  }
  const std::string why =
      answered ? fmt::format("the callback answered {}", *answered) : std::string(answered.error().message());
  if (call->attempts >= options_.callback_attempts) {
    spdlog::warn("async: call {} ({}): giving up on callback {} after {} attempt(s): {}", call->call_id,
                 call->function, call->callback_url, call->attempts, why);
    Bump(failed_);
    done(fmt::format("callback failed after {} attempt(s): {}", call->attempts, why));
    return;
  }
  Bump(retries_);
  Op op;
  op.kind = Op::Kind::kAttempts;
  op.id = call->id;
  op.attempts = call->attempts;
  Post(std::move(op));
  const int shift = std::min(call->attempts - 1, 20);
  auto delay = options_.callback_base_delay * (std::int64_t{1} << shift);
  delay = std::min<std::chrono::milliseconds>(delay, std::chrono::minutes(10));
  spdlog::debug("async: call {}: callback attempt {} failed ({}); next in {} ms", call->call_id, call->attempts, why,
                delay.count());
  std::vector<sched::ThreadRef> wake;
  {
    std::lock_guard lock(work_lock_);
    delayed_.push_back({sched::Clock::now() + delay, std::move(call)});
    wake.swap(idle_workers_);  // a worker may be parked past the new due time
  }
  for (sched::ThreadRef t : wake) sched::Unpark(t);
}

void AsyncQueue::Stop() {
  if (stopped_) return;
  stopped_ = true;
  stop_.store(true, std::memory_order_release);
  std::vector<sched::ThreadRef> wake;
  {
    std::lock_guard lock(work_lock_);
    wake.swap(idle_workers_);
  }
  for (sched::ThreadRef t : wake) sched::Unpark(t);
  for (auto& w : workers_) w.Join();
  workers_.clear();
  {
    std::lock_guard lock(ops_mu_);
    writer_stop_ = true;
  }
  ops_cv_.notify_one();
  if (writer_.joinable()) writer_.join();
}

AsyncStats AsyncQueue::stats() const {
  return {.enqueued = enqueued_.load(std::memory_order_relaxed),
          .completed = completed_.load(std::memory_order_relaxed),
          .callbacks_ok = callbacks_ok_.load(std::memory_order_relaxed),
          .callback_retries = retries_.load(std::memory_order_relaxed),
          .callbacks_failed = failed_.load(std::memory_order_relaxed),
          .restored = restored_};
}

std::size_t AsyncQueue::waiting() const {
  std::lock_guard lock(work_lock_);
  return ready_.size() + delayed_.size();
}

}  // namespace faasnode::async
