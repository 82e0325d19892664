//===- ThreadPool.cpp - The CPU backend's persistent worker threads -------===//

#include "traincc/runtime/support/ThreadPool.h"

#include "traincc/runtime/ModelABI.h"

#include <algorithm>

namespace traincc::rt {

namespace {
/// True on a thread while it runs chunks of a job: a nested call then runs
/// serially instead of waiting for threads that are busy with the outer one.
thread_local bool tInsideParallelBody = false;

/// The pool traincc_parallel_for uses. The C ABI has no context argument,
/// so this one process-wide pointer is unavoidable; ActiveThreadPool owns it.
std::atomic<ThreadPool *> gActivePool{nullptr};

struct InsideBodyScope {
  bool previous;
  InsideBodyScope() : previous(tInsideParallelBody) {
    tInsideParallelBody = true;
  }
  ~InsideBodyScope() { tInsideParallelBody = previous; }
};
} // namespace

int defaultThreadCount() {
  unsigned hardware = std::thread::hardware_concurrency();
  return hardware == 0 ? 1 : static_cast<int>(hardware);
}

ThreadPool::ThreadPool(int threads) {
  int workers = std::max(threads, 1) - 1;
  workers_.reserve(static_cast<size_t>(workers));
  for (int i = 0; i < workers; ++i)
    workers_.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(wakeMutex_);
    stopping_ = true;
    publishedStopping_.store(true, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread &worker : workers_)
    worker.join();
}

namespace {
/// Spins until `done()` or the spin budget (tens of microseconds) runs out;
/// returns done().
template <typename Done> bool spinUntil(Done done) {
  for (int i = 0; i < 4000; ++i) {
    if (done())
      return true;
    if (i < 2000) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      std::this_thread::yield();
    }
  }
  return done();
}
} // namespace

void ThreadPool::runChunks() {
  InsideBodyScope inside;
  for (;;) {
    int64_t chunk = nextChunk_.fetch_add(1, std::memory_order_relaxed);
    if (chunk >= chunks_)
      return;
    int64_t begin, end;
    chunkBounds(count_, chunks_, chunk, begin, end);
    body_(context_, begin, end);
    doneChunks_.fetch_add(1, std::memory_order_release);
  }
}

void ThreadPool::workerLoop(int) {
  uint64_t seen = 0;
  for (;;) {
    spinUntil([&] {
      return publishedGeneration_.load(std::memory_order_acquire) != seen ||
             publishedStopping_.load(std::memory_order_acquire);
    });
    {
      std::unique_lock<std::mutex> lock(wakeMutex_);
      if (!stopping_ && generation_ == seen) {
        ++sleepingWorkers_;
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        --sleepingWorkers_;
      }
      if (stopping_)
        return;
      seen = generation_;
      // Counted under the lock, so the dispatcher cannot start the next job
      // while this thread may still touch the current one.
      busyWorkers_.fetch_add(1, std::memory_order_relaxed);
    }
    runChunks();
    std::lock_guard<std::mutex> lock(wakeMutex_);
    if (busyWorkers_.fetch_sub(1, std::memory_order_acq_rel) == 1 &&
        dispatcherWaiting_)
      finished_.notify_one();
  }
}

void ThreadPool::parallelFor(int64_t count, void *context, ParallelBody body) {
  if (count <= 0)
    return;
  if (workers_.empty() || count == 1 || tInsideParallelBody) {
    body(context, 0, count);
    return;
  }
  std::unique_lock<std::mutex> dispatch(dispatch_, std::try_to_lock);
  if (!dispatch.owns_lock()) {
    body(context, 0, count);
    return;
  }
  bool wakeSleepers;
  {
    // A worker that woke too late for the previous job may still be
    // looking at its fields (finding no chunk left); the job is only
    // rewritten once no worker is busy, and busy counts change under this
    // lock, so later workers see the new generation.
    spinUntil([&] { return busyWorkers_.load(std::memory_order_acquire) == 0; });
    std::unique_lock<std::mutex> lock(wakeMutex_);
    if (busyWorkers_.load(std::memory_order_acquire) != 0) {
      dispatcherWaiting_ = true;
      finished_.wait(lock, [&] {
        return busyWorkers_.load(std::memory_order_acquire) == 0;
      });
      dispatcherWaiting_ = false;
    }
    count_ = count;
    chunks_ = std::min<int64_t>(count, threads());
    context_ = context;
    body_ = body;
    nextChunk_.store(0, std::memory_order_relaxed);
    doneChunks_.store(0, std::memory_order_relaxed);
    ++generation_;
    publishedGeneration_.store(generation_, std::memory_order_release);
    wakeSleepers = sleepingWorkers_ > 0;
  }
  if (wakeSleepers)
    wake_.notify_all();
  runChunks();
  auto finished = [&] {
    return busyWorkers_.load(std::memory_order_acquire) == 0 &&
           doneChunks_.load(std::memory_order_acquire) == chunks_;
  };
  if (spinUntil(finished))
    return;
  std::unique_lock<std::mutex> lock(wakeMutex_);
  dispatcherWaiting_ = true;
  finished_.wait(lock, finished);
  dispatcherWaiting_ = false;
}

ActiveThreadPool::ActiveThreadPool(ThreadPool &pool)
    : previous_(gActivePool.exchange(&pool)) {}

ActiveThreadPool::~ActiveThreadPool() { gActivePool.store(previous_); }

} // namespace traincc::rt

extern "C" void traincc_parallel_for(int64_t count, void *context,
                                     void (*body)(void *context, int64_t begin,
                                                  int64_t end)) {
  traincc::rt::ThreadPool *pool =
      traincc::rt::gActivePool.load(std::memory_order_acquire);
  if (!pool) {
    if (count > 0)
      body(context, 0, count);
    return;
  }
  pool->parallelFor(count, context, body);
}
