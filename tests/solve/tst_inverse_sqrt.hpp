// Symmetric inverse square roots against a long-double Jacobi reference: Q C Q = I, exact
// symmetry, the clipping rule on nearly singular and indefinite blocks, Q = 0 for garbage;
// and the whole chain cholesky -> inverse_diagonal_blocks -> inverse_sqrt on an iCov-like
// matrix of extraction's size.
#include <gtest/gtest.h>

#include <cmath>
#include <kspecter/core/error.hpp>
#include <kspecter/solve/batched.hpp>
#include <limits>
#include <random>
#include <vector>

#include "solve_reference.hpp"
#include "solve_test_util.hpp"

namespace {

namespace ref = kspecter::test::solve_ref;
namespace util = kspecter::test::solve_util;
using mem = TEST_EXECSPACE::memory_space;

// Runs inverse_sqrt on the batch and returns the results.
std::vector<std::vector<double>> run_inverse_sqrt(std::vector<std::vector<double>> const& cs, int m,
                                                  double rel_clip = 1e-14) {
  auto dev = util::upload<TEST_EXECSPACE>(cs, m);
  kspecter::solve::inverse_sqrt(TEST_EXECSPACE(), dev, rel_clip);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dev);
  std::vector<std::vector<double>> out;
  for (std::size_t b = 0; b < cs.size(); ++b) out.push_back(util::matrix(h, b));
  return out;
}

int asymmetric(std::vector<double> const& q, int m) {
  int count = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < i; ++j) count += q[i * m + j] != q[j * m + i];
  return count;
}

// max |Q C Q - I|
double qcq_error(std::vector<double> const& q, std::vector<double> const& c, int m) {
  std::vector<ref::LD> qc(std::size_t(m) * m, 0.0L);
  for (int i = 0; i < m; ++i)
    for (int k = 0; k < m; ++k)
      for (int j = 0; j < m; ++j) qc[i * m + j] += ref::LD(q[i * m + k]) * c[k * m + j];
  ref::LD err = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) {
      ref::LD s = i == j ? -1.0L : 0.0L;
      for (int k = 0; k < m; ++k) s += qc[i * m + k] * q[k * m + j];
      err = std::max<ref::LD>(err, std::fabs(s));
    }
  return double(err);
}

class InverseSqrt : public ::testing::TestWithParam<int> {};

TEST_P(InverseSqrt, random_spd_matches_jacobi) {
  int const m = GetParam();
  auto const seed = ref::fresh_seed();
  SCOPED_TRACE("m = " + std::to_string(m) + ", seed = " + std::to_string(seed));
  int const nmat = 4;
  std::vector<std::vector<double>> cs;
  for (int b = 0; b < nmat; ++b) cs.push_back(ref::random_spd(m, seed + b, 1e-2));
  auto const qs = run_inverse_sqrt(cs, m);
  for (int b = 0; b < nmat; ++b) {
    EXPECT_EQ(asymmetric(qs[b], m), 0) << "matrix " << b;
    EXPECT_LE(qcq_error(qs[b], cs[b], m), 1e-11) << "matrix " << b;
    std::vector<ref::LD> c(cs[b].begin(), cs[b].end());
    EXPECT_LE(ref::rel_maxdiff(qs[b], ref::inverse_sqrt(c, m, 1e-14)), 1e-11) << "matrix " << b;
  }
}

INSTANTIATE_TEST_SUITE_P(TEST_CATEGORY, InverseSqrt, ::testing::Values(1, 2, 3, 7, 37, 74, 100),
                         [](auto const& info) { return "m" + std::to_string(info.param); });

TEST(TEST_CATEGORY, inverse_sqrt_clips_small_and_negative_eigenvalues) {
  int const m = 74;
  auto const seed = ref::fresh_seed();
  SCOPED_TRACE("seed = " + std::to_string(seed));
  // 60 eigenvalues in [1e-6, 1]; the rest far below the floor 1e-14: tiny positive, zero,
  // negative (a covariance block spoiled by rounding, or a bad input).
  std::vector<double> lambda;
  for (int i = 0; i < 60; ++i) lambda.push_back(std::pow(10.0, -6.0 * i / 59));
  for (int i = 0; i < 9; ++i) lambda.push_back(std::pow(10.0, -17.0 - i));
  lambda.push_back(0.0);
  lambda.push_back(-1e-16);
  lambda.push_back(-1e-3);
  lambda.push_back(-0.5);
  lambda.push_back(-1e-20);
  ASSERT_EQ(int(lambda.size()), m);
  auto const c = ref::with_spectrum(lambda, seed);
  auto const q = run_inverse_sqrt({c}, m)[0];
  bool finite = true;
  for (double x : q) finite = finite && std::isfinite(x);
  EXPECT_TRUE(finite);
  EXPECT_EQ(asymmetric(q, m), 0);
  std::vector<ref::LD> cl(c.begin(), c.end());
  // Q has entries ~1e7 along the clipped subspace (floor^-1/2); that subspace is known to
  // ~eps/gap = 2e-10, hence the tolerance.
  EXPECT_LE(ref::rel_maxdiff(q, ref::inverse_sqrt(cl, m, 1e-14)), 1e-7);
  // A larger rel_clip gives a different, still finite Q.
  auto const q2 = run_inverse_sqrt({c}, m, 1e-8)[0];
  EXPECT_LE(ref::rel_maxdiff(q2, ref::inverse_sqrt(cl, m, 1e-8)), 1e-8);
}

TEST(TEST_CATEGORY, inverse_sqrt_degenerate_inputs) {
  int const m = 74;
  auto const seed = ref::fresh_seed();
  SCOPED_TRACE("seed = " + std::to_string(seed));
  std::vector<double> good = ref::random_spd(m, seed, 1e-2);
  std::vector<double> nan = good;
  nan[5 * m + 9] = nan[9 * m + 5] = std::nan("");
  std::vector<double> inf = good;
  inf[0] = std::numeric_limits<double>::infinity();
  std::vector<double> zero(std::size_t(m) * m, 0.0);
  std::vector<double> negdef(std::size_t(m) * m, 0.0);
  for (int i = 0; i < m; ++i) negdef[i * m + i] = -1.0 - i;
  std::vector<double> scaled_identity(std::size_t(m) * m, 0.0);
  for (int i = 0; i < m; ++i) scaled_identity[i * m + i] = 4.0;
  auto const qs = run_inverse_sqrt({nan, good, inf, zero, negdef, scaled_identity, good}, m);
  for (int b : {0, 2, 3, 4}) {
    bool all_zero = true;
    for (double x : qs[b]) all_zero = all_zero && x == 0.0;
    EXPECT_TRUE(all_zero) << "matrix " << b;
  }
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) EXPECT_NEAR(qs[5][i * m + j], i == j ? 0.5 : 0.0, 4e-16);
  EXPECT_LE(qcq_error(qs[1], good, m), 1e-11);
  for (std::size_t k = 0; k < qs[1].size(); ++k) ASSERT_EQ(qs[1][k], qs[6][k]) << k;
  EXPECT_THROW(run_inverse_sqrt({good}, m, 0.0), kspecter::ParameterError);
  EXPECT_THROW(run_inverse_sqrt({good}, m, 1.0), kspecter::ParameterError);
}

// A patch's results do not depend on the rest of its batch or on its place in it.
TEST(TEST_CATEGORY, chain_is_independent_of_batch_composition) {
  int const nfiber = 3, m = 37, n = nfiber * m;
  auto const seed = ref::fresh_seed();
  SCOPED_TRACE("seed = " + std::to_string(seed));
  auto const p0 = ref::icov_like(nfiber, m, seed);
  auto p1 = ref::icov_like(nfiber, m, seed + 1);
  for (auto& x : p1) x *= 1e6;  // a much brighter patch (larger eigenvalues of its C blocks)
  auto run = [&](std::vector<std::vector<double>> const& batch) {
    int const nmat = int(batch.size());
    auto dev = util::upload<TEST_EXECSPACE>(batch, n);
    Kokkos::View<int*, mem> info("info", nmat);
    kspecter::solve::VectorBatch<mem> y("y", nmat, n);
    Kokkos::deep_copy(y, 1.0);
    kspecter::solve::BlockBatch<mem> c("c", nmat, nfiber, m, m);
    TEST_EXECSPACE space;
    kspecter::solve::cholesky(space, dev, info);
    kspecter::solve::cholesky_solve(space, dev, y);
    kspecter::solve::inverse_diagonal_blocks(space, dev, c);
    kspecter::solve::inverse_sqrt(
        space, kspecter::solve::MatrixBatch<mem>(c.data(), std::size_t(nmat) * nfiber, m, m));
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    auto hq = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
    std::vector<std::vector<double>> out(nmat);
    for (int b = 0; b < nmat; ++b) {
      for (int i = 0; i < n; ++i) out[b].push_back(hy(b, i));
      for (int f = 0; f < nfiber; ++f)
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < m; ++j) out[b].push_back(hq(b, f, i, j));
    }
    return out;
  };
  auto const first = run({p0, p1});
  auto const second = run({p1, p0, p0});
  EXPECT_EQ(first[0], second[1]);
  EXPECT_EQ(first[0], second[2]);
  EXPECT_EQ(first[1], second[0]);
}

// The extraction chain on one iCov-like patch (7 fibers x 74 bins): the decorrelation
// blocks from Cholesky + inverse blocks + inverse sqrt equal the brute-force ones.
TEST(TEST_CATEGORY, chain_on_icov_like_patch) {
  int const nfiber = 7, m = 74, n = nfiber * m;
  auto const seed = ref::fresh_seed();
  SCOPED_TRACE("seed = " + std::to_string(seed));
  auto const a = ref::icov_like(nfiber, m, seed);
  auto dev = util::upload<TEST_EXECSPACE>({a}, n);
  Kokkos::View<int*, mem> info("info", 1);
  kspecter::solve::BlockBatch<mem> c("c", 1, nfiber, m, m);
  TEST_EXECSPACE space;
  kspecter::solve::cholesky(space, dev, info);
  kspecter::solve::inverse_diagonal_blocks(space, dev, c);
  auto flat = kspecter::solve::MatrixBatch<mem>(c.data(), nfiber, m, m);
  auto hc = Kokkos::create_mirror(Kokkos::HostSpace(), flat);  // a copy, even on the host
  Kokkos::deep_copy(hc, flat);
  kspecter::solve::inverse_sqrt(space, flat);
  auto hq = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), flat);
  auto hi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
  ASSERT_EQ(hi(0), 0);
  auto const inv = ref::inverse(a, n);
  for (int f = 0; f < nfiber; ++f) {
    std::vector<ref::LD> cf(std::size_t(m) * m);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j) cf[i * m + j] = inv[std::size_t(f * m + i) * n + f * m + j];
    auto const got_c = util::matrix(hc, f);
    auto const got_q = util::matrix(hq, f);
    EXPECT_LE(ref::rel_maxdiff(got_c, cf), 1e-9) << "fiber " << f;
    EXPECT_LE(ref::rel_maxdiff(got_q, ref::inverse_sqrt(cf, m, 1e-14)), 1e-9) << "fiber " << f;
    EXPECT_LE(qcq_error(got_q, got_c, m), 1e-9) << "fiber " << f;
  }
}

}  // namespace
