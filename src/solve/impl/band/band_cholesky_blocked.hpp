// The band Cholesky of GPU teams by panels of `nb` columns (BandTuning::factor_panel;
// docs/algorithm.md §4, the band path). band_cholesky.hpp's kernel updates the whole window
// after every column, an entry a load, a product and a store, with one warp's worth of
// threads busy; here a panel's columns update only each other, and then the trailing triangle
// takes the panel's nb updates at once, each thread a 2 x 2 tile held in registers, so that
// an entry is loaded and stored once a panel. Each entry still takes its updates one by one,
// in column order, as the column kernel does: the factors are the same bits.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <kspecter/core/kokkos_compat.hpp>

#include <kspecter/solve/band.hpp>

#include "band_envelope.hpp"

#include "../common/unroll.hpp"

namespace kspecter::solve::detail {

/// The window of a panel kernel: the rows [k0, k0 + W) of the band in team scratch, W = b + nb,
/// row i in slot i mod W (a band row of w = b + 1 entries, entry (i, j) at column j - i + b).
struct BandWindow {
  double* win;
  int w, W;
  /// Row i's slot, given row `r0`'s slot s0 and r0 <= i < r0 + W.
  KOKKOS_INLINE_FUNCTION double* row(int s0, int r0, int i) const {
    int const s = s0 + (i - r0);
    return win + std::size_t(s < W ? s : s - W) * w;
  }
  /// L(i, p) (0 outside the band) for row i whose slot holds `ri`.
  KOKKOS_INLINE_FUNCTION double at(double const* ri, int i, int p) const {
    int const c = p - i + w - 1;
    return c >= 0 ? ri[c] : 0.0;
  }
};

/// Column k of a panel: its pivot, L(k+1 .. k+h, k), and the panel's columns k + 1 .. `last`
/// updated by it. Returns false (no barrier passed) if the pivot is not positive and finite;
/// every thread sees the same pivot. Left of a row's envelope A(i, k) is 0 and stays 0 (its
/// updates are products with L(i, p) = 0, p < k), so L(i, k) is 0 there without the column
/// kernel's envelope (up to the sign of a zero, which no later division sees).
template <class Member>
KOKKOS_INLINE_FUNCTION bool band_panel_column(Member const& team, BandWindow const& bw, int s0,
                                              int k0, int k, int last, int h) {
  int const b = bw.w - 1;
  double* const rk = bw.row(s0, k0, k);
  double const d = rk[b];
  if (!(d > 0.0 && compat::isfinite(d))) return false;
  double const lkk = compat::sqrt(d);
  double const inv = 1.0 / lkk;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, h), [&](int ii) {
    int const i = k + 1 + ii;
    double* const ri = bw.row(s0, k0, i);
    ri[k - i + b] *= inv;
  });
  team.team_barrier();
  if (team.team_rank() == 0) rk[b] = lkk;  // read by no thread until the write-back
  // A thread a row i, the panel's columns j <= i in turn: L(j, k) is the same entry for every
  // thread (a broadcast).
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, h), [&](int ii) {
    int const i = k + 1 + ii;
    double* const ri = bw.row(s0, k0, i);
    double const lik = ri[k - i + b];
    if (lik == 0.0) return;  // as the column kernel: rows off the envelope
    int const top = compat::imin(last, i);
    for (int j = k + 1; j <= top; ++j) ri[j - i + b] -= lik * bw.row(s0, k0, j)[k - j + b];
  });
  team.team_barrier();
  return true;
}

/// A 2 x 2 tile's updates by the panel's columns k0 .. k0 + nbk - 1, in order: rows i0, i0 + 1
/// (r0, r1), columns j0, j0 + 1 (c0, c1). `Checked`: some L(i, p) lie left of the band (read
/// as 0); else every one is in it.
template <bool Checked, int NB>
KOKKOS_INLINE_FUNCTION void band_tile_updates(BandWindow const& bw, double const* r0,
                                              double const* r1, double const* c0, double const* c1,
                                              int i0, int j0, int k0, int nbk, double (&a)[4]) {
  int const b = bw.w - 1;
  KSPECTER_UNROLL
  for (int q = 0; q < NB; ++q) {
    if (q >= nbk) break;
    int const p = k0 + q;
    double li0, li1, lj0, lj1;
    if constexpr (Checked) {
      li0 = bw.at(r0, i0, p), li1 = bw.at(r1, i0 + 1, p);
      lj0 = bw.at(c0, j0, p), lj1 = bw.at(c1, j0 + 1, p);
    } else {
      li0 = r0[p - i0 + b], li1 = r1[p - i0 - 1 + b];
      lj0 = c0[p - j0 + b], lj1 = c1[p - j0 - 1 + b];
    }
    a[0] -= li0 * lj0;
    a[1] -= li1 * lj0;
    a[2] -= li1 * lj1;
    a[3] -= li0 * lj1;
  }
}

/// The trailing triangle below a panel [k0, k0 + nbk): rows and columns [base, base + H),
/// base = k0 + nbk, each entry less Σ_p L(i, p) L(j, p) over the panel, p in order. A thread
/// a 2 x 2 tile of the triangle at a time (tile rows and columns by a packed walk).
template <int NB, class Member>
KOKKOS_INLINE_FUNCTION void band_trailing_update(Member const& team, BandWindow const& bw, int s0,
                                                 int k0, int nbk, int H) {
  int const b = bw.w - 1, base = k0 + nbk, tr = (H + 1) / 2, ts = team.team_size();
  int ta = 0, tc = team.team_rank();  // tile row and column, tc <= ta
  while (tc > ta) tc -= ++ta;
  for (int t = team.team_rank(); t < tr * (tr + 1) / 2; t += ts) {
    int const i0 = base + 2 * ta, j0 = base + 2 * tc;
    bool const i1ok = i0 + 1 < base + H, j1ok = j0 + 1 < base + H && (tc < ta || i1ok);
    double* const r0 = bw.row(s0, k0, i0);
    double* const r1 = i1ok ? bw.row(s0, k0, i0 + 1) : r0 + 1;  // read as row i0 + 1, not stored
    double const* const c0 = bw.row(s0, k0, j0);
    double const* const c1 = j1ok ? bw.row(s0, k0, j0 + 1) : c0 + 1;
    bool const upper = tc < ta;  // (i0, j0 + 1) is in the lower triangle
    double a[4] = {r0[j0 - i0 + b], i1ok ? r1[j0 - i0 - 1 + b] : 0.0,
                   i1ok && j1ok ? r1[j0 - i0 + b] : 0.0, upper && j1ok ? r0[j0 + 1 - i0 + b] : 0.0};
    if (i0 + 1 - b <= k0)  // rows i0, i0 + 1 (and so columns j0, j0 + 1) meet every p in the band
      band_tile_updates<false, NB>(bw, r0, r1, c0, c1, i0, j0, k0, nbk, a);
    else
      band_tile_updates<true, NB>(bw, r0, r1, c0, c1, i0, j0, k0, nbk, a);
    r0[j0 - i0 + b] = a[0];
    if (i1ok) r1[j0 - i0 - 1 + b] = a[1];
    if (i1ok && j1ok) r1[j0 - i0 + b] = a[2];
    if (upper && j1ok) r0[j0 + 1 - i0 + b] = a[3];
    tc += ts;
    while (tc > ta) tc -= ++ta;
  }
}

/// A thread's entries of the rows that replace a panel's in the window (rows k0 + W ...), read
/// from memory when the panel starts, so that its columns' work hides the loads' latency:
/// entry e = rank + j * team size of the nbk x w block.
template <int K>
struct BandPanelRows {
  double v[K];
  template <class Member>
  KOKKOS_INLINE_FUNCTION void load(Member const& team, BandWindow const& bw, double const* A, int n,
                                   int k0, int nbk) {
    int const rank = team.team_rank(), ts = team.team_size(), first = k0 + bw.W;
    KSPECTER_UNROLL
    for (int j = 0; j < K; ++j) {
      int const e = rank + j * ts, i = first + e / bw.w;
      v[j] = e < nbk * bw.w && i < n ? A[std::size_t(first) * bw.w + e] : 0.0;
    }
  }
  /// Rows [k0, k0 + nbk) are final: back to memory, and the loaded rows into their slots (both
  /// by the thread of each entry: no barrier between).
  template <class Member>
  KOKKOS_INLINE_FUNCTION void advance(Member const& team, BandWindow const& bw, double* A, int n,
                                      int s0, int k0, int nbk) const {
    int const rank = team.team_rank(), ts = team.team_size(), w = bw.w;
    for (int e = rank, j = 0; e < nbk * w; e += ts, ++j) {
      int const q = e / w, c = e - q * w, i = k0 + q;
      double* const ri = bw.row(s0, k0, i);
      A[std::size_t(i) * w + c] = ri[c];
      if (i + bw.W >= n) continue;
      double x = 0.0;
      KSPECTER_UNROLL
      for (int l = 0; l < K; ++l) x = l == j ? v[l] : x;  // v[j] without local memory
      ri[c] = j < K ? x : A[std::size_t(i + bw.W) * w + c];
    }
  }
};

/// Whether the panel kernel's window fits a team's level-0 scratch.
template <class Policy>
bool band_panel_fits(int w, int nb) {
  std::size_t const bytes = std::size_t(w - 1 + nb) * w * sizeof(double) + 64;
  return nb > 0 && bytes <= std::size_t(Policy::scratch_size_max(0));
}

template <class Tune, class ExecSpace>
void band_cholesky_panels(ExecSpace const& space, BandBatch<typename ExecSpace::memory_space> ab,
                          Kokkos::View<int*, typename ExecSpace::memory_space> info) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  constexpr int NB = Tune::factor_panel;
  int const nmat = int(ab.extent(0)), n = int(ab.extent(1)), w = int(ab.extent(2));
  int const b = w - 1, W = b + NB;
  std::size_t const win_doubles = std::size_t(W) * w;
  std::size_t const bytes = Scratch::shmem_size(win_doubles);
  auto kernel = KOKKOS_LAMBDA(Member const& team) {
    int const pm = team.league_rank();
    double* const A = &ab(pm, 0, 0);
    Scratch sw(team.team_scratch(0), win_doubles);
    BandWindow const bw{sw.data(), w, W};
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, compat::imin(n, W) * w), [&](int e) {
      bw.win[e] = A[e];  // rows 0 .. W - 1 in slots 0 .. W - 1
    });
    team.team_barrier();
    int fail = 0;
    for (int k0 = 0, s0 = 0; k0 < n && fail == 0;
         k0 += NB, s0 = s0 + NB < W ? s0 + NB : s0 + NB - W) {
      int const nbk = compat::imin(NB, n - k0), last = k0 + nbk - 1;
      BandPanelRows<Tune::factor_panel_rows> next;
      next.load(team, bw, A, n, k0, nbk);
      for (int k = k0; k <= last; ++k) {
        if (!band_panel_column(team, bw, s0, k0, k, last, compat::imin(b, n - 1 - k))) {
          fail = k + 1;
          break;
        }
      }
      if (fail != 0) break;
      band_trailing_update<NB>(team, bw, s0, k0, nbk, compat::imin(b, n - k0 - nbk));
      team.team_barrier();
      next.advance(team, bw, A, n, s0, k0, nbk);
      team.team_barrier();
    }
    team_band_failed(team, A, n, w, fail, info(pm));
  };
  auto const shaped = [&](int team) {
    return Policy(space, nmat, team).set_scratch_size(0, Kokkos::PerTeam(bytes));
  };
  int const most = shaped(1).team_size_max(kernel, Kokkos::ParallelForTag());
  Policy const policy = shaped(compat::imin(Tune::factor_team_size, most));
  Kokkos::parallel_for("kspecter::solve::band_cholesky", policy, kernel);
}

}  // namespace kspecter::solve::detail
