// sync_test.cc — Mutex, CondVar, WaitGroup and Channel across cores.
#include "junction/sched/sync.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "junction/sched/channel.h"
#include "junction/sched/sched.h"
#include "junction/sched/test_util.h"

namespace junction::sched {
namespace {
using namespace std::chrono_literals;
using testing::RunOnCores;

TEST(Mutex, ProtectsACounterAcrossCores) {
  RunOnCores(2, [] {
    Mutex mu;
    long counter = 0;
    std::vector<JoinHandle> hs;
    for (int t = 0; t < 8; ++t) {
      hs.push_back(*Spawn([&] {
        for (int i = 0; i < 20000; ++i) {
          std::lock_guard<Mutex> l(mu);
          ++counter;
          if (i % 64 == 0) Yield();  // hold it across a switch sometimes: forces parking
        }
      }, {.core = t % 2}));
    }
    for (auto& h : hs) h.Join();
    EXPECT_EQ(counter, 8 * 20000);
  });
}

TEST(CondVar, ProducerConsumerHandsOffEveryItem) {
  RunOnCores(2, [] {
    Mutex mu;
    CondVar cv;
    std::vector<int> queue;
    bool done = false;
    long sum = 0;
    auto consumer = *Spawn([&] {
      std::unique_lock<Mutex> l(mu);
      while (true) {
        cv.Wait(l, [&] { return !queue.empty() || done; });
        while (!queue.empty()) {
          sum += queue.back();
          queue.pop_back();
        }
        if (done) return;
      }
    }, {.core = 1});
    for (int i = 1; i <= 100000; ++i) {
      std::lock_guard<Mutex> l(mu);
      queue.push_back(i);
      cv.NotifyOne();
    }
    {
      std::lock_guard<Mutex> l(mu);
      done = true;
      cv.NotifyAll();
    }
    consumer.Join();
    EXPECT_EQ(sum, 100000L * 100001 / 2);
  });
}

TEST(CondVar, WaitUntilTimesOut) {
  RunOnCores(1, [] {
    Mutex mu;
    CondVar cv;
    std::unique_lock<Mutex> l(mu);
    const auto t0 = Clock::now();
    EXPECT_FALSE(cv.WaitUntil(l, t0 + 3ms));
    EXPECT_GE(Clock::now() - t0, 3ms);
    EXPECT_TRUE(l.owns_lock());
  });
}

TEST(CondVar, TimeoutsAndNotifiesRacingNeverLoseOrDoubleAWakeUp) {
  RunOnCores(2, [] {
    Mutex mu;
    CondVar cv;
    int tickets = 0;
    std::atomic<int> got{0};
    std::vector<JoinHandle> hs;
    for (int t = 0; t < 16; ++t) {
      hs.push_back(*Spawn([&] {
        std::unique_lock<Mutex> l(mu);
        while (got.load() < 2000) {
          if (cv.WaitUntil(l, Clock::now() + 20us, [&] { return tickets > 0; })) {
            --tickets;
            got++;
          }
        }
      }));
    }
    auto producer = *Spawn([&] {
      for (int i = 0; i < 2000; ++i) {
        std::lock_guard<Mutex> l(mu);
        ++tickets;
        cv.NotifyOne();
      }
    });
    producer.Join();
    for (auto& h : hs) h.Join();
    EXPECT_EQ(got.load(), 2000);
    EXPECT_EQ(tickets, 0);
  });
}

TEST(WaitGroup, WaitsForAll) {
  RunOnCores(2, [] {
    WaitGroup wg;
    std::atomic<int> done{0};
    for (int i = 0; i < 500; ++i) {
      wg.Add();
      ASSERT_TRUE(SpawnDetached([&] {
        SleepFor(100us);
        done++;
        wg.Done();
      }).has_value());
    }
    wg.Wait();
    EXPECT_EQ(done.load(), 500);
    WaitGroup never;
    never.Add();
    EXPECT_FALSE(never.WaitUntil(Clock::now() + 1ms));
    never.Done();
  });
}

TEST(Channel, ManyProducersManyConsumersConserveEveryValue) {
  RunOnCores(2, [] {
    Channel<long> ch(8);
    constexpr int kProducers = 4, kPerProducer = 50000;
    std::atomic<long> sum{0};
    std::atomic<long> count{0};
    std::vector<JoinHandle> consumers, producers;
    for (int c = 0; c < 3; ++c) {
      consumers.push_back(*Spawn([&] {
        while (auto v = ch.Recv()) {
          sum += *v;
          count++;
        }
      }));
    }
    for (int p = 0; p < kProducers; ++p) {
      producers.push_back(*Spawn([&, p] {
        for (int i = 0; i < kPerProducer; ++i) ASSERT_TRUE(ch.Send(p * kPerProducer + i + 1L).has_value());
      }));
    }
    for (auto& h : producers) h.Join();
    ch.Close();
    for (auto& h : consumers) h.Join();
    const long n = kProducers * kPerProducer;
    EXPECT_EQ(count.load(), n);
    EXPECT_EQ(sum.load(), n * (n + 1) / 2);
  });
}

TEST(Channel, CloseDrainsThenFailsAndTimeoutsReportTimedOut) {
  RunOnCores(1, [] {
    Channel<int> ch(2);
    ASSERT_TRUE(ch.TrySend(1).has_value());
    ASSERT_TRUE(ch.TrySend(2).has_value());
    auto full = ch.TrySend(3);
    ASSERT_FALSE(full.has_value());
    EXPECT_EQ(full.error().code(), ErrorCode::kWouldBlock);
    auto late = ch.Send(3, Clock::now() + 1ms);
    ASSERT_FALSE(late.has_value());
    EXPECT_EQ(late.error().code(), ErrorCode::kTimedOut);
    ch.Close();
    EXPECT_EQ(*ch.Recv(), 1);
    EXPECT_EQ(*ch.Recv(), 2);
    auto end = ch.Recv();
    ASSERT_FALSE(end.has_value());
    EXPECT_EQ(end.error().code(), ErrorCode::kClosed);
    EXPECT_EQ(ch.Send(9).error().code(), ErrorCode::kClosed);
    Channel<int> empty(1);
    EXPECT_EQ(empty.Recv(Clock::now() + 1ms).error().code(), ErrorCode::kTimedOut);
  });
}

}  // namespace
}  // namespace junction::sched
