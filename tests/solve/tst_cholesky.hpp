// Batched Cholesky and solve against a long-double unblocked reference: L Lᵀ = A, the
// factor itself, the untouched upper triangle, solve residuals, failures kept per matrix.
#include <gtest/gtest.h>

#include <cmath>
#include <kspecter/solve/batched.hpp>
#include <vector>

#include "solve_reference.hpp"
#include "solve_test_util.hpp"

namespace {

namespace ref = kspecter::test::solve_ref;
namespace util = kspecter::test::solve_util;
using mem = TEST_EXECSPACE::memory_space;

// Sizes around the block width (64) and the extraction sizes (74 per fiber, 444, 518).
struct CholCase {
  int n;
  int nmat;
};
class Cholesky : public ::testing::TestWithParam<CholCase> {};

TEST_P(Cholesky, reconstructs_and_matches_reference) {
  auto const [n, nmat] = GetParam();
  auto const seed = ref::fresh_seed();
  SCOPED_TRACE("n = " + std::to_string(n) + ", seed = " + std::to_string(seed));
  std::vector<std::vector<double>> a;
  for (int b = 0; b < nmat; ++b) a.push_back(ref::random_spd(n, seed + b));
  auto dev = util::upload<TEST_EXECSPACE>(a, n);
  Kokkos::View<int*, mem> info("info", nmat);
  Kokkos::deep_copy(info, -7);
  TEST_EXECSPACE space;
  kspecter::solve::cholesky(space, dev, info);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dev);
  auto hi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
  for (int b = 0; b < nmat; ++b) {
    ASSERT_EQ(hi(b), 0) << "matrix " << b;
    auto const l = util::matrix(h, b);
    // L Lᵀ = A from the lower triangle, relative to max |A|.
    double amax = 0, err = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) {
        ref::LD s = 0;
        for (int k = 0; k <= j; ++k) s += ref::LD(l[i * n + k]) * l[j * n + k];
        err = std::max(err, double(std::fabs(s - a[b][i * n + j])));
        amax = std::max(amax, std::fabs(a[b][i * n + j]));
      }
    EXPECT_LE(err / amax, 1e-12) << "matrix " << b;
    // The strict upper triangle is not touched.
    int changed = 0;
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) changed += l[i * n + j] != a[b][i * n + j];
    EXPECT_EQ(changed, 0) << "matrix " << b;
    if (b < 2) {  // the factor itself (cond(A) <~ 4e3 keeps it within 1e-9)
      auto const lr = ref::cholesky(a[b], n);
      std::vector<double> low(l.size(), 0.0);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j <= i; ++j) low[i * n + j] = l[i * n + j];
      EXPECT_LE(ref::rel_maxdiff(low, lr), 1e-9) << "matrix " << b;
    }
  }
}

TEST_P(Cholesky, solve_residual) {
  auto const [n, nmat] = GetParam();
  auto const seed = ref::fresh_seed();
  SCOPED_TRACE("n = " + std::to_string(n) + ", seed = " + std::to_string(seed));
  std::vector<std::vector<double>> a;
  for (int b = 0; b < nmat; ++b) a.push_back(ref::random_spd(n, seed + 17 * b));
  std::mt19937_64 gen(seed ^ 0x5eed);
  std::normal_distribution<double> nd;
  kspecter::solve::VectorBatch<mem> y("y", nmat, n);
  auto hy = Kokkos::create_mirror(Kokkos::HostSpace(), y);  // a copy, even on the host
  for (int b = 0; b < nmat; ++b)
    for (int i = 0; i < n; ++i) hy(b, i) = nd(gen);
  Kokkos::deep_copy(y, hy);
  auto dev = util::upload<TEST_EXECSPACE>(a, n);
  Kokkos::View<int*, mem> info("info", nmat);
  TEST_EXECSPACE space;
  kspecter::solve::cholesky(space, dev, info);
  kspecter::solve::cholesky_solve(space, dev, y);
  auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  for (int b = 0; b < nmat; ++b) {
    // Backward error: |A x - y| / (|A| |x| + |y|), max norms.
    ref::LD rmax = 0, amax = 0, xmax = 0, ymax = 0;
    for (int i = 0; i < n; ++i) {
      ref::LD s = -ref::LD(hy(b, i));
      for (int j = 0; j < n; ++j) {
        s += ref::LD(a[b][i * n + j]) * hx(b, j);
        amax = std::max<ref::LD>(amax, std::fabs(a[b][i * n + j]));
      }
      rmax = std::max<ref::LD>(rmax, std::fabs(s));
      xmax = std::max<ref::LD>(xmax, std::fabs(hx(b, i)));
      ymax = std::max<ref::LD>(ymax, std::fabs(hy(b, i)));
    }
    EXPECT_LE(double(rmax / (n * amax * xmax + ymax)), 1e-14) << "matrix " << b;
  }
}

INSTANTIATE_TEST_SUITE_P(TEST_CATEGORY, Cholesky,
                         ::testing::Values(CholCase{1, 3}, CholCase{5, 3}, CholCase{37, 4},
                                           CholCase{64, 2}, CholCase{65, 2}, CholCase{74, 3},
                                           CholCase{130, 3}, CholCase{444, 2}, CholCase{518, 2}),
                         [](auto const& info) { return "n" + std::to_string(info.param.n); });

// Matrices with a row envelope (leading zeros per row), which cholesky skips exactly:
// extraction's iCov-like pattern and a random staircase profile; L must be exactly zero
// left of each row's first nonzero and match the reference elsewhere.
TEST(TEST_CATEGORY, cholesky_exploits_row_envelope_exactly) {
  auto const seed = ref::fresh_seed();
  SCOPED_TRACE("seed = " + std::to_string(seed));
  std::vector<std::vector<double>> a;
  std::vector<int> sizes;
  a.push_back(ref::icov_like(7, 74, seed));
  sizes.push_back(518);
  {
    int const n = 300;
    std::mt19937_64 gen(seed + 1);
    std::uniform_int_distribution<int> bw(0, 120);
    std::normal_distribution<double> nd;
    std::vector<double> bm(std::size_t(n) * n, 0.0);
    for (int i = 0; i < n; ++i)
      for (int j = std::max(0, i - bw(gen)); j <= i; ++j) bm[i * n + j] = nd(gen);
    std::vector<double> m(std::size_t(n) * n, 0.0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) {
        ref::LD s = 0;
        for (int k = 0; k <= j; ++k) s += ref::LD(bm[i * n + k]) * bm[j * n + k];
        m[i * n + j] = m[j * n + i] = double(s) + (i == j ? 0.5 : 0.0);
      }
    a.push_back(m);
    sizes.push_back(n);
  }
  TEST_EXECSPACE space;
  for (std::size_t t = 0; t < a.size(); ++t) {
    int const n = sizes[t];
    auto dev = util::upload<TEST_EXECSPACE>({a[t]}, n);
    Kokkos::View<int*, mem> info("info", 1);
    kspecter::solve::cholesky(space, dev, info);
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dev);
    auto hi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
    ASSERT_EQ(hi(0), 0);
    auto const l = util::matrix(h, 0);
    auto const lr = ref::cholesky(a[t], n);
    std::vector<double> low(l.size(), 0.0);
    int nonzero_outside = 0, envelope_zeros = 0;
    for (int i = 0; i < n; ++i) {
      int first = 0;
      while (first < i && a[t][i * n + first] == 0.0) ++first;
      envelope_zeros += first;
      for (int j = 0; j <= i; ++j) {
        low[i * n + j] = l[i * n + j];
        if (j < first) nonzero_outside += l[i * n + j] != 0.0;
      }
    }
    EXPECT_GT(envelope_zeros, n * n / 8) << "the test matrix has a real envelope";
    EXPECT_EQ(nonzero_outside, 0) << "matrix " << t;
    EXPECT_LE(ref::rel_maxdiff(low, lr), 1e-9) << "matrix " << t;
  }
}

TEST(TEST_CATEGORY, cholesky_failure_stays_in_its_matrix) {
  int const n = 130;
  auto const seed = ref::fresh_seed();
  SCOPED_TRACE("seed = " + std::to_string(seed));
  std::vector<std::vector<double>> a;
  for (int b = 0; b < 5; ++b) a.push_back(ref::random_spd(n, seed + b));
  // Matrix 1: pivot 100 becomes -1 (the leading 101 x 101 block is indefinite).
  {
    auto const lr = ref::cholesky(a[1], n);
    a[1][100 * n + 100] -= double(lr[100 * n + 100] * lr[100 * n + 100]) + 1.0;
  }
  // Matrix 3: NaN in the first pivot. Matrix 4: zero pivot at 70 (a zero row and column).
  a[3][0] = std::nan("");
  for (int k = 0; k < n; ++k) a[4][70 * n + k] = a[4][k * n + 70] = 0.0;
  auto dev = util::upload<TEST_EXECSPACE>(a, n);
  Kokkos::View<int*, mem> info("info", 5);
  TEST_EXECSPACE space;
  kspecter::solve::cholesky(space, dev, info);
  auto hi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
  EXPECT_EQ(hi(0), 0);
  EXPECT_EQ(hi(1), 101);
  EXPECT_EQ(hi(2), 0);
  EXPECT_EQ(hi(3), 1);
  EXPECT_EQ(hi(4), 71);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dev);
  for (int b : {0, 2}) {
    auto const lr = ref::cholesky(a[b], n);
    auto const l = util::matrix(h, b);
    std::vector<double> low(l.size(), 0.0);
    bool finite = true;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) {
        low[i * n + j] = l[i * n + j];
        finite = finite && std::isfinite(l[i * n + j]);
      }
    EXPECT_TRUE(finite) << "matrix " << b;
    EXPECT_LE(ref::rel_maxdiff(low, lr), 1e-9) << "matrix " << b;
  }
}

}  // namespace
