// Stage "decorrelation" (docs/algorithm.md §4, §6): Q = C_kk^-1/2 of every core fiber
// block, then flux, ivar, deconvolved flux and resolution diagonals of the core bins, written
// straight into the frame arrays.
#pragma once

#include "context.hpp"
#include "solve_variant.hpp"
#include "workspace.hpp"

#include <kspecter/solve/batched.hpp>

namespace kspecter::extract::detail {

// The covariance blocks of the core fibers, gathered into a compact batch of m x m matrices
// for the inverse square root (identity where a subbundle has fewer core fibers).
template <class ExecSpace>
struct GatherCoreBlocks {
  using T = Types<ExecSpace>;
  using Member = typename T::Member;
  typename T::CTable ptab;
  typename T::Blocks cblocks;  // [P][nslots][m][m]
  typename T::Mat q;           // [P * ncslots][m][m]
  int ncslots, m;
  KOKKOS_INLINE_FUNCTION void operator()(Member const& t) const {
    int const p = t.league_rank() / ncslots, c = t.league_rank() % ncslots;
    int const ncore = ptab(p).ncore, slot = ptab(p).core + c;
    int const b = p * ncslots + c;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, m), [&](int r) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, m), [&](int s) {
        q(b, r, s) = (c < ncore) ? cblocks(p, slot, r, s) : (r == s ? 1.0 : 0.0);
      });
    });
  }
};

// Decorrelation and stitching (§4, §6): s = rowsum(Q), R = Q / s, ivar = s^2, flux = R f,
// resolution diagonals; the core bins of the core fibers go straight into the frame arrays
// (per bin, not yet divided by dw). Bins with fluxweight <= minweight (no usable light),
// a non-positive or non-finite s, or a failed patch get ivar = 0.
template <class ExecSpace>
struct Decorrelate {
  using T = Types<ExecSpace>;
  using Member = typename T::Member;
  using Scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  typename T::CTable ptab;
  typename T::Mat q;  // [P * ncslots][m][m]
  typename T::Vec rhs, fw;
  typename T::Vec1 minweight;
  Kokkos::View<const int*, typename ExecSpace::memory_space> info;
  typename T::Out2 flux, ivar, deconv;
  typename T::Out3 rdiag;
  Kokkos::View<int**, Kokkos::LayoutRight, typename ExecSpace::memory_space> failed;
  int ncslots, m, wavepad, ndiag, nspec;
  // s of every block, [P * ncslots * m], kept for the next frame (none: not kept); and the
  // patches whose Q is new (none: every patch's). A block whose Q is the kept one takes the s
  // summed before instead of reading Q a second time (reuse.hpp).
  Kokkos::View<double*, typename ExecSpace::memory_space> sums;
  Kokkos::View<const int*, typename ExecSpace::memory_space> fresh;

  static int scratch_bytes(int m) { return static_cast<int>(Scratch::shmem_size(m)); }

  // s = rowsum(Q) of block b into scratch: summed, or the kept sums where Q is the kept one.
  KOKKOS_INLINE_FUNCTION void row_sums(Member const& t, int p, int b, Scratch const& s) const {
    bool const kept = sums.data() != nullptr && fresh.data() != nullptr && fresh(p) == 0;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, m), [&](int r) {
      double sum = 0;
      if (kept) {
        sum = sums(std::size_t(b) * m + r);
      } else {
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(t, m), [&](int col, double& acc) { acc += q(b, r, col); },
            sum);
      }
      Kokkos::single(Kokkos::PerThread(t), [&]() {
        s(r) = sum;
        if (!kept && sums.data() != nullptr) sums(std::size_t(b) * m + r) = sum;
      });
    });
  }

  KOKKOS_INLINE_FUNCTION void operator()(Member const& t) const {
    int const p = t.league_rank() / ncslots, c = t.league_rank() % ncslots;
    if (c >= ptab(p).ncore) return;
    int const spec = ptab(p).out0 + c;
    if (spec < 0 || spec >= nspec) return;
    int const slot = ptab(p).core + c;
    int const b = p * ncslots + c;
    int const wout0 = ptab(p).wave0, nkeep = ptab(p).nkeep;
    bool const bad_patch = info(p) != 0;
    double const minw = minweight(p);
    Scratch s(t.team_scratch(0), m);
    row_sums(t, p, b, s);
    t.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, nkeep), [&](int jj) {
      int const j = wavepad + jj;
      int const wout = wout0 + jj;
      double rf = 0;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(t, m),
          [&](int col, double& acc) { acc += q(b, j, col) * rhs(p, slot * m + col); }, rf);
      double const sj = s(j);
      bool const s_ok = sj > 0 && compat::isfinite(sj);
      double const fl = s_ok ? rf / sj : 0.0;
      bool const ok = !bad_patch && s_ok && compat::isfinite(fl) && fw(p, slot * m + j) > minw;
      Kokkos::single(Kokkos::PerThread(t), [&]() {
        flux(spec, wout) = (!bad_patch && compat::isfinite(fl)) ? fl : 0.0;
        ivar(spec, wout) = ok ? sj * sj : 0.0;
        double const f = rhs(p, slot * m + j);
        deconv(spec, wout) = (!bad_patch && compat::isfinite(f)) ? f : 0.0;
        failed(spec, wout) = bad_patch ? kFailedPatch : 0;
      });
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, 2 * ndiag + 1), [&](int k) {
        int const r = j - ndiag + k;
        double v = 0;
        if (bad_patch) {
          v = (k == ndiag) ? 1.0 : 0.0;  // identity resolution for a failed patch
        } else if (r >= 0 && r < m) {
          double const sr = s(r);
          if (sr > 0 && compat::isfinite(sr)) v = q(b, r, j) / sr;
        }
        rdiag(spec, k, wout) = compat::isfinite(v) ? v : 0.0;
      });
    });
  }
};

template <class ExecSpace>
void decorrelate_spectra(FrameContext<ExecSpace> const& fc, BatchViews<ExecSpace> const& b,
                         Workspace<ExecSpace>& ws,
                         Kokkos::View<const int*, typename ExecSpace::memory_space> fresh = {});

/// The core blocks are gathered into b.qb first on the dense path; the band path makes them
/// there.
template <class ExecSpace, class Solve>
void decorrelate(FrameContext<ExecSpace> const& fc, BatchViews<ExecSpace> const& b,
                 Workspace<ExecSpace>& ws, Solve) {
  using T = Types<ExecSpace>;
  using Policy = typename T::Policy;
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::decorrelation", fc.times);
  FrameShape const& s = fc.shape;
  if constexpr (!is_band_v<Solve>)
    Kokkos::parallel_for("kspecter::extract::gather_core_blocks",
                         Policy(fc.space, b.P * s.ncs, T::Tune::team, T::Tune::vector),
                         GatherCoreBlocks<ExecSpace>{b.ptab, b.cblk, b.qb, s.ncs, s.m});
  solve::inverse_sqrt(fc.space, b.qb, fc.opt.eig_rel_clip, ws.inverse_sqrt);
  ws.meter_inverse_sqrt();
  decorrelate_spectra(fc, b, ws);
}

/// The decorrelation's last step: flux, ivar, deconvolved flux and resolution of the core bins
/// from Q (in b.qb) and f (in b.rhs). Also what a frame that keeps the last frame's Q runs
/// (reuse.hpp): `fresh` then marks the patches whose Q is new, and the others take the row
/// sums of Q that a frame allowed to keep its solve left in ws.q_rowsums.
template <class ExecSpace>
void decorrelate_spectra(FrameContext<ExecSpace> const& fc, BatchViews<ExecSpace> const& b,
                         Workspace<ExecSpace>& ws,
                         Kokkos::View<const int*, typename ExecSpace::memory_space> fresh) {
  using T = Types<ExecSpace>;
  using Policy = typename T::Policy;
  FrameShape const& s = fc.shape;
  int const sbytes = Decorrelate<ExecSpace>::scratch_bytes(s.m);
  if (reuse_allowed(fc)) {
    ws.keep_row_sums(std::size_t(b.P) * std::size_t(s.ncs) * std::size_t(s.m));
  } else {
    ws.forget_row_sums();
    fresh = {};
  }
  Kokkos::parallel_for(
      "kspecter::extract::decorrelate",
      Policy(fc.space, b.P * s.ncs, T::Tune::team, T::Tune::vector)
          .set_scratch_size(0, Kokkos::PerTeam(sbytes)),
      Decorrelate<ExecSpace>{b.ptab, b.qb, b.rhs, b.fw, b.minw, b.info, ws.flux, ws.ivar, ws.deconv,
                             ws.rdiag, ws.failed, s.ncs, s.m, fc.plan.wavepad, s.ndiag, s.nspec,
                             ws.q_rowsums, fresh});
}

}  // namespace kspecter::extract::detail
