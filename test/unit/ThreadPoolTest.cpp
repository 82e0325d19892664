//===- ThreadPoolTest.cpp - traincc_parallel_for and its pool -------------===//

#include "TestUtil.h"

#include "traincc/runtime/ModelABI.h"
#include "traincc/runtime/support/ThreadPool.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <new>
#include <set>
#include <thread>

using namespace traincc::rt;

//===----------------------------------------------------------------------===//
// Allocation counting: the global operator new of this test binary counts
// calls while gCountAllocations is set.
//===----------------------------------------------------------------------===//

namespace {
std::atomic<bool> gCountAllocations{false};
std::atomic<int64_t> gAllocations{0};
} // namespace

void *operator new(size_t size) {
  if (gCountAllocations.load(std::memory_order_relaxed))
    gAllocations.fetch_add(1, std::memory_order_relaxed);
  if (void *p = std::malloc(size ? size : 1))
    return p;
  throw std::bad_alloc();
}
void *operator new[](size_t size) { return ::operator new(size); }
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, size_t) noexcept { std::free(p); }
void operator delete[](void *p, size_t) noexcept { std::free(p); }

namespace {

/// Counts visits of each index and which threads ran chunks.
struct Visits {
  explicit Visits(int64_t n) : counts(size_t(n)) {}
  std::vector<std::atomic<int>> counts;
  std::atomic<int64_t> chunks{0};

  static void body(void *context, int64_t begin, int64_t end) {
    auto *v = static_cast<Visits *>(context);
    v->chunks.fetch_add(1);
    for (int64_t i = begin; i < end; ++i)
      v->counts[size_t(i)].fetch_add(1);
  }
  bool eachOnce() const {
    for (const std::atomic<int> &c : counts)
      if (c.load() != 1)
        return false;
    return true;
  }
};

// Tests that chunks cover [0, count) in order, without gaps, with sizes
// that differ by at most one.
TEST(ThreadPool, ChunkBoundsSplitEvenly) {
  for (int64_t count = 1; count < 60; ++count)
    for (int64_t chunks = 1; chunks <= std::min<int64_t>(count, 9); ++chunks) {
      int64_t expectedBegin = 0, smallest = count, largest = 0;
      for (int64_t i = 0; i < chunks; ++i) {
        int64_t begin, end;
        chunkBounds(count, chunks, i, begin, end);
        ASSERT_EQ(begin, expectedBegin);
        smallest = std::min(smallest, end - begin);
        largest = std::max(largest, end - begin);
        expectedBegin = end;
      }
      EXPECT_EQ(expectedBegin, count);
      EXPECT_LE(largest - smallest, 1);
      EXPECT_GE(smallest, 1);
    }
}

// Tests that every index is visited exactly once, in min(threads, count)
// chunks, for pools of several sizes.
TEST(ThreadPool, VisitsEachIndexOnce) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (int64_t count : {0, 1, 2, 3, 7, 1000}) {
      Visits visits(count);
      pool.parallelFor(count, &visits, Visits::body);
      EXPECT_TRUE(visits.eachOnce()) << threads << " threads, " << count;
      EXPECT_EQ(visits.chunks.load(), std::min<int64_t>(count, threads));
    }
  }
}

// Tests that a one-thread pool runs the loop on the caller, as one chunk.
TEST(ThreadPool, OneThreadRunsSerially) {
  ThreadPool pool(1);
  struct Context {
    std::thread::id caller = std::this_thread::get_id();
    bool allOnCaller = true;
    int calls = 0;
  } context;
  pool.parallelFor(100, &context, [](void *c, int64_t begin, int64_t end) {
    auto *ctx = static_cast<Context *>(c);
    ctx->allOnCaller &= std::this_thread::get_id() == ctx->caller;
    ++ctx->calls;
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, 100);
  });
  EXPECT_TRUE(context.allOnCaller);
  EXPECT_EQ(context.calls, 1);
}

// Tests that the calling thread runs chunks too: each of two chunks waits
// until two threads are inside the loop, which only happens if the caller
// takes the chunk the (single) worker does not.
TEST(ThreadPool, CallerParticipates) {
  ThreadPool pool(2);
  struct Context {
    std::atomic<int> inside{0};
    std::atomic<bool> metOther{true};
    std::set<std::thread::id> threads;
    std::mutex mutex;
  } context;
  pool.parallelFor(2, &context, [](void *c, int64_t, int64_t) {
    auto *ctx = static_cast<Context *>(c);
    {
      std::lock_guard<std::mutex> lock(ctx->mutex);
      ctx->threads.insert(std::this_thread::get_id());
    }
    ctx->inside.fetch_add(1);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (ctx->inside.load() < 2)
      if (std::chrono::steady_clock::now() > deadline) {
        ctx->metOther = false;
        break;
      }
  });
  EXPECT_TRUE(context.metOther.load());
  EXPECT_EQ(context.threads.size(), 2u);
  EXPECT_EQ(context.threads.count(std::this_thread::get_id()), 1u);
}

// Tests many small loops in a row (the pattern of generated code: several
// short loops per step) and that no call allocates memory.
TEST(ThreadPool, ManySmallCallsWithoutAllocation) {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  auto body = [](void *c, int64_t begin, int64_t end) {
    static_cast<std::atomic<int64_t> *>(c)->fetch_add(end - begin);
  };
  pool.parallelFor(5, &total, body); // warm up
  total = 0;
  gAllocations = 0;
  gCountAllocations = true;
  for (int i = 0; i < 20000; ++i)
    pool.parallelFor(1 + i % 5, &total, body);
  gCountAllocations = false;
  int64_t expected = 0;
  for (int i = 0; i < 20000; ++i)
    expected += 1 + i % 5;
  EXPECT_EQ(total.load(), expected);
  EXPECT_EQ(gAllocations.load(), 0);
}

// Tests that a loop started from inside a loop body runs serially on that
// thread instead of deadlocking on the busy pool.
TEST(ThreadPool, NestedCallsRunSerially) {
  ThreadPool pool(4);
  ActiveThreadPool active(pool);
  struct Context {
    Visits inner{64 * 16};
    std::atomic<int> innerChunks{0};
  } context;
  traincc_parallel_for(64, &context, [](void *c, int64_t begin, int64_t end) {
    auto *ctx = static_cast<Context *>(c);
    for (int64_t outer = begin; outer < end; ++outer) {
      struct Inner {
        Context *ctx;
        int64_t outer;
      } inner{ctx, outer};
      traincc_parallel_for(16, &inner, [](void *ic, int64_t b, int64_t e) {
        auto *in = static_cast<Inner *>(ic);
        in->ctx->innerChunks.fetch_add(1);
        for (int64_t i = b; i < e; ++i)
          in->ctx->inner.counts[size_t(in->outer * 16 + i)].fetch_add(1);
      });
    }
  });
  EXPECT_TRUE(context.inner.eachOnce());
  EXPECT_EQ(context.innerChunks.load(), 64); // one serial chunk per outer index
}

// Tests that two threads sharing a pool both get correct results (one of
// them runs serially while the other holds the pool).
TEST(ThreadPool, ConcurrentCallersShareThePool) {
  ThreadPool pool(2);
  auto work = [&pool](Visits *visits) {
    for (int round = 0; round < 200; ++round) {
      for (std::atomic<int> &c : visits->counts)
        c = 0;
      pool.parallelFor(int64_t(visits->counts.size()), visits, Visits::body);
      if (!visits->eachOnce())
        return false;
    }
    return true;
  };
  Visits a(100), b(37);
  bool okB = false;
  std::thread other([&] { okB = work(&b); });
  bool okA = work(&a);
  other.join();
  EXPECT_TRUE(okA);
  EXPECT_TRUE(okB);
}

// Tests traincc_parallel_for: serial without an active pool, the pool
// while ActiveThreadPool lives, serial again after.
TEST(ThreadPool, ActivePoolScope) {
  Visits before(10);
  traincc_parallel_for(10, &before, Visits::body);
  EXPECT_TRUE(before.eachOnce());
  EXPECT_EQ(before.chunks.load(), 1);
  {
    ThreadPool pool(2);
    ActiveThreadPool active(pool);
    Visits during(10);
    traincc_parallel_for(10, &during, Visits::body);
    EXPECT_TRUE(during.eachOnce());
    EXPECT_EQ(during.chunks.load(), 2);
  }
  Visits after(10);
  traincc_parallel_for(10, &after, Visits::body);
  EXPECT_EQ(after.chunks.load(), 1);
  traincc_parallel_for(0, &after, Visits::body);
  traincc_parallel_for(-5, &after, Visits::body);
  EXPECT_EQ(after.chunks.load(), 1);
}

} // namespace
