//===- ThreadPool.h - The CPU backend's persistent worker threads -*- C++ -*-===//
//
// Generated CPU code parallelises its loops through traincc_parallel_for
// (ModelABI.h). That C entry point has no context argument, so the runtime
// installs one pool for the process with ActiveThreadPool (RAII) while a
// command runs; without one, traincc_parallel_for runs serially.
//
// parallelFor(count, ...) splits [0, count) into min(threads, count) chunks
// whose sizes differ by at most one, runs one chunk on the calling thread
// and the others on the workers, and returns when all are done. No call
// allocates. A call made while the pool is busy (from inside a body, or from
// a second thread) runs serially on its caller instead of waiting, so nested
// parallel loops cannot deadlock.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_SUPPORT_THREADPOOL_H
#define TRAINCC_RUNTIME_SUPPORT_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace traincc::rt {

using ParallelBody = void (*)(void *context, int64_t begin, int64_t end);

/// The bounds of chunk `index` of `chunks` near-equal chunks of [0, count).
inline void chunkBounds(int64_t count, int64_t chunks, int64_t index,
                        int64_t &begin, int64_t &end) {
  int64_t base = count / chunks, extra = count % chunks;
  begin = index * base + (index < extra ? index : extra);
  end = begin + base + (index < extra ? 1 : 0);
}

/// The number of threads --threads defaults to (at least 1).
int defaultThreadCount();

class ThreadPool {
public:
  /// A pool that runs loops on `threads` threads, the caller included
  /// (threads - 1 workers); threads < 1 counts as 1.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  /// Runs body(context, begin, end) over the chunks of [0, count).
  void parallelFor(int64_t count, void *context, ParallelBody body);

private:
  void workerLoop(int workerIndex);
  /// Runs chunks of the current job until none is left.
  void runChunks();

  std::vector<std::thread> workers_;
  /// Held by the thread that dispatches a job; try_lock failing means the
  /// pool is busy and the caller runs its loop serially.
  std::mutex dispatch_;

  // Workers that finish a job spin a little before they sleep, so that the
  // short loops generated code runs back to back do not pay a futex wake-up
  // each; the dispatcher only notifies when someone actually sleeps.
  std::mutex wakeMutex_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  uint64_t generation_ = 0; // guarded by wakeMutex_
  bool stopping_ = false;   // guarded by wakeMutex_
  int sleepingWorkers_ = 0; // guarded by wakeMutex_
  bool dispatcherWaiting_ = false; // guarded by wakeMutex_
  /// Copies of generation_/stopping_ and the busy count for lock-free
  /// spinning; written under wakeMutex_.
  std::atomic<uint64_t> publishedGeneration_{0};
  std::atomic<bool> publishedStopping_{false};
  std::atomic<int> busyWorkers_{0};

  // The current job; written before generation_ is bumped.
  int64_t count_ = 0;
  int64_t chunks_ = 0;
  void *context_ = nullptr;
  ParallelBody body_ = nullptr;
  std::atomic<int64_t> nextChunk_{0};
  std::atomic<int64_t> doneChunks_{0};
};

/// Makes `pool` the one traincc_parallel_for uses until destruction (then
/// the previous one is restored).
class ActiveThreadPool {
public:
  explicit ActiveThreadPool(ThreadPool &pool);
  ~ActiveThreadPool();
  ActiveThreadPool(const ActiveThreadPool &) = delete;
  ActiveThreadPool &operator=(const ActiveThreadPool &) = delete;

private:
  ThreadPool *previous_;
};

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_SUPPORT_THREADPOOL_H
