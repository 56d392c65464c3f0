// The band solve path (solve/band.hpp) against the dense one (solve/batched.hpp) on
// extraction's patch matrices: for a batch of iCov patches (n = 7 x 74), the dense path is
// cholesky + cholesky_solve + inverse_diagonal_blocks (all fiber blocks), the band path
// pack_band_wavelength_major + band_cholesky + band_cholesky_solve +
// band_strided_inverse_blocks (the core fibers' blocks only); inverse_sqrt of the core blocks
// is timed too (the decorrelation that follows either). Prints per-operation times
// (best / median of --reps, after one warm-up), flops (counted from the matrices' band and
// envelope) and the largest relative difference between the two paths' solutions and core
// covariance blocks.
//
//   bench_band [--icov FILE] [--nmat N] [--reps R] [--threads N] [--device D]
//
// --icov: patches written by perf/diag/icov_structure --dump (real r0 PSF), repeated over
// the batch; default: the iCov-like matrices of the solve tests (7 slots, core slots 1-5).
// --nmat: default 235 (one bundle) on the host, 4700 (one r frame) on a GPU.
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/solve/band.hpp>
#include <kspecter/solve/batched.hpp>

#include <icov_like.hpp>

#include "solve/impl/band/band_blocks.hpp"  // the kernels with other launch shapes
#include "solve/impl/band/band_cholesky.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

namespace {

namespace solve = kspecter::solve;
using Space = Kokkos::DefaultExecutionSpace;
using mem = Space::memory_space;

struct Patch {
  int nfib = 7, core = 1, ncore = 5;
  std::vector<double> a;  // n x n, fiber-major, full symmetric
};

struct Input {
  int n = 0, nslots = 0, m = 0;
  std::vector<Patch> patches;
};

Input read_dump(std::string const& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    std::fprintf(stderr, "bench_band: cannot read %s\n", path.c_str());
    std::exit(1);
  }
  std::int32_t hdr[4];
  Input in;
  if (std::fread(hdr, sizeof hdr, 1, f) != 1) std::exit(1);
  in.n = hdr[1];
  in.nslots = hdr[2];
  in.m = hdr[3];
  std::size_t const nn = std::size_t(in.n) * in.n;
  for (int k = 0; k < hdr[0]; ++k) {
    std::int32_t h[3];
    Patch p;
    p.a.resize(nn);
    std::vector<double> skip(2 * std::size_t(in.n));
    if (std::fread(h, sizeof h, 1, f) != 1 || std::fread(p.a.data(), 8, nn, f) != nn ||
        std::fread(skip.data(), 8, skip.size(), f) != skip.size()) {
      std::fprintf(stderr, "bench_band: %s is truncated\n", path.c_str());
      std::exit(1);
    }
    p.nfib = h[0];
    p.core = h[1];
    p.ncore = h[2];
    // The dump holds the lower triangle (as assembled) mirrored? Make it symmetric here.
    for (int i = 0; i < in.n; ++i)
      for (int j = i + 1; j < in.n; ++j)
        p.a[std::size_t(i) * in.n + j] = p.a[std::size_t(j) * in.n + i];
    in.patches.push_back(std::move(p));
  }
  std::fclose(f);
  return in;
}

Input icov_like_input() {
  Input in;
  in.nslots = 7;
  in.m = 74;
  in.n = in.nslots * in.m;
  for (int d = 0; d < 8; ++d)
    in.patches.push_back({7, 1, 5, kspecter::test::icov_like(7, 74, 1234u + d)});
  return in;
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

struct Timing {
  std::vector<double> wall, cpu;
  void add(double w, double c) {
    wall.push_back(w);
    cpu.push_back(c);
  }
  double best() const { return *std::min_element(wall.begin(), wall.end()); }
  double median() const {
    auto v = wall;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }
  double cpu_best() const { return *std::min_element(cpu.begin(), cpu.end()); }
};

template <class F>
void timed(Space const& space, Timing* t, bool record, F&& f) {
  space.fence();
  double const c0 = process_cpu_seconds();
  auto const t0 = std::chrono::steady_clock::now();
  f();
  space.fence();
  double const w = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (record) t->add(w, process_cpu_seconds() - c0);
}

/// The backend's band tuning with other launch shapes: threads a team of band_cholesky; of
/// band_strided_inverse_blocks, threads a team, rows of Z a group, C tiles a thread and the
/// launch bound (teams an SM).
template <int CholTeam, int BlocksTeam = solve::BandTuning<Space>::blocks_team_size,
          int Rows = solve::BandTuning<Space>::rows, int Tiles = solve::BandTuning<Space>::tiles,
          int PerSm = solve::BandTuning<Space>::blocks_teams_per_sm,
          bool Dmma = solve::BandTuning<Space>::dmma>
struct Shape : solve::BandTuning<Space> {
  static constexpr int factor_team_size = CholTeam, blocks_team_size = BlocksTeam, rows = Rows,
                       tiles = Tiles, blocks_teams_per_sm = PerSm;
  static constexpr bool dmma = Dmma;
};

/// The backend's band tuning with band_strided_inverse_blocks on the tensor cores or not
/// (BandTuning::dmma), and with Warps warps a team when it is.
template <bool Dmma, int Warps = solve::BandTuning<Space>::dmma_warps,
          int Teams = solve::BandTuning<Space>::dmma_teams_per_sm>
struct DmmaShape : solve::BandTuning<Space> {
  static constexpr bool dmma = Dmma;
  static constexpr int dmma_warps = Warps, dmma_teams_per_sm = Teams;
};

/// One row of the launch-shape table: band_cholesky and band_strided_inverse_blocks with
/// Tune, best of reps, and the largest relative difference of the blocks from `ref`.
template <class Tune>
void shape_row(char const* name, Space const& space, solve::BandBatch<mem> pristine,
               solve::BandBatch<mem> ab, Kokkos::View<int**, Kokkos::LayoutRight, mem> slot, int ns,
               solve::MatrixBatch<mem> out, std::vector<double> const& ref, int reps) {
  Kokkos::View<int*, mem> info("info", ab.extent(0));
  Timing chol, blocks;
  for (int r = 0; r < reps + 1; ++r) {
    Kokkos::deep_copy(space, ab, pristine);
    timed(space, &chol, r > 0, [&] { solve::detail::band_cholesky_impl<Tune>(space, ab, info); });
    timed(space, &blocks, r > 0,
          [&] { solve::detail::band_strided_inverse_blocks_impl<Tune>(space, ab, slot, ns, out); });
  }
  auto const h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  double diff = 0, scale = 0;
  for (std::size_t k = 0; k < ref.size(); ++k) {
    diff = std::max(diff, std::fabs(h.data()[k] - ref[k]));
    scale = std::max(scale, std::fabs(ref[k]));
  }
  std::printf("%-34s %5d %5d %4d %5d %5d %10.5f %10.5f %12.2e\n", name, Tune::factor_team_size,
              Tune::blocks_team_size, Tune::rows, Tune::tiles, Tune::blocks_teams_per_sm,
              chol.best(), blocks.best(), diff / scale);
}

/// The backend's band tuning with another launch shape of band_cholesky_solve's GPU path:
/// matrices a team, rows loaded ahead, teams an SM (launch bound).
template <int Team, int Ahead, int PerSm>
struct SolveShape : solve::BandTuning<Space> {
  static constexpr int solve_team = Team, solve_ahead = Ahead, solve_teams_per_sm = PerSm;
};

/// One row of the solve's launch-shape table: best of reps on the factors in `l`, and the
/// largest relative difference from `ref` (the dense path's x, fiber-major).
template <class Tune>
void solve_row(Space const& space, solve::BandBatch<mem> l, solve::VectorBatch<mem> y0w,
               std::vector<double> const& ref, int ns, int m, int reps) {
  solve::VectorBatch<mem> x("x", y0w.extent(0), y0w.extent(1));
  Timing t;
  for (int r = 0; r < reps + 1; ++r) {
    Kokkos::deep_copy(space, x, y0w);
    timed(space, &t, r > 0, [&] { solve::detail::band_cholesky_solve_impl<Tune>(space, l, x); });
  }
  auto const h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  int const n = int(x.extent(1));
  double diff = 0, scale = 0;
  for (std::size_t p = 0; p < x.extent(0); ++p)
    for (int u = 0; u < n; ++u) {
      double const r = ref[p * n + u];
      diff = std::max(diff, std::fabs(h(p, (u % m) * ns + u / m) - r));
      scale = std::max(scale, std::fabs(r));
    }
  std::printf(
      "solve: %d matrices a team, %d rows ahead, %2d teams/SM %10.5f s  max rel diff %.2e\n",
      Tune::solve_team, Tune::solve_ahead, Tune::solve_teams_per_sm, t.best(), diff / scale);
}

}  // namespace

int main(int argc, char** argv) {
  bool const host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, mem>::accessible;
  std::string icov;
  int nmat = -1, reps = 5;
  kspecter::compat::InitOptions opt;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string const k = argv[i], v = argv[i + 1];
    if (k == "--icov")
      icov = v;
    else if (k == "--nmat")
      nmat = std::atoi(v.c_str());
    else if (k == "--reps")
      reps = std::max(1, std::atoi(v.c_str()));
    else if (k == "--threads")
      opt.num_threads = std::atoi(v.c_str());
    else if (k == "--device")
      opt.device_id = std::atoi(v.c_str());
    else {
      std::fprintf(
          stderr,
          "usage: bench_band [--icov FILE] [--nmat N] [--reps R] [--threads N] [--device D]\n");
      return 2;
    }
  }
  kspecter::compat::initialize(opt);
  {
    Space space;
    Input const in = icov.empty() ? icov_like_input() : read_dump(icov);
    int const n = in.n, ns = in.nslots, m = in.m;
    if (nmat < 0) nmat = host ? 235 : 4700;
    int const ncs = 5;  // core blocks per patch (DESI: 5 of the 7 fibers)
    auto u_of = [&](int v) { return (v % ns) * m + v / ns; };

    // Half-bandwidth in wavelength-major order, and the flops of each path (from the matrices).
    int b = 0;
    double f_chol_band = 0, f_blocks_band = 0, f_chol_env = 0;
    for (auto const& p : in.patches) {
      std::vector<int> first(n), firstf(n);
      for (int v = 0; v < n; ++v) {
        first[v] = v;
        for (int c = 0; c < v; ++c)
          if (p.a[std::size_t(u_of(v)) * n + u_of(c)] != 0.0) {
            first[v] = c;
            break;
          }
        b = std::max(b, v - first[v]);
        firstf[v] = v;
        for (int c = 0; c < v; ++c)
          if (p.a[std::size_t(v) * n + c] != 0.0) {
            firstf[v] = c;
            break;
          }
      }
      double fc = 0, fe = 0;
      for (int v = 0; v < n; ++v) {
        fc += double(v - first[v]) * (v - first[v]);  // ~ right-looking updates, 2 flops each / 2
        fe += double(v - firstf[v]) * (v - firstf[v]);
      }
      f_chol_band += fc / in.patches.size();
      f_chol_env += fe / in.patches.size();
      double fb = 0;
      for (int k = 0; k < p.ncore; ++k) {
        int const s = p.core + k;
        for (int r = s; r < n; ++r) {
          double const q = std::min(m - 1, (r - s) / ns) + 1;  // started columns
          fb += 2 * q * std::min(b, r - s) + q * (q + 1);      // substitution + Gram
        }
      }
      f_blocks_band += fb / in.patches.size();
    }
    int const w = b + 1;
    std::printf(
        "bench_band: %s, concurrency %d, %d matrices of n = %d (%d slots x %d), %zu distinct "
        "(%s), half-bandwidth %d (wavelength-major), %d reps\n",
        Space::name(), Space().concurrency(), nmat, n, ns, m, in.patches.size(),
        icov.empty() ? "icov_like" : icov.c_str(), b, reps);

    solve::MatrixBatch<mem> pristine("pristine", nmat, n, n);
    Kokkos::View<int**, Kokkos::LayoutRight, mem> slot("slot", nmat, ncs);
    Kokkos::View<int*, mem> gather_slot("gather_slot", std::size_t(nmat) * ncs);
    {
      auto h = Kokkos::create_mirror_view(pristine);
      auto hs = Kokkos::create_mirror_view(slot);
      for (int p = 0; p < nmat; ++p) {
        auto const& pa = in.patches[std::size_t(p) % in.patches.size()];
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < n; ++j) h(p, i, j) = pa.a[std::size_t(i) * n + j];
        for (int k = 0; k < ncs; ++k) hs(p, k) = k < pa.ncore ? pa.core + k : -1;
      }
      Kokkos::deep_copy(pristine, h);
      Kokkos::deep_copy(slot, hs);
    }
    solve::VectorBatch<mem> y0("y0", nmat, n), y0w("y0w", nmat, n);
    Kokkos::parallel_for(
        "bench_band::rhs", Kokkos::RangePolicy<Space>(space, 0, nmat * n), KOKKOS_LAMBDA(int e) {
          int const p = e / n, u = e % n;
          double const v = 1.0 + 0.25 * kspecter::compat::sin(0.37 * u + p);
          y0(p, u) = v;
          y0w(p, (u % m) * ns + u / m) = v;
        });

    solve::MatrixBatch<mem> a("a", nmat, n, n);
    solve::VectorBatch<mem> y("y", nmat, n), yw("yw", nmat, n);
    solve::BlockBatch<mem> c("c", nmat, ns, m, m);
    solve::MatrixBatch<mem> core_dense("core_dense", std::size_t(nmat) * ncs, m, m);
    solve::MatrixBatch<mem> core_band("core_band", std::size_t(nmat) * ncs, m, m);
    solve::BandBatch<mem> ab("ab", nmat, n, w);
    Kokkos::View<int*, mem> info("info", nmat), info_b("info_b", nmat), hw("hw", nmat);

    Timing d_chol, d_solve, d_blocks, d_gather, b_pack, b_chol, b_solve, b_blocks, sqrt_t;
    for (int r = 0; r < reps + 1; ++r) {
      bool const rec = r > 0;  // the first round warms up
      Kokkos::deep_copy(space, a, pristine);
      Kokkos::deep_copy(space, y, y0);
      Kokkos::deep_copy(space, yw, y0w);
      timed(space, &d_chol, rec, [&] { solve::cholesky(space, a, info); });
      timed(space, &d_solve, rec, [&] { solve::cholesky_solve(space, a, y); });
      timed(space, &d_blocks, rec, [&] { solve::inverse_diagonal_blocks(space, a, c); });
      timed(space, &d_gather, rec, [&] {
        Kokkos::parallel_for(
            "bench_band::gather", Kokkos::RangePolicy<Space>(space, 0, nmat * ncs * m * m),
            KOKKOS_LAMBDA(long e) {
              int const pk = int(e / (m * m)), rc = int(e % (m * m));
              int const p = pk / ncs, k = pk % ncs, s = slot(p, k);
              core_dense(pk, rc / m, rc % m) =
                  s >= 0 ? c(p, s, rc / m, rc % m) : (rc / m == rc % m ? 1.0 : 0.0);
            });
      });
      timed(space, &b_pack, rec, [&] {
        solve::band_half_width_wavelength_major(space, pristine, ns, hw);
        solve::pack_band_wavelength_major(space, pristine, ns, ab);
      });
      timed(space, &b_chol, rec, [&] { solve::band_cholesky(space, ab, info_b); });
      timed(space, &b_solve, rec, [&] { solve::band_cholesky_solve(space, ab, yw); });
      timed(space, &b_blocks, rec,
            [&] { solve::band_strided_inverse_blocks(space, ab, slot, ns, core_band); });
      timed(space, &sqrt_t, rec, [&] { solve::inverse_sqrt(space, core_band); });
    }

    // The two paths' answers (core_band now holds Q; recompute its C for the comparison).
    solve::band_strided_inverse_blocks(space, ab, slot, ns, core_band);
    auto hcd = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), core_dense);
    auto hcb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), core_band);
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    auto hyw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), yw);
    auto hi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
    auto hib = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info_b);
    auto hout = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), hw);
    double dc = 0, dx = 0;
    int failed = 0, lost = 0;
    for (int p = 0; p < nmat; ++p) {
      failed += (hi(p) != 0) + (hib(p) != 0);
      lost += hout(p) > b;
      double num = 0, den = 0;
      for (int k = 0; k < ncs; ++k)
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < m; ++j) {
            num = std::max(num, std::fabs(hcb(p * ncs + k, i, j) - hcd(p * ncs + k, i, j)));
            den = std::max(den, std::fabs(hcd(p * ncs + k, i, j)));
          }
      dc = std::max(dc, num / den);
      num = den = 0;
      for (int u = 0; u < n; ++u) {
        num = std::max(num, std::fabs(hyw(p, (u % m) * ns + u / m) - hy(p, u)));
        den = std::max(den, std::fabs(hy(p, u)));
      }
      dx = std::max(dx, num / den);
    }
    std::printf(
        "check: %d failed factorisations, %d matrices wider than the band; band vs dense: max rel "
        "diff "
        "of x %.2e, of the core C blocks %.2e\n",
        failed, lost, dx, dc);

    double const dn = n, dm = m;
    double gram = 0;
    for (int k = 0; k < ns; ++k) gram += 2.0 * dm * dm * (dn - k * dm);
    double const nth = host ? Space().concurrency() : 1;
    struct Row {
      char const* name;
      Timing const* t;
      double flops;  // per patch: the work the kernel does (not dense-equivalent)
    } const rows[] = {
        {"dense cholesky (envelope)", &d_chol, f_chol_env},
        {"dense cholesky_solve", &d_solve, 2 * dn * dn},
        {"dense inverse_blocks", &d_blocks, dn * dn * dn / 3 + gram},
        {"dense gather core blocks", &d_gather, 0},
        {"band width + pack (dense->band)", &b_pack, 0},
        {"band cholesky", &b_chol, f_chol_band},
        {"band cholesky_solve", &b_solve, 4.0 * dn * b},
        {"band strided blocks (core)", &b_blocks, f_blocks_band},
        {"inverse_sqrt (core blocks)", &sqrt_t, ncs * 11.0 * dm * dm * dm},
    };
    std::printf("%-30s %10s %10s %9s %12s %14s\n", "operation", "best [s]", "median [s]", "GFLOP/s",
                "us/patch", "cpu/thread [s]");
    for (auto const& row : rows)
      std::printf("%-30s %10.5f %10.5f %9.1f %12.2f %14.5f\n", row.name, row.t->best(),
                  row.t->median(), row.flops * nmat / row.t->best() * 1e-9,
                  row.t->best() / nmat * 1e6, row.t->cpu_best() / nth);
    double const dense = d_chol.best() + d_solve.best() + d_blocks.best() + d_gather.best();
    double const band = b_chol.best() + b_solve.best() + b_blocks.best();
    std::printf(
        "factorisation + solve + core covariance blocks: dense %.5f s, band %.5f s (+ pack %.5f s "
        "while assembly writes dense), ratio %.1f\n",
        dense, band, b_pack.best(), dense / band);
    if (!host) {  // launch shapes of the band kernels, against the backend's own blocks
      solve::BandBatch<mem> packed("packed", nmat, n, w);
      solve::band_half_width_wavelength_major(space, pristine, ns, hw);
      solve::pack_band_wavelength_major(space, pristine, ns, packed);
      std::vector<double> ref(hcb.data(), hcb.data() + hcb.span());
      std::printf("%-34s %5s %5s %4s %5s %5s %10s %10s %12s\n", "band launch shape", "chol", "team",
                  "rows", "tiles", "perSM", "chol [s]", "blocks [s]", "max rel diff");
      using B = solve::BandTuning<Space>;
      auto const row = [&](auto tune, char const* name) {
        shape_row<decltype(tune)>(name, space, packed, ab, slot, ns, core_band, ref, reps);
      };
      row(Shape<B::factor_team_size>{}, "backend tuning");
      row(Shape<32>{}, "cholesky: 1 warp");
      row(Shape<64>{}, "cholesky: 2 warps");
      using NoBound = Shape<B::factor_team_size, B::blocks_team_size, B::rows, B::tiles, 0>;
      row(NoBound{}, "blocks: no launch bound");
      row(Shape<B::factor_team_size, B::blocks_team_size, 2, B::tiles, B::blocks_teams_per_sm,
                false>{},
          "blocks: grouped, 2 rows a group");
      std::vector<double> xref(hy.data(), hy.data() + hy.span());
      solve_row<SolveShape<B::solve_team, B::solve_ahead, B::solve_teams_per_sm>>(
          space, ab, y0w, xref, ns, m, reps);
      solve_row<SolveShape<4, 2, 8>>(space, ab, y0w, xref, ns, m, reps);
      solve_row<SolveShape<2, 2, 18>>(space, ab, y0w, xref, ns, m, reps);
      solve_row<SolveShape<2, 1, 18>>(space, ab, y0w, xref, ns, m, reps);
      solve_row<SolveShape<2, 2, 0>>(space, ab, y0w, xref, ns, m, reps);
      solve_row<SolveShape<1, 2, 0>>(space, ab, y0w, xref, ns, m, reps);
      solve_row<SolveShape<4, 1, 10>>(space, ab, y0w, xref, ns, m, reps);
      if constexpr (B::dmma) {
        row(DmmaShape<false>{}, "blocks: grouped, no DMMA");
        row(DmmaShape<true, 4, 5>{}, "blocks: DMMA, 4 warps, 5 teams/SM");
        row(DmmaShape<true, 5, 3>{}, "blocks: DMMA, 5 warps, 3 teams/SM");
        row(DmmaShape<true, 5, 4>{}, "blocks: DMMA, 5 warps, 4 teams/SM");
        row(DmmaShape<true, 8, 2>{}, "blocks: DMMA, 8 warps, 2 teams/SM");
      }
    }
    std::printf(
        "(flops: dense cholesky = sum of squared fiber-major row envelopes, inverse_blocks = "
        "n^3/3 + Gram (nominal), band = counted from the matrices' band; inverse_sqrt nominal "
        "11 m^3; cpu/thread: process CPU time / threads)\n");
  }
  Kokkos::finalize();
  return 0;
}
