// Diagonal blocks of A⁻¹ from the batched Cholesky factor, against a long-double
// Gauss-Jordan inverse; exact symmetry of the blocks; n not a multiple of the tile.
#include <gtest/gtest.h>

#include <cmath>
#include <kspecter/core/error.hpp>
#include <kspecter/solve/batched.hpp>
#include <vector>

#include "solve_reference.hpp"
#include "solve_test_util.hpp"

namespace {

namespace ref = kspecter::test::solve_ref;
namespace util = kspecter::test::solve_util;
using mem = TEST_EXECSPACE::memory_space;

struct BlockCase {
  int m;
  int nblock;
  int nmat;
};
class InverseBlocks : public ::testing::TestWithParam<BlockCase> {};

TEST_P(InverseBlocks, match_gauss_jordan) {
  auto const [m, nblock, nmat] = GetParam();
  int const n = m * nblock;
  auto const seed = ref::fresh_seed();
  SCOPED_TRACE("m = " + std::to_string(m) + ", nblock = " + std::to_string(nblock) +
               ", seed = " + std::to_string(seed));
  std::vector<std::vector<double>> a;
  for (int b = 0; b < nmat; ++b) a.push_back(ref::random_spd(n, seed + b));
  auto dev = util::upload<TEST_EXECSPACE>(a, n);
  Kokkos::View<int*, mem> info("info", nmat);
  kspecter::solve::BlockBatch<mem> c("c", nmat, nblock, m, m);
  Kokkos::deep_copy(c, std::nan(""));  // every element must be written
  TEST_EXECSPACE space;
  kspecter::solve::cholesky(space, dev, info);
  kspecter::solve::inverse_diagonal_blocks(space, dev, c);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
  auto hi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
  for (int b = 0; b < nmat; ++b) {
    ASSERT_EQ(hi(b), 0);
    auto const inv = ref::inverse(a[b], n);
    for (int k = 0; k < nblock; ++k) {
      std::vector<ref::LD> want(std::size_t(m) * m);
      std::vector<double> got(std::size_t(m) * m);
      int asym = 0;
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j) {
          want[i * m + j] = inv[std::size_t(k * m + i) * n + k * m + j];
          got[i * m + j] = hc(b, k, i, j);
          asym += hc(b, k, i, j) != hc(b, k, j, i);
        }
      // cond(A) <~ 4e3: the inverse is good to ~1e-12 relative.
      EXPECT_LE(ref::rel_maxdiff(got, want), 1e-9) << "matrix " << b << ", block " << k;
      EXPECT_EQ(asym, 0) << "matrix " << b << ", block " << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(TEST_CATEGORY, InverseBlocks,
                         ::testing::Values(BlockCase{1, 1, 2}, BlockCase{5, 3, 3},
                                           BlockCase{37, 1, 3}, BlockCase{37, 2, 3},
                                           BlockCase{32, 4, 2}, BlockCase{74, 6, 1},
                                           BlockCase{74, 7, 1}),
                         [](auto const& info) {
                           return "m" + std::to_string(info.param.m) + "x" +
                                  std::to_string(info.param.nblock);
                         });

TEST(TEST_CATEGORY, inverse_blocks_rejects_blocks_that_do_not_tile) {
  kspecter::solve::MatrixBatch<mem> l("l", 1, 10, 10);
  kspecter::solve::BlockBatch<mem> c("c", 1, 3, 3, 3);
  EXPECT_THROW(kspecter::solve::inverse_diagonal_blocks(TEST_EXECSPACE(), l, c),
               kspecter::ParameterError);
}

}  // namespace
