// GoogleTest entry point for MPI tests: MPI and Kokkos through kspecter's Environment; only
// rank 0 prints, and the exit code is non-zero if any rank failed.
#include <kspecter/parallel/environment.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int rc = 0;
  {
    kspecter::parallel::Environment env(argc, argv);
    if (env.rank() != 0) {
      auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
    }
    int const local = RUN_ALL_TESTS();
    MPI_Allreduce(&local, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  }
  return rc;
}
