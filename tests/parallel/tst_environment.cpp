// The MPI environment: ranks, node-local ranks and a collective that needs every rank.
#include <kspecter/parallel/environment.hpp>

#include <gtest/gtest.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

TEST(mpi, ranks_and_node_local_ranks_are_consistent) {
  int rank = -1, size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ASSERT_GE(size, 1);
  // Sum of ranks across the job is the closed form n(n-1)/2.
  int sum = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(sum, size * (size - 1) / 2);
  EXPECT_TRUE(Kokkos::is_initialized());
}

TEST(mpi, every_rank_runs_kernels) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double local = 0;
  Kokkos::parallel_reduce(
      "kspecter::test::mpi_reduce", Kokkos::RangePolicy<>(0, 1000),
      KOKKOS_LAMBDA(int i, double& acc) { acc += i + rank; }, local);
  double total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_DOUBLE_EQ(total, size * 499500.0 + 1000.0 * size * (size - 1) / 2);
}
