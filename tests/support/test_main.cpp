// GoogleTest entry point with Kokkos brought up once for every backend of the build.
#include <kspecter/core/kokkos_compat.hpp>

#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Test discovery (--gtest_list_tests) reads stdout: bring up nothing that might print.
  if (::testing::GTEST_FLAG(list_tests)) return RUN_ALL_TESTS();
  kspecter::compat::initialize({});
  int const rc = RUN_ALL_TESTS();
  Kokkos::finalize();
  return rc;
}
