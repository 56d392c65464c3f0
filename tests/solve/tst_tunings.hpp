// The solve kernels under other launch shapes than this backend's default, so that the
// code paths a GPU takes (several threads per team with register-persistent micro-tiles,
// coalesced staging, column-parallel triangular inverse, one rotation chain per thread)
// and the portable host micro-kernel are exercised here too, against the same references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <kspecter/solve/batched.hpp>
#include <limits>
#include <random>
#include <vector>

#include "solve/impl/dense/cholesky.hpp"
#include "solve/impl/dense/inverse_blocks.hpp"
#include "solve/impl/eigen/inverse_sqrt.hpp"

#include "solve_reference.hpp"
#include "solve_test_util.hpp"

namespace {

namespace ref = kspecter::test::solve_ref;
namespace util = kspecter::test::solve_util;
namespace sd = kspecter::solve::detail;
using mem = TEST_EXECSPACE::memory_space;

/// GPU-shaped: 2 threads per team (what a 2-thread host pool can run), 32 x 16 micro-tiles
/// so that a 32 x 32 tile has 2 of them, one per thread (the GPU's persistent mode), and
/// every `coalesce` branch. The inverse square root staged, its rotations on slices of 2
/// columns in level-0 scratch, and rounds of 2 m rotations, so that a matrix takes several.
struct GpuLike {
  static constexpr int mr = 32, nr = 16, quantum = 32, pad = 1, block = 32, max_tile = 96;
  static constexpr int team_size = 2, eig_team_size = 2, eig_stage = 1024, eig_matrices = 1;
  static constexpr bool coalesce = true, host_simd = false, eig_staged = true;
  static constexpr int eig_chain_team = 2, eig_apply_cols = 2, eig_round = 2;
  static constexpr bool eig_finish_dmma = false;
  static constexpr int eig_finish_warps = 1, eig_finish_teams_per_sm = 1;
};

/// The host shape without the run-time dispatched SIMD kernels (the portable path), two
/// matrices a team (paired QL chains).
struct Portable {
  static constexpr int mr = 4, nr = 4, quantum = 16, pad = 0, block = 64, max_tile = 80;
  static constexpr int team_size = 1, eig_team_size = 1, eig_stage = 0, eig_matrices = 2;
  static constexpr bool coalesce = false, host_simd = false, eig_staged = false;
  static constexpr int eig_chain_team = 1, eig_apply_cols = 0, eig_round = 32;
};

/// This backend's tuning with the inverse square root staged, in rounds of 3 m rotations
/// and slices of 5 rows.
struct HostStaged : kspecter::solve::Tuning<TEST_EXECSPACE> {
  static constexpr bool eig_staged = true;
  static constexpr int eig_round = 3, eig_apply_cols = 5;
};

template <class Tune>
void check_chain(int nfiber, int m, int nmat) {
  int const n = nfiber * m;
  auto const seed = ref::fresh_seed();
  SCOPED_TRACE("nfiber = " + std::to_string(nfiber) + ", m = " + std::to_string(m) +
               ", seed = " + std::to_string(seed));
  std::vector<std::vector<double>> a;
  for (int b = 0; b < nmat; ++b) a.push_back(ref::random_spd(n, seed + b, 2e-2));
  a[0] = ref::icov_like(nfiber, m, seed);  // a row envelope, skipped by the kernels
  // One indefinite matrix in the middle of the batch.
  a[1][(n / 2) * n + n / 2] = -1.0;
  auto dev = util::upload<TEST_EXECSPACE>(a, n);
  Kokkos::View<int*, mem> info("info", nmat);
  kspecter::solve::VectorBatch<mem> y("y", nmat, n);
  Kokkos::deep_copy(y, 1.0);
  kspecter::solve::BlockBatch<mem> c("c", nmat, nfiber, m, m);
  TEST_EXECSPACE space;
  sd::cholesky_impl<Tune>(space, dev, info);
  auto hl = Kokkos::create_mirror(Kokkos::HostSpace(), dev);
  Kokkos::deep_copy(hl, dev);
  sd::cholesky_solve_impl<Tune>(space, dev, y);
  sd::inverse_diagonal_blocks_impl<Tune>(space, dev, c);
  kspecter::solve::MatrixBatch<mem> flat(c.data(), std::size_t(nmat) * nfiber, m, m);
  auto hc = Kokkos::create_mirror(Kokkos::HostSpace(), flat);
  Kokkos::deep_copy(hc, flat);
  kspecter::solve::InverseSqrtWorkspace<mem> work;
  sd::inverse_sqrt_impl<Tune>(space, flat, 1e-14, work);
  auto hq = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), flat);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  auto hi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
  EXPECT_GT(hi(1), 0);
  EXPECT_LE(hi(1), n / 2 + 1);
  for (int b = 0; b < nmat; ++b) {
    if (b == 1) continue;
    ASSERT_EQ(hi(b), 0) << "matrix " << b;
    auto const lr = ref::cholesky(a[b], n);
    auto const l = util::matrix(hl, b);
    std::vector<double> low(l.size(), 0.0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) low[i * n + j] = l[i * n + j];
    EXPECT_LE(ref::rel_maxdiff(low, lr), 1e-9) << "matrix " << b;
    // x = A⁻¹ 1 and the diagonal blocks of A⁻¹, from the reference inverse.
    auto const inv = ref::inverse(a[b], n);
    std::vector<ref::LD> x(n, 0.0L);
    std::vector<double> got(n);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) x[i] += inv[std::size_t(i) * n + j];
      got[i] = hy(b, i);
    }
    EXPECT_LE(ref::rel_maxdiff(got, x), 1e-9) << "matrix " << b;
    for (int f = 0; f < nfiber; ++f) {
      std::vector<ref::LD> cf(std::size_t(m) * m);
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j) cf[i * m + j] = inv[std::size_t(f * m + i) * n + f * m + j];
      auto const gc = util::matrix(hc, std::size_t(b) * nfiber + f);
      auto const gq = util::matrix(hq, std::size_t(b) * nfiber + f);
      EXPECT_LE(ref::rel_maxdiff(gc, cf), 1e-9) << "matrix " << b << ", block " << f;
      EXPECT_LE(ref::rel_maxdiff(gq, ref::inverse_sqrt(cf, m, 1e-14)), 1e-9)
          << "matrix " << b << ", block " << f;
    }
  }
}

/// inverse_sqrt_impl<Tune> on copies of `in` ([nmat][m][m]), back on the host; in `work`
/// where given, else in a workspace of its own.
template <class Tune>
std::vector<double> inverse_sqrt_with(std::vector<double> const& in, int nmat, int m,
                                      kspecter::solve::InverseSqrtWorkspace<mem>* work = nullptr) {
  kspecter::solve::MatrixBatch<mem> dev("c", nmat, m, m);
  auto h = Kokkos::create_mirror_view(dev);
  std::copy(in.begin(), in.end(), h.data());
  Kokkos::deep_copy(dev, h);
  kspecter::solve::InverseSqrtWorkspace<mem> own;
  sd::inverse_sqrt_impl<Tune>(TEST_EXECSPACE(), dev, 1e-14, work ? *work : own);
  Kokkos::deep_copy(h, dev);
  return {h.data(), h.data() + h.span()};
}

/// m eigenvalues from 1 down to 1 / kappa, evenly spaced in log.
std::vector<double> geometric_spectrum(int m, double kappa) {
  std::vector<double> w(m);
  for (int i = 0; i < m; ++i) w[i] = std::pow(kappa, -double(i) / (m - 1));
  return w;
}

// The staged inverse square root (the GPUs' kernels) runs the one kernel's QL chains, the
// same rotations, on a basis formed in another order (packed triangle, reflectors
// accumulated row by row): the same Q to rounding, and the same verdict on degenerate blocks
// (NaN, zero, negative definite: zeros).
TEST(TEST_CATEGORY, staged_inverse_sqrt_agrees_with_one_kernel) {
  int const m = 74, nmat = 7;
  double const kappa3 = 1e8;
  auto const seed = ref::fresh_seed();
  SCOPED_TRACE("seed = " + std::to_string(seed));
  std::vector<double> in;
  for (int b = 0; b < nmat; ++b) {
    auto a = b == 3 ? ref::with_spectrum(geometric_spectrum(m, kappa3), seed + b)
                    : ref::random_spd(m, seed + b, 1e-2);
    if (b == 1) a[5 * m + 9] = a[9 * m + 5] = std::nan("");
    if (b == 4) std::fill(a.begin(), a.end(), 0.0);
    if (b == 5) {
      std::fill(a.begin(), a.end(), 0.0);
      for (int i = 0; i < m; ++i) a[i * m + i] = -1.0 - i;
    }
    in.insert(in.end(), a.begin(), a.end());
  }
  auto const one = inverse_sqrt_with<kspecter::solve::Tuning<TEST_EXECSPACE>>(in, nmat, m);
  auto const staged = inverse_sqrt_with<HostStaged>(in, nmat, m);
  ASSERT_EQ(one.size(), staged.size());
  for (int b = 0; b < nmat; ++b) {
    std::vector<double> x(one.begin() + b * m * m, one.begin() + (b + 1) * m * m);
    std::vector<double> y(staged.begin() + b * m * m, staged.begin() + (b + 1) * m * m);
    // Matrix 3 is ill-conditioned on purpose (condition kappa3). Either path's smallest
    // eigenvalue is off by about m eps lambda_max, which moves lambda_min^(-1/2), and so the
    // largest entries, by half of m eps kappa3 relatively (1e-6 here); the others are
    // well-conditioned (shift 1e-2, condition below about 500).
    double const eps = std::numeric_limits<double>::epsilon();
    double const tol = b == 3 ? m * eps * kappa3 : 1e-12;
    EXPECT_LE(ref::rel_maxdiff(y, std::vector<ref::LD>(x.begin(), x.end())), tol) << "matrix " << b;
  }
  for (int b : {1, 4, 5})
    for (int k = 0; k < m * m; ++k) ASSERT_EQ(staged[std::size_t(b) * m * m + k], 0.0) << b;
  double sum = 0.0;
  for (int k = 0; k < m * m; ++k) sum += std::fabs(staged[k]);
  EXPECT_GT(sum, 0.0);
}

// A workspace kept from call to call (as the extraction keeps it): batches that grow it,
// and a smaller one in what a larger one left, give the bits of a fresh workspace.
TEST(TEST_CATEGORY, staged_inverse_sqrt_workspace_reused) {
  auto const seed = ref::fresh_seed();
  SCOPED_TRACE("seed = " + std::to_string(seed));
  kspecter::solve::InverseSqrtWorkspace<mem> work;
  std::size_t held = 0;
  int call = 0;
  for (auto [nmat, m] : {std::pair{2, 30}, std::pair{5, 30}, std::pair{3, 41}, std::pair{1, 30}}) {
    std::vector<double> in;
    for (int b = 0; b < nmat; ++b) {
      auto const a = ref::random_spd(m, seed + 10 * call + b, 1e-2);
      in.insert(in.end(), a.begin(), a.end());
    }
    auto const fresh = inverse_sqrt_with<HostStaged>(in, nmat, m);
    auto const reused = inverse_sqrt_with<HostStaged>(in, nmat, m, &work);
    EXPECT_EQ(reused, fresh) << nmat << " blocks of " << m;
    EXPECT_GE(work.doubles.extent(0), std::size_t(nmat) * m * m) << "call " << call;
    EXPECT_GE(work.doubles.extent(0), held) << "the workspace never shrinks";
    held = work.doubles.extent(0);
    ++call;
  }
}

TEST(TEST_CATEGORY, gpu_shaped_kernels_small_blocks) { check_chain<GpuLike>(3, 37, 3); }
TEST(TEST_CATEGORY, gpu_shaped_kernels_fiber_blocks) { check_chain<GpuLike>(2, 74, 3); }
TEST(TEST_CATEGORY, portable_kernels_fiber_blocks) { check_chain<Portable>(3, 74, 3); }

}  // namespace
