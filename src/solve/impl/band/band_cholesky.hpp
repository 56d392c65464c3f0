// Band Cholesky and band solve (declared in band.hpp).
#pragma once

#include <Kokkos_Core.hpp>
#include <kspecter/core/error.hpp>
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/core/profiling.hpp>
#include <kspecter/solve/band.hpp>

#include <string>
#include "../common/unroll.hpp"
#include "../tuning.hpp"
#include "band_cholesky_blocked.hpp"
#include "band_envelope.hpp"

namespace kspecter::solve {

namespace detail {

/// r[j] -= li c[j] for j < len, four entries loaded before any is stored: r and c never
/// overlap, but the compiler cannot know it, and one entry at a time would wait out each
/// load's latency. The same operations as the plain loop, so the same numbers.
KOKKOS_INLINE_FUNCTION void update_row(double* r, double const* c, double li, int len) {
  int j = 0;
  for (; j + 4 <= len; j += 4) {
    double const c0 = c[j], c1 = c[j + 1], c2 = c[j + 2], c3 = c[j + 3];
    double const r0 = r[j], r1 = r[j + 1], r2 = r[j + 2], r3 = r[j + 3];
    r[j] = r0 - li * c0;
    r[j + 1] = r1 - li * c1;
    r[j + 2] = r2 - li * c2;
    r[j + 3] = r3 - li * c3;
  }
  for (; j < len; ++j) r[j] -= li * c[j];
}

// Right-looking band Cholesky over a sliding window of the b + 1 active rows (row i in slot
// i mod (b + 1), entry (i, j) at column j - i + b), held in team scratch: step k scales
// column k below the pivot (col[] keeps it contiguous) and updates the triangle of rows and
// columns (k, k + b] by the rank-1 product; then row k is final, goes back to memory, and row
// k + b + 1 takes its slot. Rows whose envelope starts right of k have L(i, k) = 0 and are
// skipped. GPU: a thread updates rows ii and h - 1 - ii (the same work for every thread),
// four entries of a row at a time (update_row); BandTuning::factor_team_size threads a team.
template <class Tune, class ExecSpace>
void band_cholesky_impl(ExecSpace const& space, BandBatch<typename ExecSpace::memory_space> ab,
                        Kokkos::View<int*, typename ExecSpace::memory_space> info) {
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using IScratch = Kokkos::View<int*, typename ExecSpace::scratch_memory_space,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  ScopedRegion region("kspecter::solve::band_cholesky");
  int const nmat = int(ab.extent(0));
  int const n = int(ab.extent(1));
  int const w = int(ab.extent(2));
  if (int(info.extent(0)) < nmat) throw ParameterError("solve::band_cholesky: info is too short");
  if (w < 1) throw ParameterError("solve::band_cholesky: the band has no diagonal");
  if (nmat == 0 || n == 0) {
    Kokkos::deep_copy(space, info, 0);
    return;
  }
  if constexpr (Tune::factor_panel > 0) {
    if (band_panel_fits<Kokkos::TeamPolicy<ExecSpace>>(w, Tune::factor_panel)) {
      band_cholesky_panels<Tune>(space, ab, info);
      return;
    }
  }
  int const b = w - 1;
  std::size_t const win_bytes = Scratch::shmem_size(std::size_t(w) * w + w);
  std::size_t const env_bytes = IScratch::shmem_size(n);
  int const level = int(win_bytes + env_bytes) <= Policy::scratch_size_max(0) ? 0 : 1;

  auto kernel = KOKKOS_LAMBDA(Member const& team) {
    int const p = team.league_rank();
    double* A = &ab(p, 0, 0);
    Scratch sw(team.team_scratch(level), std::size_t(w) * w + w);
    IScratch first(team.team_scratch(level), n);
    double* win = sw.data();
    double* col = win + std::size_t(w) * w;
    team_band_envelope(team, A, n, w, first.data());
    int const nload = compat::imin(n, w);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nload * w), [&](int e) {
      int const i = e / w, c = e - i * w;
      win[(i % w) * w + c] = A[std::size_t(i) * w + c];
    });
    team.team_barrier();
    int fail = 0;
    // Row k + 1 + ii is in slot ks + 1 + ii, wrapped once (ii < b < w): no division a row.
    auto const slot_below = [w](int ks, int ii) {
      return ks + 1 + ii < w ? ks + 1 + ii : ks + 1 + ii - w;
    };
    for (int k = 0, ks = 0; k < n; ++k, ks = ks + 1 < w ? ks + 1 : 0) {
      double* rk = win + ks * w;
      double const d = rk[b];
      if (!(d > 0.0 && compat::isfinite(d))) {
        fail = k + 1;
        break;
      }
      double const lkk = compat::sqrt(d);
      double const inv = 1.0 / lkk;
      int const h = compat::imin(b, n - 1 - k);  // rows k + 1 .. k + h below the pivot
      // 1. column k of L, rows k + 1 .. k + h (zero where the row starts right of k).
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, h), [&](int ii) {
        int const i = k + 1 + ii;
        double* ri = win + slot_below(ks, ii) * w;
        double const v = first[i] <= k ? ri[k - i + b] * inv : 0.0;
        ri[k - i + b] = v;
        col[ii] = v;
      });
      team.team_barrier();
      // 2. row k is final: back to memory, and row k + w takes its slot (both by the thread
      // of each entry, so no barrier between). Then the rank-1 update of the triangle.
      int const knew = k + w;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, w), [&](int c) {
        A[std::size_t(k) * w + c] = c == b ? lkk : rk[c];
        if (knew < n) rk[c] = A[std::size_t(knew) * w + c];
      });
      if constexpr (Tune::coalesce) {
        // Rows ii and h - 1 - ii on one thread: h + 1 entries each, no index arithmetic.
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, (h + 1) / 2), [&](int t) {
          for (int pass = 0; pass < 2; ++pass) {
            int const ii = pass == 0 ? t : h - 1 - t;
            if (pass == 1 && ii == t) break;
            double const li = col[ii];
            if (li == 0.0) continue;  // outside the envelope: nothing to subtract
            int const i = k + 1 + ii;
            update_row(win + slot_below(ks, ii) * w + (k + 1 - i + b), col, li,
                       ii + 1);  // (i, k + 1)
          }
        });
      } else {
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          for (int ii = 0; ii < h; ++ii) {
            double const li = col[ii];
            if (li == 0.0) continue;
            int const i = k + 1 + ii;
            double* ri = win + slot_below(ks, ii) * w + (k + 1 - i + b);  // entry (i, k + 1)
            for (int jj = 0; jj <= ii; ++jj) ri[jj] -= li * col[jj];
          }
        });
      }
      team.team_barrier();
    }
    team_band_failed(team, A, n, w, fail, info(p));
  };
  auto const scratch = [&](Policy pol) {
    return pol.set_scratch_size(level, Kokkos::PerTeam(win_bytes + env_bytes));
  };
  int const most = scratch(Policy(space, nmat, 1)).team_size_max(kernel, Kokkos::ParallelForTag());
  Policy const policy = scratch(Policy(space, nmat, compat::imin(Tune::factor_team_size, most)));
  Kokkos::parallel_for("kspecter::solve::band_cholesky", policy, kernel);
}

// The solve on GPUs (Tune::solve_entries > 0): a matrix per thread of the team, whose
// Tune::solve_lanes vector lanes (a warp) hold K entries of each row of L in registers, x in
// team scratch. Lane l holds the entries at distance d = 1 + l + k V from the diagonal, so
// that a wider band (a batch with a wider patch: extract's BandSolve) only adds zeros at the
// end of each lane's sum, and the lanes' tree sum groups the same partials: the same bits
// whatever the batching. Rows i + 1 ... i + A are loaded while row i waits on its sum: a row
// waits on scratch and the lanes' shuffles, not on a global load, and no team barrier is
// taken (docs/algorithm.md §4, the band solve).
// Forward: every lane computes x_i from the broadcast sum and stores it, so each lane reads
// back only entries it wrote itself. Backward: the axpys of row i go to entries that other
// lanes update in the next rows, hence one sync of the lanes a row.
template <int K, int A, int V>
struct BandSolveLanes {
  double const* L;
  double* y;
  double* x;
  int n, w, lane;

  KOKKOS_INLINE_FUNCTION void load(int i, double (&dst)[K], double& yi, double& di) const {
    int const b = w - 1;
    double const* li = L + std::size_t(i) * w;
    KSPECTER_UNROLL
    for (int k = 0; k < K; ++k) {
      int const d = 1 + lane + k * V;
      dst[k] = d <= b ? li[b - d] : 0.0;
    }
    yi = y[i];
    di = li[b];
  }

  template <class Member>
  KOKKOS_INLINE_FUNCTION void forward(Member const& team) const {
    int const b = w - 1;
    double row[A][K], ya[A], da[A];
    KSPECTER_UNROLL
    for (int j = 0; j < A; ++j)
      if (j < n) load(j, row[j], ya[j], da[j]);
    for (int i0 = 0; i0 < n; i0 += A) {
      KSPECTER_UNROLL
      for (int j = 0; j < A; ++j) {
        int const i = i0 + j;
        if (i >= n) break;
        double s = 0.0;
        KSPECTER_UNROLL
        for (int k = 0; k < K; ++k) {
          int const d = 1 + lane + k * V;
          if (d <= b && i - d >= 0) s += row[j][k] * x[i - d];
        }
        double tot = 0.0;  // lane l adds its own s: the lanes' tree sum
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, V), [&](int, double& acc) { acc += s; }, tot);
        x[i] = (ya[j] - tot) / da[j];
        if (i + A < n) load(i + A, row[j], ya[j], da[j]);
      }
    }
  }

  template <class Member>
  KOKKOS_INLINE_FUNCTION void backward(Member const& team) const {
    int const b = w - 1;
    double row[A][K], ya[A], da[A];  // ya unused: y is overwritten by x
    KSPECTER_UNROLL
    for (int j = 0; j < A; ++j)
      if (n - 1 - j >= 0) load(n - 1 - j, row[j], ya[j], da[j]);
    for (int i0 = n - 1; i0 >= 0; i0 -= A) {
      KSPECTER_UNROLL
      for (int j = 0; j < A; ++j) {
        int const i = i0 - j;
        if (i < 0) break;
        double const xi = x[i] / da[j];
        if (lane == 0) y[i] = xi;
        KSPECTER_UNROLL
        for (int k = 0; k < K; ++k) {
          int const d = 1 + lane + k * V;
          if (d <= b && i - d >= 0) x[i - d] -= row[j][k] * xi;
        }
        if (i - A >= 0) load(i - A, row[j], ya[j], da[j]);
        lane_sync(team);
      }
    }
  }

  // Kokkos ends a vector loop with a sync of the thread's lanes (a GPU's), and has no other.
  template <class Member>
  KOKKOS_INLINE_FUNCTION static void lane_sync(Member const& team) {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, 1), [](int) {});
  }
};

// The GPU path with the fewest entries a lane that hold band rows of k V entries (K >= k;
// down to solve_entries - 3): registers, not the widest band it could take, bound how many
// matrices an SM holds at once. False when the team's scratch does not fit.
template <class Tune, int K, class ExecSpace>
bool band_solve_lanes(ExecSpace const& space, BandBatch<typename ExecSpace::memory_space> l,
                      VectorBatch<typename ExecSpace::memory_space> rhs, int k) {
  if constexpr (K > 1 && K > Tune::solve_entries - 3)
    if (k < K) return band_solve_lanes<Tune, K - 1>(space, l, rhs, k);
  constexpr int V = Tune::solve_lanes, T = Tune::solve_team, A = Tune::solve_ahead;
  using Policy =
      Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<T * V, Tune::solve_teams_per_sm>>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  int const nmat = int(l.extent(0)), n = int(l.extent(1)), w = int(l.extent(2));
  int const bytes = int(Scratch::shmem_size(std::size_t(T) * n));
  if (bytes > Policy::scratch_size_max(0)) return false;
  auto kernel = KOKKOS_LAMBDA(Member const& team) {
    int const p = team.league_rank() * T + team.team_rank();
    if (p >= nmat) return;  // no barrier follows: a matrix's lanes work alone
    int lane = 0;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, V), [&](int i) { lane = i; });
    Scratch x(team.team_scratch(0), std::size_t(T) * n);
    BandSolveLanes<K, A, V> const s{
        &l(p, 0, 0), &rhs(p, 0), x.data() + std::size_t(team.team_rank()) * n, n, w, lane};
    s.forward(team);
    BandSolveLanes<K, A, V>::lane_sync(team);
    s.backward(team);
  };
  Policy const policy =
      Policy(space, (nmat + T - 1) / T, T, V).set_scratch_size(0, Kokkos::PerTeam(bytes));
  Kokkos::parallel_for("kspecter::solve::band_cholesky_solve", policy, kernel);
  return true;
}

// Forward substitution by rows (a dot product of each row of L with the solved part) and
// backward substitution by rows of L as axpys (x_i is final once the rows below have been
// subtracted from it), so that both read L along its contiguous rows. The plain loops give
// the same bits for a wider band (zeros first in each sum) with one thread a team, the
// host's; a GPU takes them only for bands wider than its prefetched path holds.
template <class Tune, class ExecSpace>
void band_cholesky_solve_impl(ExecSpace const& space, BandBatch<typename ExecSpace::memory_space> l,
                              VectorBatch<typename ExecSpace::memory_space> rhs) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  ScopedRegion region("kspecter::solve::band_cholesky_solve");
  int const nmat = int(l.extent(0));
  int const n = int(l.extent(1));
  int const w = int(l.extent(2));
  if (int(rhs.extent(0)) < nmat || int(rhs.extent(1)) != n)
    throw ParameterError("solve::band_cholesky_solve: shapes of L and b do not match");
  if (nmat == 0 || n == 0) return;
  int const b = w - 1;
  if constexpr (Tune::solve_entries > 0) {  // the GPU path, K entries a lane for bands to K V
    int const k = (b + Tune::solve_lanes - 1) / Tune::solve_lanes;
    if (k <= Tune::solve_entries && band_solve_lanes<Tune, Tune::solve_entries>(space, l, rhs, k))
      return;
  }
  auto kernel = KOKKOS_LAMBDA(Member const& team) {
    int const p = team.league_rank();
    double const* L = &l(p, 0, 0);
    double* x = &rhs(p, 0);
    for (int i = 0; i < n; ++i) {
      double const* li = L + std::size_t(i) * w;
      int const c0 = compat::imax(0, b - i);
      double s = 0.0;
      Kokkos::parallel_reduce(
          Kokkos::TeamThreadRange(team, c0, b),
          [&](int c, double& acc) { acc += li[c] * x[i - b + c]; }, s);
      Kokkos::single(Kokkos::PerTeam(team), [&]() { x[i] = (x[i] - s) / li[b]; });
      team.team_barrier();
    }
    for (int i = n - 1; i >= 0; --i) {
      double const* li = L + std::size_t(i) * w;
      Kokkos::single(Kokkos::PerTeam(team), [&]() { x[i] /= li[b]; });
      team.team_barrier();
      double const xi = x[i];
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, compat::imax(0, b - i), b),
                           [&](int c) { x[i - b + c] -= li[c] * xi; });
      team.team_barrier();
    }
  };
  int const most = Policy(space, nmat, 1).team_size_max(kernel, Kokkos::ParallelForTag());
  Policy const policy(space, nmat, compat::imin(Tune::team_size, most));
  Kokkos::parallel_for("kspecter::solve::band_cholesky_solve", policy, kernel);
}

}  // namespace detail

template <class ExecSpace>
void band_cholesky(ExecSpace const& space, BandBatch<typename ExecSpace::memory_space> ab,
                   Kokkos::View<int*, typename ExecSpace::memory_space> info) {
  detail::band_cholesky_impl<BandTuning<ExecSpace>>(space, ab, info);
}

template <class ExecSpace>
void band_cholesky_solve(ExecSpace const& space, BandBatch<typename ExecSpace::memory_space> l,
                         VectorBatch<typename ExecSpace::memory_space> b) {
  detail::band_cholesky_solve_impl<BandTuning<ExecSpace>>(space, l, b);
}

}  // namespace kspecter::solve
