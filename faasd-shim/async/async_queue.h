// async_queue.h — the node's durable queue of /async-function calls: accept, run, call back.
//
//   auto q = AsyncQueue::Open(options, invoke_route, stack);   // loads what a crash left
//   (*q)->Start();                                             // worker uthreads
//   auto id = (*q)->Enqueue(std::move(call));   // parks until the row is fsync'd; then 202
//   ...
//   (*q)->Stop();
//
// Durability: Enqueue returns only after the row is committed (WAL, synchronous=FULL) by the
// queue's writer thread, which groups concurrent enqueues into one transaction (one fsync).
// Workers run each call through `invoke` — the same route as /function/NAME (POST, the
// original path after the name, query, headers and body, X-Call-Id kept) — store the
// function's answer, and POST it to X-Callback-Url with X-Function-Status, X-Function-Name,
// X-Duration-Seconds and X-Call-Id (plus the function's own headers). A callback that fails
// (no connection, a timeout, or an answer of 429 or 5xx) is retried after base_delay,
// 2 x base_delay, 4 x ... until `callback_attempts` attempts were made. A row is marked done
// only once the callback was answered, the attempts ran out, or (no callback) the function
// ran; so after a crash every call not done runs again: at least once.
//
// Threads: Open/Start/Stop from uthreads of the runtime (Stop waits for the workers' current
// calls); Enqueue from any uthread, many at once. The SQLite work happens on the writer
// kthread only, never on a runtime core.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "faasd-shim/async/callback_client.h"
#include "faasd-shim/async/queue_db.h"
#include "junction/base/error.h"
#include "junction/http/request.h"
#include "junction/http/server/server.h"
#include "junction/net/stack.h"
#include "junction/sched/sched.h"
#include "junction/sched/spinlock.h"

namespace faasnode::async {

struct AsyncOptions {
  std::string db_path;  // <state dir>/async.db
  int workers = 2;      // uthreads running queued calls
  int callback_attempts = 5;
  std::chrono::milliseconds callback_base_delay{500};
  std::chrono::milliseconds callback_timeout{10'000};  // per attempt: connect, send, answer
  std::int64_t keep_done_rows = 10'000;  // done rows kept in the file (pruned every 1000 done)
};

// The invocation route: `rest` = NAME[.NS][/path], as /function/ gives it.
using InvokeRoute =
    std::function<void(const junction::http::Request&, std::string_view rest, junction::http::Reply&)>;

struct AsyncStats {
  std::uint64_t enqueued = 0;
  std::uint64_t completed = 0;       // marked done
  std::uint64_t callbacks_ok = 0;
  std::uint64_t callback_retries = 0;
  std::uint64_t callbacks_failed = 0;  // attempts ran out
  std::uint64_t restored = 0;          // rows found not done at Open
};

class AsyncQueue {
 public:
  // Opens (creates) the database, loads every row not done, starts the writer thread.
  // Errors: bad options (kInvalidArgument), QueueDb::Open's errors. `invoke` and `stack`
  // must outlive the queue.
  static junction::Status<std::unique_ptr<AsyncQueue>> Open(const AsyncOptions& options, InvokeRoute invoke,
                                                           junction::net::Stack* stack);
  ~AsyncQueue();  // Stop()

  // Spawns the worker uthreads; the restored calls run first.
  junction::Status<void> Start();

  // Queues a call durably; parks until its row is committed. Sets nothing in `call` the
  // caller needs; returns the row id. Errors: kClosed after Stop, kIo from SQLite (nothing
  // was queued).
  junction::Status<std::int64_t> Enqueue(QueuedCall call);

  // Stops taking calls, lets each worker finish the call it runs, writes what they reported,
  // stops the writer. Calls not done stay in the database for the next start. Idempotent.
  void Stop();

  AsyncStats stats() const;
  std::size_t waiting() const;  // calls in memory not yet taken by a worker

 private:
  struct Waiter {
    std::atomic<bool> done{false};
    junction::Status<void> status;
    std::int64_t id = 0;
    junction::sched::ThreadRef thread = nullptr;
  };
  struct Op {
    enum class Kind { kInsert, kResult, kAttempts, kDone } kind = Kind::kInsert;
    std::unique_ptr<QueuedCall> call;  // kInsert
    std::int64_t id = 0;
    CallResult result;
    int attempts = 0;
    std::string outcome;
    Waiter* waiter = nullptr;  // kInsert
  };
  struct Delayed {
    junction::sched::Deadline due;
    std::unique_ptr<QueuedCall> call;
  };

  AsyncQueue(const AsyncOptions& options, InvokeRoute invoke, junction::net::Stack* stack,
             std::unique_ptr<QueueDb> db);
  void Post(Op op);
  void WriterLoop();
  void WriteBatch(std::vector<Op>& ops);
  void AddReady(std::vector<std::unique_ptr<QueuedCall>> calls);
  void WorkerLoop();
  void Process(std::unique_ptr<QueuedCall> call);
  void RunFunction(QueuedCall& call);
  static void Bump(std::atomic<std::uint64_t>& c) { c.fetch_add(1, std::memory_order_relaxed); }

  AsyncOptions options_;
  InvokeRoute invoke_;
  junction::net::Stack* stack_;
  std::unique_ptr<QueueDb> db_;  // the writer thread's only

  // Writer thread and its inbox.
  std::mutex ops_mu_;
  std::condition_variable ops_cv_;
  std::vector<Op> ops_;
  bool writer_stop_ = false;
  std::thread writer_;

  // Work for the workers.
  mutable junction::sched::Spinlock work_lock_;
  std::deque<std::unique_ptr<QueuedCall>> ready_;
  std::vector<Delayed> delayed_;
  std::vector<junction::sched::ThreadRef> idle_workers_;
  std::vector<junction::sched::JoinHandle> workers_;
  std::atomic<bool> stop_{false};
  bool stopped_ = false;

  std::uint64_t done_since_prune_ = 0;  // writer thread only
  std::atomic<std::uint64_t> enqueued_{0}, completed_{0}, callbacks_ok_{0}, retries_{0}, failed_{0};
  std::uint64_t restored_ = 0;
};

}  // namespace faasnode::async
