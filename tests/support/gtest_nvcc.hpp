// GoogleTest's TEST and TEST_F with a public TestBody, for test code compiled by nvcc.
//
// nvcc rejects an extended __host__ __device__ lambda (KOKKOS_LAMBDA in a CUDA build, whatever
// the execution space) whose enclosing function is a private member, and gtest declares
// TestBody private. A CUDA build force-includes this header into every test source
// (tests/CMakeLists.txt), so tests may launch kernels straight from TEST bodies on every
// backend. Registration goes through ::testing::RegisterTest (public API since gtest 1.10);
// the factory returns the fixture type, so the suite's fixture id is the one gtest's own
// TEST / TEST_F would give, and mixing with the stock macros stays legal.
#pragma once

#include <gtest/gtest.h>

#if defined(__NVCC__)

#define KSPECTER_GTEST_CLASS_(suite, name) suite##_##name##_Test

#define KSPECTER_GTEST_PUBLIC_(suite, name, fixture)                                \
  class KSPECTER_GTEST_CLASS_(suite, name) : public fixture {                       \
   public:                                                                          \
    void TestBody() override;                                                       \
  };                                                                                \
  [[maybe_unused]] static ::testing::TestInfo* const suite##_##name##_registered_ = \
      ::testing::RegisterTest(                                                      \
          #suite, #name, nullptr, nullptr, __FILE__, __LINE__,                      \
          []() -> fixture* { return new KSPECTER_GTEST_CLASS_(suite, name); });     \
  void KSPECTER_GTEST_CLASS_(suite, name)::TestBody()

// One level of indirection so that TEST(TEST_CATEGORY, x) expands TEST_CATEGORY first.
#undef TEST
#define TEST(suite, name) KSPECTER_GTEST_PUBLIC_(suite, name, ::testing::Test)
#undef TEST_F
#define TEST_F(fixture, name) KSPECTER_GTEST_PUBLIC_(fixture, name, fixture)

#endif  // __NVCC__
