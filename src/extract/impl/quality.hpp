// Stage "quality" (docs/algorithm.md §5): the model of each patch's window and its chi^2 per
// pixel, chi2pix and pixmask_fraction of the core bins, and, when asked for, the model image
// of the bundles the batch completes.
#pragma once

#include "context.hpp"
#include "frame_model.hpp"
#include "row_ranges.hpp"
#include "workspace.hpp"

#include <algorithm>

namespace kspecter::extract::detail {

// Model of the window (A f over the padded patch, §5) and its chi^2 per pixel:
// totpix_ivar = 1 / (1/W + (psferr model + 1e-32)^2), chi^2 = (p - model)^2 totpix_ivar.
// Pixels with W = 0 or off the CCD store -1.
template <class ExecSpace>
struct ModelChi2 {
  using T = Types<ExecSpace>;
  using Member = typename T::Member;
  SpotGather<ExecSpace> gather;  // over the (patch, slot) row ranges
  typename T::CTable ptab;
  WeightStrip<typename T::mem> w;
  typename T::Image image;
  typename T::Vec rhs;  // the solution f
  typename T::Vec pix;  // [P][npix_max]
  int nslots, m, npix_y, npix_x, nrow_max;
  double psferr;
  int wavepad;  // bins of padding before a patch's core bins

  // Coefficients of patch p: its solution, every bin counts.
  struct Solution {
    typename T::Vec rhs;
    int p, m;
    KOKKOS_INLINE_FUNCTION bool operator()(int k, int b, double& c) const {
      c = rhs(p, k * m + b);
      return true;
    }
  };

  // A pixel that gets a model and a chi^2: on the CCD, with W > 0.
  KOKKOS_INLINE_FUNCTION bool usable(int y, int x) const {
    return y >= 0 && y < npix_y && x >= 0 && x < npix_x && w(y, x) > 0;
  }

  // chi^2 of a pixel whose model is known (a usable one), from its weight and value.
  KOKKOS_INLINE_FUNCTION double chi2_from(double wv, double pv, double model) const {
    double const e = psferr * model + 1e-32;
    double const tot = wv / (1.0 + wv * e * e);
    double const d = pv - model;
    return d * d * tot;
  }
  KOKKOS_INLINE_FUNCTION double chi2_of(int y, int x, double model) const {
    return chi2_from(w(y, x), image(y, x), model);
  }

  // Host (a thread per patch): the model scattered spot by spot into the core spots' box of
  // the window (the pixels chi2pix reads, as on a GPU), then chi^2 pixel by pixel. Each pixel
  // receives its terms in the gather's order (fiber, then bin), so the sums are the same bits as
  // the GPU's gather; a pixel that gets no model (off the CCD, W = 0) holds NaN until it is written
  // as -1.
  KOKKOS_INLINE_FUNCTION long long host_patch(int p) const {
    int const x0 = ptab(p).x0, y0 = ptab(p).y0, nfib = ptab(p).nfib;
    int const ncol = ptab(p).pixstride;
    int const fib0 = ptab(p).fib0, w0 = ptab(p).wave0;
    int const sny = gather.sny, snx = gather.snx;
    double* const out = &pix(p, 0);
    double const nan = compat::quiet_nan();
    // Only the core spots' box, as on a GPU (operator()): rows [ra, rb), columns [ca, cb).
    if (ptab(p).ncore * ptab(p).nkeep == 0) return 0;
    int xlo = 2147483647, xhi = -2147483647, ylo = 2147483647, yhi = -2147483647;
    for (int k = ptab(p).core; k < ptab(p).core + ptab(p).ncore; ++k)
      for (int b = wavepad; b < wavepad + ptab(p).nkeep; ++b) {
        xlo = imin(xlo, gather.xc(fib0 + k, w0 + b)), xhi = imax(xhi, gather.xc(fib0 + k, w0 + b));
        ylo = imin(ylo, gather.yc(fib0 + k, w0 + b)), yhi = imax(yhi, gather.yc(fib0 + k, w0 + b));
      }
    int const ra = imax(ylo - y0, 0), rb = imin(yhi - y0 + sny, imin(ptab(p).y1 - y0, nrow_max));
    int const ca = imax(xlo - x0, 0), cb = imin(xhi - x0 + snx, ncol);
    // The window lies on the CCD (windows_stage.hpp), so a pixel is usable where W > 0; rows
    // by pointers, which the compiler vectorises (View indexing reloads the strides).
    for (int r = ra; r < rb; ++r) {
      double const* const wr = &w.w(y0 + r, x0 - w.x0);
      double* const o = out + r * ncol;
      for (int c = ca; c < cb; ++c) o[c] = wr[c] > 0 ? 0.0 : nan;
    }
    long long cnt = 0;
    for (int k = 0; k < nfib; ++k) {
      int const f = fib0 + k;
      for (int b = 0; b < m; ++b) {
        int const xs = gather.xc(f, w0 + b) - x0, ys = gather.yc(f, w0 + b) - y0;
        int const r0 = imax(ys, ra), r1 = imin(ys + sny, rb);
        int const c0 = imax(xs, ca), c1 = imin(xs + snx, cb);
        double const coef = rhs(p, k * m + b);
        double const* sp = &gather.spots(f, w0 + b, 0, 0);
        for (int r = r0; r < r1; ++r) {
          double const* sr = sp + (r - ys) * snx - xs;
          double* o = out + r * ncol;
          int n = 0;
          for (int c = c0; c < c1; ++c) {
            double const v = o[c];
            n += v == v ? 1 : 0;
            o[c] = v + sr[c] * coef;
          }
          cnt += n;
        }
      }
    }
    for (int r = ra; r < rb; ++r) {
      double const* const wr = &w.w(y0 + r, x0 - w.x0);
      double const* const pr = &image(y0 + r, x0);
      double* const o = out + r * ncol;
      for (int c = ca; c < cb; ++c) {
        double const model = o[c];
        o[c] = model == model ? chi2_from(wr[c], pr[c], model) : -1.0;
      }
    }
    return cnt;
  }

  // The least or greatest corner column (x) or row of patch p's core spots, for the team.
  KOKKOS_INLINE_FUNCTION int core_corner(Member const& t, int p, bool x, bool greatest) const {
    int const f0 = ptab(p).fib0 + ptab(p).core, b0 = ptab(p).wave0 + wavepad;
    int const nkeep = ptab(p).nkeep, n = ptab(p).ncore * nkeep;
    auto const corner = [&](int i) {
      int const f = f0 + i / nkeep, b = b0 + i % nkeep;
      return x ? gather.xc(f, b) : gather.yc(f, b);
    };
    int v = 0;
    if (greatest)
      Kokkos::parallel_reduce(
          Kokkos::TeamThreadRange(t, n), [&](int i, int& a) { a = imax(a, corner(i)); },
          Kokkos::Max<int>(v));
    else
      Kokkos::parallel_reduce(
          Kokkos::TeamThreadRange(t, n), [&](int i, int& a) { a = imin(a, corner(i)); },
          Kokkos::Min<int>(v));
    return v;
  }

  KOKKOS_INLINE_FUNCTION void operator()(Member const& t, long long& macs) const {
    int const p = t.league_rank();
    if constexpr (T::Tune::host_loops) {
      macs += host_patch(p);
      return;
    }
    int const x0 = ptab(p).x0, y0 = ptab(p).y0, nfib = ptab(p).nfib;
    int const ncol = ptab(p).pixstride, nrow = imin(ptab(p).y1 - y0, nrow_max);
    int const fib0 = ptab(p).fib0, w0 = ptab(p).wave0;
    // Only the window's pixels under the core bins' spots: chi2pix and pixmask_fraction read
    // no other (Chi2PixMask), and the padding's rows and the neighbour fibers' columns are
    // some 40 % of a window (perf/gpu_runs.md, session 30).
    if (ptab(p).ncore * ptab(p).nkeep == 0) return;
    int const xlo = core_corner(t, p, true, false), xhi = core_corner(t, p, true, true);
    int const ylo = core_corner(t, p, false, false), yhi = core_corner(t, p, false, true);
    // Rows [r0, r1) and columns [c0, c1) of the window: the core spots' box.
    int const r0 = imax(ylo - y0, 0), r1 = imin(yhi - y0 + gather.sny, nrow);
    int const c0 = imax(xlo - x0, 0), c1 = imin(xhi - x0 + gather.snx, ncol);
    long long team_macs = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(t, r0, imax(r1, r0)),
        [&](int r, long long& cnt) {
          int const y = y0 + r;
          long long row_macs = 0;
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(t, c0, imax(c1, c0)),
              [&](int c, long long& rc) {
                int const x = x0 + c;
                double out = -1.0;
                if (usable(y, x)) {
                  double const model =
                      gather(x, y, r, p * nslots, nfib, fib0, w0, Solution{rhs, p, m}, rc);
                  out = chi2_of(y, x, model);
                }
                pix(p, r * ncol + c) = out;
              },
              row_macs);
          cnt += row_macs;
        },
        team_macs);
    if (t.team_rank() == 0) macs += team_macs;  // all lanes of thread 0 (CUDA convention)
  }
};

/// The three spot sums of a bin's chi2pix and pixmask_fraction (Chi2PixMask), reduced together.
struct SpotSums {
  double msk = 0, num = 0, den = 0;
  KOKKOS_INLINE_FUNCTION SpotSums& operator+=(SpotSums const& o) {
    msk += o.msk;
    num += o.num;
    den += o.den;
    return *this;
  }
};

}  // namespace kspecter::extract::detail

namespace Kokkos {
template <>
struct reduction_identity<kspecter::extract::detail::SpotSums> {
  KOKKOS_FORCEINLINE_FUNCTION static kspecter::extract::detail::SpotSums sum() { return {}; }
};
}  // namespace Kokkos

namespace kspecter::extract::detail {

// chi2pix = (A^T chi^2) / (A^T [totpix_ivar > 0]) and pixmask_fraction = A_core^T [W == 0]
// (pixels off the CCD count as masked), for the core bins of the core fibers.
template <class ExecSpace>
struct Chi2PixMask {
  using T = Types<ExecSpace>;
  using Member = typename T::Member;
  typename T::Spots spots;
  typename T::Corners xc, yc;
  typename T::CTable ptab;
  typename T::Vec pix;
  Kokkos::View<const int*, typename ExecSpace::memory_space> info;
  typename T::Out2 chi2pix, pixmask;
  int ncslots, m, wavepad, sny, snx, npix_y, npix_x, nspec, nrow_max;
  static constexpr int V = T::Tune::vector;  // vector lanes per thread
  static constexpr int kUnroll = 4;          // pixels whose loads a lane issues together

  /// Row iy of spot (f, wb) on the host: masked (m1), chi^2-weighted (n1) and usable (d1)
  /// spot sums. The row's pixels off the CCD count as masked; of those on it, the window's
  /// hold chi^2 (or -1: masked), and the others count in no sum. The window's run is summed
  /// in kHostLanes running sums a kind, so that the compiler keeps them in one vector
  /// register each: three chains of dependent additions a pixel bounded the loop
  /// (perf/cpu_profile.md, session 32).
  static constexpr int kHostLanes = 8;
  KOKKOS_INLINE_FUNCTION void host_row(int p, int f, int wb, int iy, int xs, int y, int r, int nrow,
                                       int ncol, int x0, double& m1, double& n1, double& d1) const {
    double const* const sv = &spots(f, wb, iy, 0);
    bool const row_on = y >= 0 && y < npix_y, row_in = row_on && r >= 0 && r < nrow;
    // Pixels ix in [a, b) are on the CCD, [c, d) in the window (empty off its rows).
    int const a = row_on ? imin(imax(-xs, 0), snx) : snx,
              b = row_on ? imax(imin(npix_x - xs, snx), a) : snx;
    int const c = row_in ? imin(imax(x0 - xs, a), b) : a;
    int const d = row_in ? imax(imin(x0 + ncol - xs, b), c) : a;
    double m = 0;
    for (int ix = 0; ix < a; ++ix) m += sv[ix];
    for (int ix = b; ix < snx; ++ix) m += sv[ix];
    double am[kHostLanes] = {}, an[kHostLanes] = {}, ad[kHostLanes] = {};
    int const len = d - c;
    // The window's run: spot pixels sc[k] over window values vc[k], k < len.
    double const* const sc = sv + c;
    double const* const vc = len > 0 ? &pix(p, r * ncol + xs + c - x0) : nullptr;
    int k = 0;
    for (; k + kHostLanes <= len; k += kHostLanes)
      for (int u = 0; u < kHostLanes; ++u) {
        double const pv = vc[k + u], w = sc[k + u];
        bool const ok = pv >= 0;
        am[u] += ok ? 0.0 : w;
        an[u] += ok ? w * pv : 0.0;
        ad[u] += ok ? w : 0.0;
      }
    for (int u = 0; k < len; ++k, ++u) {
      double const pv = vc[k], w = sc[k];
      bool const ok = pv >= 0;
      am[u] += ok ? 0.0 : w;
      an[u] += ok ? w * pv : 0.0;
      ad[u] += ok ? w : 0.0;
    }
    for (int u = 0; u < kHostLanes; ++u) {
      m += am[u];
      n1 += an[u];
      d1 += ad[u];
    }
    m1 += m;
  }

  KOKKOS_INLINE_FUNCTION void operator()(Member const& t, long long& macs) const {
    int const p = t.league_rank() / ncslots, c = t.league_rank() % ncslots;
    if (c >= ptab(p).ncore) return;
    int const spec = ptab(p).out0 + c;
    if (spec < 0 || spec >= nspec) return;
    int const f = ptab(p).fib0 + ptab(p).core + c;
    int const w0 = ptab(p).wave0, nkeep = ptab(p).nkeep;
    int const x0 = ptab(p).x0, y0 = ptab(p).y0, ncol = ptab(p).pixstride;
    int const nrow = imin(ptab(p).y1 - y0, nrow_max);
    bool const bad_patch = info(p) != 0;
    long long team_macs = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(t, nkeep),
        [&](int jj, long long& cnt) {
          int const wb = w0 + wavepad + jj;
          int const xs = xc(f, wb), ys = yc(f, wb);
          double num = 0, den = 0, msk = 0;
          if constexpr (T::Tune::host_loops) {
            for (int iy = 0; iy < sny; ++iy) {
              // One pass over the row for the three sums (each in the order a pass of its
              // own would take: the same doubles).
              double n1 = 0, d1 = 0, m1 = 0;
              host_row(p, f, wb, iy, xs, ys + iy, ys + iy - y0, nrow, ncol, x0, m1, n1, d1);
              num += n1;
              den += d1;
              msk += m1;
            }
          } else {
            // The spot's pixels over the lanes in row-major order (lane l: pixels l, l + V,
            // ...), the three sums in one pass and one reduction across the lanes. A lane
            // issues the loads of kUnroll pixels before it adds their terms, in the same
            // order: it waits on its loads, not on its sums (perf/gpu_runs.md, session 31).
            double const* const sp = &spots(f, wb, 0, 0);
            SpotSums sums;
            Kokkos::parallel_reduce(
                Kokkos::ThreadVectorRange(t, V),
                [&](int l, SpotSums& acc) {
                  int const npx = sny * snx;
                  int iy = l / snx, ix = l % snx;
                  for (int k = l; k < npx; k += kUnroll * V) {
                    double sv[kUnroll], v[kUnroll];
                    bool live[kUnroll], on[kUnroll], in[kUnroll];
                    for (int u = 0; u < kUnroll; ++u) {
                      int const y = ys + iy, x = xs + ix, r = y - y0, cc = x - x0;
                      live[u] = k + u * V < npx;
                      on[u] = y >= 0 && y < npix_y && x >= 0 && x < npix_x;
                      in[u] = live[u] && on[u] && r >= 0 && r < nrow && cc >= 0 && cc < ncol;
                      v[u] = in[u] ? pix(p, r * ncol + cc) : 0.0;  // the window's value
                      sv[u] = live[u] ? sp[k + u * V] : 0.0;
                      iy += V / snx;
                      ix += V % snx;
                      if (ix >= snx) {
                        ix -= snx;
                        ++iy;
                      }
                    }
                    for (int u = 0; u < kUnroll; ++u) {
                      if (!live[u]) continue;
                      acc.msk += (!on[u] || (in[u] && v[u] < 0)) ? sv[u] : 0.0;  // off, masked
                      acc.num += in[u] && v[u] >= 0 ? sv[u] * v[u] : 0.0;
                      acc.den += in[u] && v[u] >= 0 ? sv[u] : 0.0;
                    }
                  }
                },
                sums);
            num = sums.num;
            den = sums.den;
            msk = sums.msk;
          }
          Kokkos::single(Kokkos::PerThread(t), [&]() {
            double const c2 = (!bad_patch && den > 0) ? num / den : 0.0;
            chi2pix(spec, w0 + jj) = compat::isfinite(c2) ? c2 : 0.0;
            pixmask(spec, w0 + jj) = compat::isfinite(msk) ? msk : 1.0;  // broken spot: all lost
          });
          cnt += 3LL * sny * snx;
        },
        team_macs);
    if (t.team_rank() == 0) macs += team_macs;  // all lanes of thread 0 (CUDA convention)
  }
};

/// The quality stage's window kernels (the row ranges, model_chi2, chi2pix) of a solved batch,
/// on ws.quality_side: ordered after what fc.space has queued (the solve), they run beside the
/// decorrelation and the model image that fc.space goes on with, and assess_quality joins
/// them. They read the solution, the spots, the windows and the image, which neither writes.
/// The pixel products summed (ExtractStats::quality_macs) go to the device, to
/// ws.quality_counts(2 slot) and (2 slot + 1): a reduction to the host would wait for the
/// copies of spectra under way (stitch.hpp). A repeat of the kept solve (`repeat`, reuse.hpp)
/// takes the row ranges that the frame before kept (Workspace::ranges_kept).
template <class ExecSpace>
void start_window_quality(FrameContext<ExecSpace> const& fc, BatchViews<ExecSpace> const& b,
                          Workspace<ExecSpace>& ws, int slot, bool repeat) {
  using T = Types<ExecSpace>;
  using Policy = typename T::Policy;
  using RangeI = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>;
  ExecSpace const q = ws.quality_side.get();
  compat::wait_for(q, fc.space);
  StageTimer<ExecSpace> st(q, "kspecter::extract::quality", fc.times);
  FrameShape const& s = fc.shape;
  using Slots = PatchSlots<ExecSpace>;
  if (!(repeat && ws.ranges_kept))
    Kokkos::parallel_for(
        "kspecter::extract::row_ranges", RangeI(q, 0, b.P * s.nslots),
        RowRanges<ExecSpace, Slots>{b.xc, b.yc, Slots{b.ptab, s.nslots, s.m, b.nrow_max}, ws.rr_all,
                                    ws.xr_all, s.sny, s.snx});
  ws.ranges_kept = reuse_allowed(fc);
  auto const qm = Kokkos::subview(ws.quality_counts, 2 * slot);
  auto const qm2 = Kokkos::subview(ws.quality_counts, 2 * slot + 1);
  Kokkos::parallel_reduce(
      "kspecter::extract::model_chi2", Policy(q, b.P, T::Tune::team, T::Tune::vector),
      ModelChi2<ExecSpace>{{b.spots, b.xc, b.yc, ws.rr_all, ws.xr_all, s.sny, s.snx},
                           b.ptab,
                           ws.weight_strip(),
                           fc.image,
                           b.rhs,
                           ws.pix_all,
                           s.nslots,
                           s.m,
                           s.npy,
                           s.npx,
                           b.nrow_max,
                           fc.psferr,
                           fc.plan.wavepad},
      qm);
  Kokkos::parallel_reduce("kspecter::extract::chi2pix",
                          Policy(q, b.P * s.ncs, T::Tune::team, T::Tune::vector),
                          Chi2PixMask<ExecSpace>{b.spots, b.xc, b.yc, b.ptab, ws.pix_all, b.info,
                                                 ws.chi2, ws.pixmask, s.ncs, s.m, fc.plan.wavepad,
                                                 s.sny, s.snx, s.npy, s.npx, s.nspec, b.nrow_max},
                          qm2);
}

/// The rest of the quality stage, once the batch's spectra are decorrelated: the model image
/// of the bundles the batch completes, then fc.space waits for the window kernels
/// (start_window_quality).
template <class ExecSpace>
void assess_quality(FrameContext<ExecSpace> const& fc, Batch const& batch,
                    BatchViews<ExecSpace> const& b, Workspace<ExecSpace>& ws, bool repeat) {
  {
    StageTimer<ExecSpace> st(fc.space, "kspecter::extract::quality", fc.times);
    if (fc.opt.model && batch.completes_bundles) add_to_frame_model(fc, batch, b, ws, repeat);
  }
  compat::wait_for(fc.space, ws.quality_side.get());
}

}  // namespace kspecter::extract::detail
