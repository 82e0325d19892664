//===- ErrorTest.cpp - Errors as values, shapes, number text --------------===//

#include "TestUtil.h"

#include "traincc/runtime/support/Tensor.h"

#include <cmath>
#include <memory>

using namespace traincc::rt;
using namespace traincc::rt::test;
using ::testing::HasSubstr;

// Tests success, failure and context prefixes.
TEST(ErrorTest, CarriesMessagesWithContext) {
  Error ok = Error::success();
  EXPECT_FALSE(ok.failed());
  EXPECT_FALSE(bool(std::move(ok).withContext("ignored")));
  Error err =
      makeError("expected ", 3, " values, got ", int64_t(-2), " and ", 0.5);
  ASSERT_TRUE(bool(err));
  EXPECT_EQ(err.message(), "expected 3 values, got -2 and 0.5");
  EXPECT_EQ(std::move(err).withContext("train-x.npy").message(),
            "train-x.npy: expected 3 values, got -2 and 0.5");
  EXPECT_TRUE(Error::failure("").failed());
}

// Tests that an Expected holds a value or an error, never neither.
TEST(ErrorTest, ExpectedHoldsValueOrError) {
  Expected<std::unique_ptr<int>> value = std::make_unique<int>(7);
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(**value, 7);
  EXPECT_FALSE(value.takeError().failed());
  std::unique_ptr<int> taken = value.take();
  EXPECT_EQ(*taken, 7);

  Expected<int> failed = makeError("boom");
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message(), "boom");
  EXPECT_EQ(failed.takeError().message(), "boom");
  // A success Error is not a value: the Expected reports the mistake.
  Expected<int> mistaken = Error::success();
  EXPECT_FALSE(mistaken.ok());
  EXPECT_THAT(mistaken.error().message(), HasSubstr("internal error"));
}

// Tests element counts with negative and overflowing dimensions.
TEST(ErrorTest, CountsElementsSafely) {
  EXPECT_EQ(*checkedElementCount({}), 1);
  EXPECT_EQ(*checkedElementCount({2, 0, INT64_MAX}), 0);
  EXPECT_EQ(*checkedElementCount({60000, 1, 28, 28}), 47040000);
  EXPECT_THAT(errorOf(checkedElementCount({2, -1})),
              HasSubstr("negative dimension -1 in shape [2,-1]"));
  EXPECT_THAT(errorOf(checkedElementCount({INT64_MAX, 2})),
              HasSubstr("shape [9223372036854775807,2] is too large"));
  EXPECT_THAT(errorOf(checkedElementCount({5, 5}, 24)), HasSubstr("too large"));
  EXPECT_EQ(*checkedElementCount({5, 5}, 25), 25);
}

// Tests shortest round-trip number text.
TEST(ErrorTest, FormatsDoubles) {
  EXPECT_EQ(formatDouble(0.1), "0.1");
  EXPECT_EQ(formatDouble(1e39), "1e+39");
  EXPECT_EQ(formatDouble(65536), "65536");
  EXPECT_EQ(formatDouble(-2.5), "-2.5");
  EXPECT_EQ(formatDouble(std::nan("")), "nan");
  EXPECT_EQ(formatDouble(-HUGE_VAL), "-inf");
  EXPECT_EQ(dtypeName(DType::UInt8), std::string("uint8"));
  EXPECT_EQ(dtypeSize(DType::Int64), 8);
}
