//===- DistributedTest.cpp - Data-parallel collectives and data slices ----===//
//
// The TCP ring (TcpCommunicator.cpp) with its replicas as threads of this
// process on loopback, and the sampler's slices of global micro-batches.
// MPI and whole runs are tested end to end (test/e2e/distributed).
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "traincc/runtime/data/Sampler.h"
#include "traincc/runtime/distributed/Communicator.h"
#include "traincc/runtime/distributed/DataParallel.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace traincc::rt;
using namespace traincc::rt::test;
using ::testing::HasSubstr;

namespace {

int freePort() {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr *>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  ::getsockname(s, reinterpret_cast<sockaddr *>(&address), &length);
  ::close(s);
  return ntohs(address.sin_port);
}

/// Runs body(rank, communicator) on `n` threads, each a replica of a ring.
template <typename Body> void onRing(int n, Body body) {
  const int port = freePort();
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank)
    threads.emplace_back([&, rank] {
      Expected<std::unique_ptr<Communicator>> ring =
          connectTcpRing(rank, n, "127.0.0.1", port, 20);
      ASSERT_TRUE(bool(ring)) << ring.error().message();
      body(rank, **ring);
      EXPECT_FALSE(bool((*ring)->finish()));
    });
  for (std::thread &t : threads)
    t.join();
}

// Tests that every replica gets the same sums, in one fixed order per
// chunk, for sizes below, at and above the replica count.
TEST(TcpRingTest, AllReduceSumsEverywhereAlike) {
  for (int n : {2, 3, 4}) {
    for (size_t count : {size_t(0), size_t(1), size_t(5), size_t(1001)}) {
      std::vector<std::vector<float>> results(static_cast<size_t>(n));
      onRing(n, [&](int rank, Communicator &ring) {
        std::vector<float> data(count);
        for (size_t i = 0; i < count; ++i)
          data[i] = float(i) * 0.1f + float(rank + 1) / 3.0f;
        EXPECT_FALSE(bool(ring.allReduceSum(data.data(), count, "test")));
        results[size_t(rank)] = data;
      });
      for (size_t i = 0; i < count; ++i) {
        double expected = 0;
        for (int r = 0; r < n; ++r)
          expected += double(float(i) * 0.1f + float(r + 1) / 3.0f);
        EXPECT_NEAR(results[0][i], expected, 1e-5 * (1 + expected));
        for (int r = 1; r < n; ++r)
          EXPECT_EQ(results[size_t(r)][i], results[0][i])
              << "replica " << r << " of " << n << ", element " << i;
      }
    }
  }
}

// Tests that a broadcast reaches every replica from any root.
TEST(TcpRingTest, BroadcastFromEveryRoot) {
  const int n = 3;
  onRing(n, [&](int rank, Communicator &ring) {
    EXPECT_EQ(ring.rank(), rank);
    EXPECT_EQ(ring.size(), n);
    for (int root = 0; root < n; ++root) {
      std::vector<uint8_t> data(300, uint8_t(rank));
      EXPECT_FALSE(bool(ring.broadcast(data.data(), data.size(), root, "t")));
      EXPECT_EQ(data, std::vector<uint8_t>(300, uint8_t(root)));
    }
  });
}

// Tests that a replica that goes away is an error for its neighbour, not
// a hang: rank 1 closes its sockets after one collective.
TEST(TcpRingTest, ClosedPeerIsAnError) {
  const int port = freePort();
  std::string error;
  std::thread rank0([&] {
    Expected<std::unique_ptr<Communicator>> ring =
        connectTcpRing(0, 2, "127.0.0.1", port, 20);
    ASSERT_TRUE(bool(ring)) << ring.error().message();
    float value = 1;
    EXPECT_FALSE(bool((*ring)->allReduceSum(&value, 1, "first")));
    Error err = (*ring)->allReduceSum(&value, 1, "second");
    error = err.message();
  });
  {
    Expected<std::unique_ptr<Communicator>> ring =
        connectTcpRing(1, 2, "127.0.0.1", port, 20);
    ASSERT_TRUE(bool(ring)) << ring.error().message();
    float value = 1;
    EXPECT_FALSE(bool((*ring)->allReduceSum(&value, 1, "first")));
  }
  rank0.join();
  EXPECT_EQ(error, "second: rank 1 closed the connection (it stopped or died)");
}

/// Two identical replicas whose all-reduces finish only when waited on
/// (as a slow network's would): each started range is doubled then, and
/// every event is recorded.
class DeferredPair final : public Communicator {
public:
  DeferredPair() : Communicator(0, 2) {}
  std::string description() const override { return "deferred pair"; }
  Error allReduceSum(float *data, size_t count, const char *) override {
    for (size_t i = 0; i < count; ++i)
      data[i] *= 2;
    return Error::success();
  }
  Expected<Request> startAllReduceSum(float *data, size_t count,
                                      const char *) override {
    events.push_back(strCat("start ", count));
    started.push_back({data, count});
    return Request(started.size() - 1);
  }
  Expected<bool> testRequest(Request id) override {
    return started[size_t(id)].second == 0; // done once waited on
  }
  Error waitRequest(Request id) override {
    auto &[data, count] = started[size_t(id)];
    events.push_back(strCat("wait ", count));
    Error err = allReduceSum(data, count, "");
    count = 0;
    return err;
  }
  Error broadcast(void *, size_t, int, const char *) override {
    return Error::success();
  }
  [[noreturn]] void abort(int code) override { std::_Exit(code); }
  Error finish() override { return Error::success(); }

  std::vector<std::string> events;
  std::vector<std::pair<float *, size_t>> started;
};

// Tests that bucketed all-reduces fill and start every bucket before
// waiting for the first (they are in flight together), drain each summed
// range in order, and sum every element once, for buckets that divide the
// data, do not, and exceed it.
TEST(GradientBucketsTest, StartEachBucketWhenFilled) {
  for (size_t bucket : {size_t(1), size_t(3), size_t(4), size_t(100)}) {
    const size_t count = 10;
    DeferredPair pair;
    std::vector<float> data(count, 0.f);
    std::vector<std::string> order;
    Error err = allReduceInBuckets(
        pair, data.data(), count, bucket,
        [&](size_t begin, size_t end) {
          order.push_back(strCat("fill ", begin, "-", end));
          for (size_t i = begin; i < end; ++i)
            data[i] = float(i);
        },
        [&](size_t begin, size_t end) {
          order.push_back(strCat("drain ", begin, "-", end));
        },
        "test");
    ASSERT_FALSE(bool(err)) << err.message();
    for (size_t i = 0; i < count; ++i)
      EXPECT_EQ(data[i], 2.f * float(i)) << "bucket " << bucket;
    size_t buckets = (count + bucket - 1) / bucket;
    ASSERT_EQ(order.size(), 2 * buckets);
    for (size_t b = 0; b < buckets; ++b) {
      size_t begin = b * bucket, end = std::min(count, begin + bucket);
      EXPECT_EQ(order[b], strCat("fill ", begin, "-", end));
      EXPECT_EQ(order[buckets + b], strCat("drain ", begin, "-", end));
    }
    EXPECT_EQ(pair.events.size(), 2 * buckets);
    EXPECT_EQ(pair.events[buckets - 1].rfind("start", 0), 0u)
        << "the last bucket starts before the first is waited on";
  }
}

// Tests that bucketed all-reduces over a real ring give every replica the
// same sums as one all-reduce of the whole vector would.
TEST(GradientBucketsTest, RingSumsInBuckets) {
  const int n = 3;
  const size_t count = 1000;
  std::vector<std::vector<float>> results(n);
  onRing(n, [&](int rank, Communicator &ring) {
    std::vector<float> data(count);
    EXPECT_FALSE(bool(allReduceInBuckets(
        ring, data.data(), count, 77,
        [&](size_t begin, size_t end) {
          for (size_t i = begin; i < end; ++i)
            data[i] = float(i) + float(rank);
        },
        [](size_t, size_t) {}, "test")));
    results[size_t(rank)] = data;
  });
  for (size_t i = 0; i < count; ++i) {
    EXPECT_EQ(results[0][i], 3.f * float(i) + 3.f);
    EXPECT_EQ(results[1][i], results[0][i]);
    EXPECT_EQ(results[2][i], results[0][i]);
  }
}

/// n samples [n,1] holding their index.
Dataset indexDataset(int64_t n) {
  FloatTensor x;
  x.shape = {n, 1};
  x.source = "x.npy";
  Int64Tensor y;
  y.shape = {n};
  y.source = "y.npy";
  for (int64_t i = 0; i < n; ++i) {
    x.data.push_back(float(i));
    y.data.push_back(i % 3);
  }
  Expected<Dataset> data = Dataset::withLabels(x, y, 3);
  EXPECT_TRUE(bool(data));
  return data.take();
}

/// Every micro-batch's sample indices, epoch by epoch.
std::vector<int64_t> visit(const SamplerOptions &options, int epochs) {
  Dataset data = indexDataset(53);
  Expected<TrainSampler> sampler = TrainSampler::create(data, options);
  EXPECT_TRUE(bool(sampler)) << (sampler ? "" : sampler.error().message());
  std::vector<int64_t> seen;
  MicroBatch batch = sampler->makeBatch();
  for (int e = 0; e < epochs; ++e) {
    while (true) {
      Expected<bool> more = sampler->next(batch);
      EXPECT_TRUE(bool(more));
      if (!more || !*more)
        break;
      seen.insert(seen.end(), batch.indices.begin(), batch.indices.end());
    }
    sampler->startNextEpoch();
  }
  return seen;
}

// Tests that R replicas of micro-batch B together visit, global micro-batch
// by global micro-batch, exactly what one sampler of micro-batch R x B
// visits with the same seed (shuffled, with prefetching and without).
TEST(ReplicaSlicesTest, SlicesMakeTheSingleProcessOrder) {
  for (bool prefetch : {true, false}) {
    const int64_t replicas = 3, batch = 4;
    SamplerOptions single;
    single.microBatch = replicas * batch;
    single.seed = 11;
    single.prefetch = prefetch;
    std::vector<int64_t> expected = visit(single, 2);
    // 53 samples: 4 global micro-batches of 12 per epoch.
    ASSERT_EQ(expected.size(), size_t(2 * 4 * 12));
    std::vector<std::vector<int64_t>> slices;
    for (int64_t r = 0; r < replicas; ++r) {
      SamplerOptions options = single;
      options.microBatch = batch;
      options.replicas = replicas;
      options.replica = r;
      slices.push_back(visit(options, 2));
      ASSERT_EQ(slices.back().size(), size_t(2 * 4 * batch));
    }
    std::vector<int64_t> merged;
    for (size_t g = 0; g < 2 * 4; ++g)
      for (int64_t r = 0; r < replicas; ++r)
        merged.insert(merged.end(), slices[size_t(r)].begin() + g * batch,
                      slices[size_t(r)].begin() + (g + 1) * batch);
    EXPECT_EQ(merged, expected);
  }
}

// Tests that a replica's loader state records the global micro-batch, so
// that a checkpoint resumes only with as many replicas.
TEST(ReplicaSlicesTest, ResumeNeedsTheSameGlobalBatch) {
  Dataset data = indexDataset(53);
  SamplerOptions two;
  two.microBatch = 4;
  two.replicas = 2;
  two.replica = 1;
  Expected<TrainSampler> written = TrainSampler::create(data, two);
  ASSERT_TRUE(bool(written));
  EXPECT_EQ(written->state().microBatch, 8u);
  SamplerOptions four = two;
  four.replicas = 4;
  Expected<TrainSampler> other = TrainSampler::create(data, four);
  ASSERT_TRUE(bool(other));
  Error err = other->restore(written->state());
  ASSERT_TRUE(bool(err));
  EXPECT_THAT(err.message(), HasSubstr("micro-batch 8, this run uses 16 "
                                       "(4 replicas x 4)"));
  SamplerOptions bad = two;
  bad.replica = 2;
  EXPECT_FALSE(bool(TrainSampler::create(data, bad)));
}

} // namespace
