// Band Cholesky, band solve and strided inverse blocks (solve/band.hpp, src/solve/impl/band_*.hpp)
// against the long-double references (unblocked Cholesky, Gauss-Jordan inverse) and against the
// dense batched solves, on iCov-like matrices in wavelength-major order and on dense SPD matrices
// stored as full bands.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <kspecter/core/error.hpp>
#include <kspecter/solve/band.hpp>
#include <kspecter/solve/batched.hpp>
#include <random>
#include <string>
#include <vector>

#include "solve/impl/band/band_blocks.hpp"  // the GPU-shaped kernels, run on host teams
#include "solve/impl/band/band_cholesky.hpp"
#include "solve_reference.hpp"
#include "solve_test_util.hpp"

namespace {

namespace ref = kspecter::test::solve_ref;
namespace util = kspecter::test::solve_util;
namespace solve = kspecter::solve;
using mem = TEST_EXECSPACE::memory_space;
using LD = ref::LD;

// Position in the wavelength-major order of unknown u = slot * m + bin, and back.
struct Order {
  int nslots, m;
  int v_of(int u) const { return (u % m) * nslots + u / m; }
  int u_of(int v) const { return (v % nslots) * m + v / nslots; }
};

// The dense matrix in wavelength-major order (full storage).
std::vector<double> permuted(std::vector<double> const& a, Order o) {
  int const n = o.nslots * o.m;
  std::vector<double> p(a.size());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      p[std::size_t(i) * n + j] = a[std::size_t(o.u_of(i)) * n + o.u_of(j)];
  return p;
}

int half_bandwidth(std::vector<double> const& a, int n) {
  int b = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < i; ++j)
      if (a[std::size_t(i) * n + j] != 0.0) b = std::max(b, i - j);
  return b;
}

struct Packed {
  solve::BandBatch<mem> ab;
  Kokkos::View<int*, mem> half_width;  // band_half_width_wavelength_major of each matrix
};

Packed pack(std::vector<std::vector<double>> const& mats, Order o, int b) {
  int const n = o.nslots * o.m;
  auto dense = util::upload<TEST_EXECSPACE>(mats, n);
  Packed r{solve::BandBatch<mem>("ab", mats.size(), n, b + 1),
           Kokkos::View<int*, mem>("half_width", mats.size())};
  Kokkos::deep_copy(r.ab, std::nan(""));  // every entry must be written
  solve::band_half_width_wavelength_major(TEST_EXECSPACE(), dense, o.nslots, r.half_width);
  solve::pack_band_wavelength_major(TEST_EXECSPACE(), dense, o.nslots, r.ab);
  return r;
}

// iCov-like matrices made exactly symmetric from their lower triangle (what the solvers read).
std::vector<std::vector<double>> icov_batch(int nslots, int m, int nmat, std::uint64_t seed) {
  int const n = nslots * m;
  std::vector<std::vector<double>> a;
  for (int i = 0; i < nmat; ++i) {
    a.push_back(ref::icov_like(nslots, m, seed + i));
    for (int r = 0; r < n; ++r)
      for (int c = r + 1; c < n; ++c)
        a.back()[std::size_t(r) * n + c] = a.back()[std::size_t(c) * n + r];
  }
  return a;
}

// x = A⁻¹ y from the long-double Cholesky factor l of A.
std::vector<LD> ld_solve(std::vector<LD> const& l, int n, std::vector<double> const& y) {
  std::vector<LD> x(y.begin(), y.end());
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < i; ++k) x[i] -= l[std::size_t(i) * n + k] * x[k];
    x[i] /= l[std::size_t(i) * n + i];
  }
  for (int i = n - 1; i >= 0; --i) {
    for (int k = i + 1; k < n; ++k) x[i] -= l[std::size_t(k) * n + i] * x[k];
    x[i] /= l[std::size_t(i) * n + i];
  }
  return x;
}

TEST(TEST_CATEGORY, band_pack_places_every_entry_and_measures_the_band) {
  Order const o{7, 20};
  int const n = o.nslots * o.m;
  auto const a = icov_batch(o.nslots, o.m, 2, ref::fresh_seed());
  for (int extra : {0, 5}) {
    int const b = half_bandwidth(permuted(a[0], o), n) + extra;
    ASSERT_GT(b, 10);
    auto pk = pack(a, o, b);
    auto hab = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pk.ab);
    auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pk.half_width);
    for (int p = 0; p < 2; ++p) {
      auto const pa = permuted(a[p], o);
      EXPECT_EQ(hw(p), half_bandwidth(pa, n)) << "matrix " << p;
      int wrong = 0;
      for (int v = 0; v < n; ++v)
        for (int c = 0; c <= b; ++c) {
          int const col = v - b + c;
          double const want = col >= 0 ? pa[std::size_t(v) * n + col] : 0.0;
          wrong += hab(p, v, c) != want;
        }
      EXPECT_EQ(wrong, 0) << "matrix " << p << ", band " << b;
    }
  }
}

struct BandCase {
  int nslots, m, nmat;
  bool dense;  // a dense SPD matrix stored as a full band (b = n - 1)
};
class BandSolve : public ::testing::TestWithParam<BandCase> {};

TEST_P(BandSolve, cholesky_and_solve_match_long_double) {
  auto const [nslots, m, nmat, dense] = GetParam();
  Order const o{nslots, m};
  int const n = nslots * m;
  auto const seed = ref::fresh_seed();
  SCOPED_TRACE("n = " + std::to_string(n) + ", seed = " + std::to_string(seed));
  auto a = icov_batch(nslots, m, nmat, seed);
  if (dense)
    for (int p = 0; p < nmat; ++p) a[p] = ref::random_spd(n, seed + 100 + p);
  int b = 0;
  for (auto const& x : a) b = std::max(b, half_bandwidth(permuted(x, o), n));
  auto pk = pack(a, o, b);
  Kokkos::View<int*, mem> info("info", nmat);
  Kokkos::deep_copy(info, -7);
  TEST_EXECSPACE space;
  solve::band_cholesky(space, pk.ab, info);
  // Right-hand sides (in wavelength-major order).
  solve::VectorBatch<mem> x("x", nmat, n);
  auto hx = Kokkos::create_mirror_view(x);
  std::vector<std::vector<double>> rhs(nmat, std::vector<double>(n));
  for (int p = 0; p < nmat; ++p)
    for (int i = 0; i < n; ++i) rhs[p][i] = hx(p, i) = std::sin(0.37 * i + p) + 0.1;
  Kokkos::deep_copy(x, hx);
  solve::band_cholesky_solve(space, pk.ab, x);
  auto hab = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pk.ab);
  auto hi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
  Kokkos::deep_copy(hx, x);
  for (int p = 0; p < nmat; ++p) {
    ASSERT_EQ(hi(p), 0) << "matrix " << p;
    auto const pa = permuted(a[p], o);
    auto const l = ref::cholesky(pa, n);
    std::vector<double> got;
    std::vector<LD> want;
    for (int i = 0; i < n; ++i)
      for (int c = 0; c <= b; ++c) {
        int const j = i - b + c;
        if (j < 0) continue;
        got.push_back(hab(p, i, c));
        want.push_back(l[std::size_t(i) * n + j]);
      }
    EXPECT_LE(ref::rel_maxdiff(got, want), 1e-12) << "L of matrix " << p;
    auto const xs = ld_solve(l, n, rhs[p]);
    std::vector<double> gx(n);
    for (int i = 0; i < n; ++i) gx[i] = hx(p, i);
    EXPECT_LE(ref::rel_maxdiff(gx, xs), 1e-9) << "solution of matrix " << p;
  }
}

TEST_P(BandSolve, strided_blocks_match_gauss_jordan_and_the_dense_path) {
  auto const [nslots, m, nmat, dense] = GetParam();
  Order const o{nslots, m};
  int const n = nslots * m;
  auto const seed = ref::fresh_seed();
  SCOPED_TRACE("n = " + std::to_string(n) + ", seed = " + std::to_string(seed));
  auto a = icov_batch(nslots, m, nmat, seed);
  if (dense)
    for (int p = 0; p < nmat; ++p) a[p] = ref::random_spd(n, seed + 100 + p);
  int b = 0;
  for (auto const& x : a) b = std::max(b, half_bandwidth(permuted(x, o), n));
  auto pk = pack(a, o, b);
  Kokkos::View<int*, mem> info("info", nmat);
  TEST_EXECSPACE space;
  solve::band_cholesky(space, pk.ab, info);
  // Blocks: every slot but the first (as extraction's core fibers), then one identity.
  int const nblock = nslots;
  Kokkos::View<int**, Kokkos::LayoutRight, mem> slot("slot", nmat, nblock);
  auto hs = Kokkos::create_mirror_view(slot);
  for (int p = 0; p < nmat; ++p)
    for (int k = 0; k < nblock; ++k) hs(p, k) = k + 1 < nslots ? k + 1 : -1;
  Kokkos::deep_copy(slot, hs);
  solve::MatrixBatch<mem> c("c", nmat * nblock, m, m);
  Kokkos::deep_copy(c, std::nan(""));
  solve::band_strided_inverse_blocks(space, pk.ab, slot, nslots, c);
  // The dense path on the fiber-major matrices.
  auto dd = util::upload<TEST_EXECSPACE>(a, n);
  solve::BlockBatch<mem> cd("cd", nmat, nslots, m, m);
  solve::cholesky(space, dd, info);
  solve::inverse_diagonal_blocks(space, dd, cd);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
  auto hcd = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cd);
  for (int p = 0; p < nmat; ++p) {
    auto const inv = ref::inverse(a[p], n);
    for (int k = 0; k < nblock; ++k) {
      int const s = hs(p, k);
      std::vector<double> got, dense_got;
      std::vector<LD> want;
      int asym = 0, nan = 0;
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j) {
          double const g = hc(p * nblock + k, i, j);
          nan += std::isnan(g);
          asym += g != hc(p * nblock + k, j, i);
          got.push_back(g);
          if (s >= 0) {
            want.push_back(inv[std::size_t(s * m + i) * n + s * m + j]);
            dense_got.push_back(hcd(p, s, i, j));
          } else {
            want.push_back(i == j ? 1 : 0);
          }
        }
      EXPECT_EQ(nan, 0) << "matrix " << p << ", block " << k;
      EXPECT_EQ(asym, 0) << "matrix " << p << ", block " << k;
      EXPECT_LE(ref::rel_maxdiff(got, want), 1e-9) << "matrix " << p << ", block " << k;
      if (s >= 0)
        EXPECT_LE(ref::rel_maxdiff(got, dense_got), 1e-11) << "matrix " << p << ", block " << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(TEST_CATEGORY, BandSolve,
                         ::testing::Values(BandCase{7, 74, 2, false}, BandCase{6, 74, 1, false},
                                           BandCase{3, 9, 4, false}, BandCase{4, 10, 2, true}),
                         [](auto const& i) {
                           return "n" + std::to_string(i.param.nslots * i.param.m) +
                                  (i.param.dense ? "_dense" : "_icov");
                         });

// The GPU-shaped kernels (BandTuning::coalesce: paired rows; the blocks' rows of Z in groups
// with C in register tiles; the solve with the next row prefetched) run on any backend; on a host
// backend, with teams of one thread and (where the backend has them) of two, they are checked here
// against the long-double reference, so that a CPU-only CI covers them too: DESI's 7 slots of 74
// bins, and an odd block (the tiles' padding column) with groups that do not divide the rows.
template <int Team, int Rows = 4, int Tiles = (37 * 38 / 2 + Team - 1) / Team>
struct GpuShapedTune {
  static constexpr bool coalesce = true;
  static constexpr int factor_team_size = Team;
  static constexpr int factor_panel = 0, factor_panel_rows = 2;
  static constexpr int team_size = Team;
  // The solve's GPU path with one lane a matrix (a host's vector length), Team matrices a team.
  static constexpr int solve_entries = 80;  // every test band
  static constexpr int solve_lanes = 1, solve_team = Team, solve_ahead = 3;
  static constexpr int solve_teams_per_sm = 0;
  static constexpr int blocks_team_size = Team;
  static constexpr int rows = Rows;
  static constexpr int tiles = Tiles;
  static constexpr int blocks_teams_per_sm = 0;
  static constexpr bool dmma = false;
  static constexpr int dmma_warps = 1;
};

/// The GPU-shaped tuning with the factorisation by panels of P columns.
template <int P, int Team = 2>
struct PanelTune : GpuShapedTune<Team> {
  static constexpr int factor_panel = P;
};

/// A tuning with the factorisation a column at a time.
template <class Tune>
struct ColumnTune : Tune {
  static constexpr int factor_panel = 0;
};

template <class Tune>
void check_gpu_shaped(std::uint64_t seed, Order const o = {7, 74}) {
  int const n = o.nslots * o.m, m = o.m;
  SCOPED_TRACE(std::to_string(o.nslots) + " slots of " + std::to_string(m));
  auto const a = icov_batch(o.nslots, o.m, 2, seed);
  int b = 0;
  for (auto const& x : a) b = std::max(b, half_bandwidth(permuted(x, o), n));
  if constexpr (Tune::factor_panel > 0) {  // the panels' factors are the column kernel's
    auto p0 = pack(a, o, b), p1 = pack(a, o, b);
    Kokkos::View<int*, mem> info("info", 2);
    solve::detail::band_cholesky_impl<Tune>(TEST_EXECSPACE(), p0.ab, info);
    solve::detail::band_cholesky_impl<ColumnTune<Tune>>(TEST_EXECSPACE(), p1.ab, info);
    auto h0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p0.ab);
    auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p1.ab);
    std::size_t differ = 0;
    for (std::size_t e = 0; e < h0.size(); ++e) differ += h0.data()[e] != h1.data()[e];
    EXPECT_EQ(differ, 0u) << "the panel kernel's factors against the column kernel's";
  }
  auto pk = pack(a, o, b);
  TEST_EXECSPACE space;
  Kokkos::View<int*, mem> info("info", 2);
  solve::detail::band_cholesky_impl<Tune>(space, pk.ab, info);
  Kokkos::View<int**, Kokkos::LayoutRight, mem> slot("slot", 2, 2);
  auto hs = Kokkos::create_mirror_view(slot);
  hs(0, 0) = 3;
  hs(0, 1) = 1;
  hs(1, 0) = 3;
  hs(1, 1) = std::min(5, o.nslots - 1);  // the last slot of 5 (slot 5 would reach past n)
  Kokkos::deep_copy(slot, hs);
  solve::MatrixBatch<mem> c("c", 4, m, m);
  Kokkos::deep_copy(c, std::nan(""));
  solve::detail::band_strided_inverse_blocks_impl<Tune>(space, pk.ab, slot, o.nslots, c);
  // The solve (its prefetching GPU path) for y_i = cos(0.3 i + p).
  solve::VectorBatch<mem> x("x", 2, n);
  auto hx = Kokkos::create_mirror_view(x);
  for (int p = 0; p < 2; ++p)
    for (int i = 0; i < n; ++i) hx(p, i) = std::cos(0.3 * i + p);
  Kokkos::deep_copy(x, hx);
  solve::detail::band_cholesky_solve_impl<Tune>(space, pk.ab, x);
  Kokkos::deep_copy(hx, x);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
  auto hi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
  for (int p = 0; p < 2; ++p) {
    ASSERT_EQ(hi(p), 0);
    auto const l = ref::cholesky(permuted(a[p], o), n);
    std::vector<double> y(n), gx(n);
    for (int i = 0; i < n; ++i) {
      y[i] = std::cos(0.3 * i + p);
      gx[i] = hx(p, i);
    }
    EXPECT_LE(ref::rel_maxdiff(gx, ld_solve(l, n, y)), 1e-9)
        << "team " << Tune::team_size << ", solution of matrix " << p;
    for (int k = 0; k < 2; ++k) {
      int const sl = hs(p, k);
      std::vector<LD> want;  // columns of A⁻¹ at the block's indices
      std::vector<double> got;
      for (int q2 = 0; q2 < m; ++q2) {
        std::vector<double> e(n, 0.0);
        e[std::size_t(sl + o.nslots * q2)] = 1.0;
        auto const x = ld_solve(l, n, e);
        for (int q1 = 0; q1 < m; ++q1) {
          want.push_back(x[std::size_t(sl + o.nslots * q1)]);
          got.push_back(hc(p * 2 + k, q1, q2));
        }
      }
      EXPECT_LE(ref::rel_maxdiff(got, want), 1e-9)
          << "team " << Tune::team_size << ", matrix " << p << ", block " << k;
    }
  }
}

/// The backend's band tuning with the grouped blocks kernel, not the tensor-core one.
struct NoDmmaTune : solve::BandTuning<TEST_EXECSPACE> {
  static constexpr bool dmma = false;
};

/// One warp: D = A B by solve::detail::dmma_8x8x4 (A(i, k) = i + 10 k + 1, B(k, j) = 3 k - j / 2)
/// into d[8 i + j], and each lane's value 1.5 l from lane (l + 5) mod 32 into d[64 + l].
struct DmmaProbe {
  Kokkos::View<double*, mem> d;
  KOKKOS_INLINE_FUNCTION void operator()(
      Kokkos::TeamPolicy<TEST_EXECSPACE>::member_type const& t) const {
    int const lane = t.team_rank(), gid = lane / 4, tig = lane % 4;
    double d0 = 0.0, d1 = 0.0;
    solve::detail::dmma_8x8x4(d0, d1, gid + 10.0 * tig + 1, 3.0 * tig - 0.5 * gid);
    d(8 * gid + 2 * tig) = d0;
    d(8 * gid + 2 * tig + 1) = d1;
    d(64 + lane) = solve::detail::warp_value(1.5 * lane, (lane + 5) % 32);
  }
};

/// The tensor-core fragments against the host product (a GPU whose band tuning uses them).
void check_dmma_fragments() {
  Kokkos::View<double*, mem> d("d", 96);
  Kokkos::parallel_for("kspecter::test::dmma_probe", Kokkos::TeamPolicy<TEST_EXECSPACE>(1, 32),
                       DmmaProbe{d});
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      double want = 0;
      for (int k = 0; k < 4; ++k) want += (i + 10.0 * k + 1) * (3.0 * k - 0.5 * j);
      EXPECT_EQ(h(8 * i + j), want) << "D(" << i << ", " << j << ")";
    }
  for (int l = 0; l < 32; ++l) EXPECT_EQ(h(64 + l), 1.5 * ((l + 5) % 32)) << "lane " << l;
}

TEST(TEST_CATEGORY, band_gpu_shaped_kernels_match_long_double) {
  auto const seed = ref::fresh_seed();
  SCOPED_TRACE("seed = " + std::to_string(seed));
  if constexpr (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, mem>::accessible) {
    // A GPU: the backend's own tuning (on CUDA, the tensor-core blocks where the device has
    // them, their fragments checked first) on the same shapes, an odd block included, and
    // the grouped kernel beside it.
    if constexpr (solve::BandTuning<TEST_EXECSPACE>::dmma) check_dmma_fragments();
    check_gpu_shaped<solve::BandTuning<TEST_EXECSPACE>>(seed);
    check_gpu_shaped<solve::BandTuning<TEST_EXECSPACE>>(seed + 2, {6, 37});
    check_gpu_shaped<NoDmmaTune>(seed + 1);
    // Blocks wider than the tensor-core kernel takes and than one grouped launch's tiles hold.
    check_gpu_shaped<solve::BandTuning<TEST_EXECSPACE>>(seed + 3, {5, 98});
  } else {
    check_gpu_shaped<GpuShapedTune<1>>(seed);
    check_gpu_shaped<GpuShapedTune<1, 2>>(seed + 2, {6, 37});
    check_gpu_shaped<GpuShapedTune<1, 4, 100>>(seed + 3);  // C's 703 tiles over 8 launches
    using Policy = Kokkos::TeamPolicy<TEST_EXECSPACE>;
    int const most =
        Policy(TEST_EXECSPACE(), 1, 1)
            .team_size_max([](Policy::member_type const&) {}, Kokkos::ParallelForTag());
    if (most >= 2) check_gpu_shaped<GpuShapedTune<2>>(seed + 1);
    // The factorisation by panels, on the shapes the GPU runs.
    check_gpu_shaped<PanelTune<8, 1>>(seed);
    check_gpu_shaped<PanelTune<8, 1>>(seed + 2, {6, 37});
    check_gpu_shaped<PanelTune<8, 1>>(seed + 3, {5, 98});
    if (most >= 2) check_gpu_shaped<PanelTune<4>>(seed + 3, {5, 98});
  }
}

// A batch's band is as wide as its widest patch (extract's BandSolve), so a patch's factor may
// sit in a wider band whose extra diagonals are zeros. The solve must give the same bits there,
// or a frame's flux depends on its batching: the GPU path hands each thread the entries by
// their distance from the diagonal, so the zeros come last in every thread's sum.
template <class Tune>
void check_solve_ignores_band_width(std::uint64_t seed) {
  Order const o{7, 74};
  int const n = o.nslots * o.m, extra = 9;
  auto const a = icov_batch(o.nslots, o.m, 2, seed);
  int b = 0;
  for (auto const& x : a) b = std::max(b, half_bandwidth(permuted(x, o), n));
  ASSERT_LE(b + extra, Tune::solve_entries * Tune::solve_lanes) << "the lanes' reach";
  auto pk = pack(a, o, b);
  Kokkos::View<int*, mem> info("info", 2);
  solve::detail::band_cholesky_impl<Tune>(TEST_EXECSPACE(), pk.ab, info);
  auto narrow = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pk.ab);
  solve::BandBatch<mem> wide("wide", 2, n, b + extra + 1);
  auto hw = Kokkos::create_mirror_view(wide);
  Kokkos::deep_copy(hw, 0.0);
  for (int p = 0; p < 2; ++p)
    for (int i = 0; i < n; ++i)
      for (int c = 0; c <= b; ++c) hw(p, i, c + extra) = narrow(p, i, c);
  Kokkos::deep_copy(wide, hw);
  solve::VectorBatch<mem> x0("x0", 2, n), x1("x1", 2, n);
  auto hx = Kokkos::create_mirror_view(x0);
  for (int p = 0; p < 2; ++p)
    for (int i = 0; i < n; ++i) hx(p, i) = std::cos(0.7 * i + p);
  Kokkos::deep_copy(x0, hx);
  Kokkos::deep_copy(x1, hx);
  solve::detail::band_cholesky_solve_impl<Tune>(TEST_EXECSPACE(), pk.ab, x0);
  solve::detail::band_cholesky_solve_impl<Tune>(TEST_EXECSPACE(), wide, x1);
  auto h0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x0);
  auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x1);
  std::size_t differ = 0;
  for (int p = 0; p < 2; ++p)
    for (int i = 0; i < n; ++i) differ += h0(p, i) != h1(p, i);
  EXPECT_EQ(differ, 0u) << "team " << Tune::team_size << ": the solve in a band " << extra
                        << " diagonals wider";
}

TEST(TEST_CATEGORY, band_solve_gives_the_same_bits_in_a_wider_band) {
  auto const seed = ref::fresh_seed();
  SCOPED_TRACE("seed = " + std::to_string(seed));
  if constexpr (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, mem>::accessible) {
    check_solve_ignores_band_width<solve::BandTuning<TEST_EXECSPACE>>(seed);
  } else {
    check_solve_ignores_band_width<GpuShapedTune<1>>(seed);
    using Policy = Kokkos::TeamPolicy<TEST_EXECSPACE>;
    int const most =
        Policy(TEST_EXECSPACE(), 1, 1)
            .team_size_max([](Policy::member_type const&) {}, Kokkos::ParallelForTag());
    if (most >= 2) check_solve_ignores_band_width<GpuShapedTune<2>>(seed);
    if (most >= 4) check_solve_ignores_band_width<GpuShapedTune<4>>(seed);
  }
}

/// The host's tuning with a team of T threads, so that the GPU path runs on host teams.
template <int T>
struct HostLoopTune : solve::BandTuning<TEST_EXECSPACE> {
  static constexpr bool coalesce = false;
  static constexpr int factor_team_size = T;
  static constexpr int factor_panel = 0;
};

// The GPU factorisations do each entry's update as the host's loop, in the same order: the
// column kernel (a thread a pair of rows) and the panel kernel (a panel's columns, then the
// trailing triangle in 2 x 2 tiles). The factors must be the same bits, for every band width,
// panels that do not divide the rows, and rows outside the envelope (zero columns of L).
TEST(TEST_CATEGORY, band_cholesky_gpu_path_is_bitwise_the_host_loop) {
  std::uint64_t const seed = ref::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  int const n = 61, nmat = 3;
  for (int b : {0, 1, 2, 3, 7, 30, 60}) {
    int const w = b + 1;
    solve::BandBatch<mem> a0("a0", nmat, n, w), a1("a1", nmat, n, w), a2("a2", nmat, n, w),
        a3("a3", nmat, n, w), a4("a4", nmat, n, w), a5("a5", nmat, n, w), a6("a6", nmat, n, w);
    auto h = Kokkos::create_mirror_view(a0);
    for (int p = 0; p < nmat; ++p)
      for (int i = 0; i < n; ++i)
        for (int c = 0; c < w; ++c) {
          int const j = i - b + c;
          bool const outside = p == 1 && c < b / 2 && i % 5 == 0;  // an envelope to skip
          h(p, i, c) = j < 0 || outside ? 0.0 : (c == b ? 2.0 * w + u(rng) : u(rng));
        }
    solve::BandBatch<mem> const out[] = {a0, a1, a2, a3, a4, a5, a6};
    for (auto const& a : out) Kokkos::deep_copy(a, h);
    Kokkos::View<int*, mem> info("info", nmat);
    TEST_EXECSPACE space;
    solve::detail::band_cholesky_impl<HostLoopTune<1>>(space, a0, info);
    solve::detail::band_cholesky_impl<GpuShapedTune<2>>(space, a1, info);
    solve::detail::band_cholesky_impl<PanelTune<4>>(space, a2, info);
    solve::detail::band_cholesky_impl<PanelTune<3>>(space, a3, info);
    solve::detail::band_cholesky_impl<PanelTune<4, 1>>(space, a4, info);
    solve::detail::band_cholesky_impl<PanelTune<4, 128>>(space, a5, info);  // a GPU's team
    solve::detail::band_cholesky_impl<PanelTune<8, 128>>(space, a6, info);
    auto g0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a0);
    auto f = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
    for (int p = 0; p < nmat; ++p) EXPECT_EQ(f(p), 0) << "b = " << b;
    for (int t = 1; t < 7; ++t) {
      auto g = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out[t]);
      int differ = 0;
      for (int p = 0; p < nmat; ++p)
        for (int i = 0; i < n; ++i)
          for (int c = 0; c < w; ++c) differ += g0(p, i, c) != g(p, i, c);
      EXPECT_EQ(differ, 0) << "b = " << b << ", GPU shape " << t;
    }
  }
}

TEST(TEST_CATEGORY, band_cholesky_failure_gives_the_identity_and_its_pivot) {
  Order const o{3, 12};
  int const n = o.nslots * o.m;
  auto a = icov_batch(o.nslots, o.m, 2, ref::fresh_seed());
  // Matrix 1: unknown v = 17 (wavelength-major) gets a negative diagonal.
  int const bad = 17, ub = o.u_of(bad);
  a[1][std::size_t(ub) * n + ub] = -1.0;
  int const b = half_bandwidth(permuted(a[0], o), n);
  auto pk = pack(a, o, b);
  Kokkos::View<int*, mem> info("info", 2);
  TEST_EXECSPACE space;
  solve::band_cholesky(space, pk.ab, info);
  solve::VectorBatch<mem> x("x", 2, n);
  Kokkos::deep_copy(x, 2.5);
  solve::band_cholesky_solve(space, pk.ab, x);
  auto hi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
  auto hab = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pk.ab);
  auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  EXPECT_EQ(hi(0), 0);
  // The pivot of v = 17 is A(17, 17) minus a positive sum: negative, so it fails there.
  EXPECT_EQ(hi(1), bad + 1);
  int not_identity = 0, moved = 0;
  for (int i = 0; i < n; ++i) {
    for (int c = 0; c <= b; ++c) not_identity += hab(1, i, c) != (c == b ? 1.0 : 0.0);
    moved += hx(1, i) != 2.5;
  }
  EXPECT_EQ(not_identity, 0);
  EXPECT_EQ(moved, 0);
}

TEST(TEST_CATEGORY, band_blocks_reject_indices_beyond_the_matrix) {
  solve::BandBatch<mem> ab("ab", 1, 20, 4);
  Kokkos::View<int**, Kokkos::LayoutRight, mem> slot("slot", 1, 1);
  solve::MatrixBatch<mem> c("c", 1, 5, 5);
  EXPECT_THROW(solve::band_strided_inverse_blocks(TEST_EXECSPACE(), ab, slot, 5, c),
               kspecter::ParameterError);  // 5 indices of stride 5 reach 20
}

}  // namespace
