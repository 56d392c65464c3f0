// The device kernels of a frame extraction, one functor per step (docs/algorithm.md §3-5).
// Private to src/extract: extract_frame_impl.hpp launches them in order on a batch of patches.
//
// Layout of a batch:
//   spots     [nfb][nfull][sny][snx]   fibers of the batch (from fiber_begin), padded grid
//   xc, yc    [nfb][nfull]             lower-left CCD pixel of each spot
//   ptab      [P][NPT]                 patch table (fields below; windows filled on device)
//   icov      [P][n][n]                n = nslots * m, unknown u = slot * m + bin
//   rhs, fw   [P][n]                   A^T W p (then the solution f), A^T W 1
//   pix       [P][npix_max]            per-patch chi^2 image of the window (-1: no weight)
//
// Every output element is written by exactly one thread and every sum is taken in a fixed
// order, so results are bitwise reproducible run to run (no floating-point atomics).
#pragma once

#include <kspecter/core/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>

namespace kspecter::extract::detail {

// Fields of the patch table.
enum PatchField : int {
  PF_FIB0 = 0,  // first padded fiber, relative to the batch's first fiber
  PF_NFIB,      // padded fibers (real ones; slots nfib .. nslots-1 are identity padding)
  PF_CORE,      // slot of the first core fiber
  PF_NCORE,     // core fibers
  PF_WAVE0,     // first padded bin in the padded grid = first core bin of the output grid
  PF_NKEEP,     // core bins written out
  PF_OUT0,      // output spectrum of the first core fiber (may be outside [0, nspec))
  PF_X0,        // pixel window: columns [X0, X1), rows [Y0, Y1) (CCD coordinates, unclipped)
  PF_X1,
  PF_Y0,
  PF_Y1,
  PF_PIXSTRIDE,  // columns of the window (row stride of the pixel buffer)
  PF_MONO,       // 1 when every padded fiber's yc is non-decreasing over the padded bins
  NPT
};

template <class ExecSpace>
struct Types {
  using exec = ExecSpace;
  using mem = typename ExecSpace::memory_space;
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
  using Member = typename Policy::member_type;
  using Spots = Kokkos::View<const double****, Kokkos::LayoutRight, mem>;
  using Corners = Kokkos::View<const int**, Kokkos::LayoutRight, mem>;
  using Table = Kokkos::View<int**, Kokkos::LayoutRight, mem>;
  using CTable = Kokkos::View<const int**, Kokkos::LayoutRight, mem>;
  using Image = Kokkos::View<const double**, Kokkos::LayoutRight, mem>;
  using Mat = Kokkos::View<double***, Kokkos::LayoutRight, mem>;
  using Vec = Kokkos::View<double**, Kokkos::LayoutRight, mem>;
  using Vec1 = Kokkos::View<double*, mem>;
  using Blocks = Kokkos::View<double****, Kokkos::LayoutRight, mem>;
  using Out2 = Kokkos::View<double**, Kokkos::LayoutRight, mem>;
  using Out3 = Kokkos::View<double***, Kokkos::LayoutRight, mem>;
  using Ranges = Kokkos::View<int****, Kokkos::LayoutRight, mem>;  // [P][slot][row][2]
  // Host backends run one thread per team and no vector lanes; GPUs use lanes along the
  // pixel columns of a spot (coalesced) and several threads per team.
  static constexpr bool on_host =
      Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;
  static constexpr int vector = on_host ? 1 : 16;
  static constexpr int team = on_host ? 1 : 8;
};

KOKKOS_INLINE_FUNCTION int imin(int a, int b) { return a < b ? a : b; }
KOKKOS_INLINE_FUNCTION int imax(int a, int b) { return a > b ? a : b; }

// ---------------------------------------------------------------------------------------
// Pixel weights: W = ivar where ivar > 0 and both ivar and image are finite, else 0; over
// the columns [x0, x0 + ncol) of every row (a batch's strip of the CCD).
template <class ExecSpace>
struct SanitizeWeights {
  typename Types<ExecSpace>::Image image, ivar;
  Kokkos::View<double**, Kokkos::LayoutRight, typename ExecSpace::memory_space> w;
  int x0, ncol;
  KOKKOS_INLINE_FUNCTION void operator()(long idx) const {
    int const y = static_cast<int>(idx / ncol), x = x0 + static_cast<int>(idx % ncol);
    double const v = ivar(y, x), p = image(y, x);
    bool const ok = compat::isfinite(v) && compat::isfinite(p) && v > 0;
    w(y, x) = ok ? v : 0.0;
  }
};

// ---------------------------------------------------------------------------------------
// Pixel window of each patch (gpu_specter _prepare_patch): columns span every spot of the
// padded patch; rows span the spots of the core bins (all padded fibers) plus pixpad_frac of
// the extra rows the wavelength padding adds on each side.
template <class ExecSpace>
struct PlanWindows {
  using T = Types<ExecSpace>;
  typename T::Corners xc, yc;
  typename T::Table ptab;
  int m, wavepad, nwavestep, sny, snx;
  double pixpad_frac;
  KOKKOS_INLINE_FUNCTION void operator()(int p) const {
    int const fib0 = ptab(p, PF_FIB0), nfib = ptab(p, PF_NFIB), w0 = ptab(p, PF_WAVE0);
    int xmin = 2147483647, xmax = -2147483647, ypmin = 2147483647, ypmax = -2147483647;
    int ymin = 2147483647, ymax = -2147483647;
    int mono = 1;
    for (int k = 0; k < nfib; ++k) {
      for (int w = 0; w < m; ++w) {
        int const x = xc(fib0 + k, w0 + w), y = yc(fib0 + k, w0 + w);
        if (w > 0 && y < yc(fib0 + k, w0 + w - 1)) mono = 0;
        xmin = imin(xmin, x);
        xmax = imax(xmax, x + snx);
        ypmin = imin(ypmin, y);
        ypmax = imax(ypmax, y + sny);
        if (w >= wavepad && w < wavepad + nwavestep) {
          ymin = imin(ymin, y);
          ymax = imax(ymax, y + sny);
        }
      }
    }
    // int() truncation as gpu_specter (the arguments are >= 0).
    int const lo = static_cast<int>((ymin - ypmin) * (1.0 - pixpad_frac));
    int const hi = static_cast<int>((ymax - ypmin) + (ypmax - ymax) * pixpad_frac);
    ptab(p, PF_X0) = xmin;
    ptab(p, PF_X1) = xmax;
    ptab(p, PF_Y0) = ypmin + lo;
    ptab(p, PF_Y1) = ypmin + hi;
    ptab(p, PF_PIXSTRIDE) = xmax - xmin;
    ptab(p, PF_MONO) = mono;
  }
};

// ---------------------------------------------------------------------------------------
// iCov = A^T W A, y = A^T W p, fluxweight = A^T W 1, straight from the spots: entry (i, j)
// is the weighted overlap of spots i and j inside the window and the CCD. One team per
// (patch, fiber slot k1) owns the rows of fiber k1: it zeroes their lower triangle and fills
// in the overlaps with fibers k2 <= k1 (bins w2 <= w1 on its own fiber). Only the lower
// triangle is written: the solves read nothing else, and each row is written by one thread,
// contiguously (no memset of the whole matrix, no transposed stores).
template <class ExecSpace>
struct AssembleICov {
  using T = Types<ExecSpace>;
  using Member = typename T::Member;
  typename T::Spots spots;
  typename T::Corners xc, yc;
  typename T::CTable ptab;
  typename T::Image w, image;
  typename T::Mat icov;
  typename T::Vec rhs, fw;
  int nslots, m, sny, snx, npix_y, npix_x;

  // Weighted overlap of spot a (corner xa, ya) and spot b over rows [r0, r1), columns
  // [c0, c1) (already clipped to both spots, the window and the CCD).
  KOKKOS_INLINE_FUNCTION double overlap(Member const& t, double const* a, int xa, int ya,
                                        double const* b, int xb, int yb, int r0, int r1, int c0,
                                        int c1) const {
    double dot = 0;
    if constexpr (T::on_host) {
      for (int r = r0; r < r1; ++r) {
        double const* ar = a + (r - ya) * snx - xa;
        double const* br = b + (r - yb) * snx - xb;
        for (int c = c0; c < c1; ++c) dot += ar[c] * br[c] * w(r, c);
      }
    } else {
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(t, c1 - c0),
          [&](int dc, double& acc) {
            int const c = c0 + dc;
            for (int r = r0; r < r1; ++r)
              acc += a[(r - ya) * snx + c - xa] * b[(r - yb) * snx + c - xb] * w(r, c);
          },
          dot);
    }
    return dot;
  }

  KOKKOS_INLINE_FUNCTION void operator()(Member const& t, long long& macs) const {
    int const p = t.league_rank() / nslots;
    int const k1 = t.league_rank() % nslots;
    int const fib0 = ptab(p, PF_FIB0), nfib = ptab(p, PF_NFIB), w0 = ptab(p, PF_WAVE0);
    if (k1 >= nfib) {  // identity padding: a decoupled unknown with nothing to fit
      Kokkos::parallel_for(Kokkos::TeamThreadRange(t, m), [&](int w1) {
        int const i = k1 * m + w1;
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, i + 1),
                             [&](int j) { icov(p, i, j) = (j == i) ? 1.0 : 0.0; });
        Kokkos::single(Kokkos::PerThread(t), [&]() {
          rhs(p, i) = 0.0;
          fw(p, i) = 0.0;
        });
      });
      return;
    }
    // Rows usable by this patch: its window, clipped to the CCD.
    int const ylo = imax(ptab(p, PF_Y0), 0), yhi = imin(ptab(p, PF_Y1), npix_y);
    bool const mono = ptab(p, PF_MONO) != 0;
    int const f1 = fib0 + k1;
    // The team's rows start at zero (lower triangle, contiguous stores); the barrier orders
    // these stores before the band entries, which other lanes may write.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, m), [&](int w1) {
      int const i = k1 * m + w1;
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, i + 1),
                           [&](int j) { icov(p, i, j) = 0.0; });
    });
    t.team_barrier();
    long long team_macs = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(t, m),
        [&](int w1, long long& cnt) {
          int const i = k1 * m + w1;
          int const xa = xc(f1, w0 + w1), ya = yc(f1, w0 + w1);
          double const* a = &spots(f1, w0 + w1, 0, 0);
          // y and fluxweight over the spot's own pixels.
          {
            int const r0 = imax(ya, ylo), r1 = imin(ya + sny, yhi);
            int const c0 = imax(xa, 0), c1 = imin(xa + snx, npix_x);
            double sy = 0, sw = 0;
            if (r1 > r0 && c1 > c0) {
              if constexpr (T::on_host) {
                for (int r = r0; r < r1; ++r) {
                  double const* ar = a + (r - ya) * snx - xa;
                  for (int c = c0; c < c1; ++c) {
                    double const wv = w(r, c);
                    double const aw = ar[c] * wv;
                    sw += aw;
                    if (wv > 0) sy += aw * image(r, c);
                  }
                }
              } else {
                Kokkos::parallel_reduce(
                    Kokkos::ThreadVectorRange(t, c1 - c0),
                    [&](int dc, double& acc) {
                      int const c = c0 + dc;
                      for (int r = r0; r < r1; ++r) acc += a[(r - ya) * snx + c - xa] * w(r, c);
                    },
                    sw);
                Kokkos::parallel_reduce(
                    Kokkos::ThreadVectorRange(t, c1 - c0),
                    [&](int dc, double& acc) {
                      int const c = c0 + dc;
                      for (int r = r0; r < r1; ++r) {
                        double const wv = w(r, c);
                        if (wv > 0) acc += a[(r - ya) * snx + c - xa] * wv * image(r, c);
                      }
                    },
                    sy);
              }
              cnt += 2LL * (r1 - r0) * (c1 - c0);  // every lane: team reductions need equal lanes
            }
            Kokkos::single(Kokkos::PerThread(t), [&]() {
              rhs(p, i) = sy;
              fw(p, i) = sw;
            });
          }
          // Overlaps with the spots of fibers k2 <= k1 (bins w2 <= w1 on fiber k1).
          for (int k2 = 0; k2 <= k1; ++k2) {
            int const f2 = fib0 + k2;
            int const we = (k2 == k1) ? w1 + 1 : m;  // candidate bins [0, we)
            // Range [lo, hi] of bins whose spot box can meet spot a's box: bins with
            // ya - sny < yc < ya + sny. A binary search when yc grows with the bin (any real
            // trace), else a scan of every bin.
            int lo = m, hi = -1;
            if (mono) {
              int a0 = 0, a1 = we;  // first bin with yc > ya - sny
              while (a0 < a1) {
                int const mid = (a0 + a1) / 2;
                if (yc(f2, w0 + mid) > ya - sny)
                  a1 = mid;
                else
                  a0 = mid + 1;
              }
              lo = a0;
              int b0 = lo, b1 = we;  // first bin with yc >= ya + sny
              while (b0 < b1) {
                int const mid = (b0 + b1) / 2;
                if (yc(f2, w0 + mid) >= ya + sny)
                  b1 = mid;
                else
                  b0 = mid + 1;
              }
              hi = b0 - 1;
            } else {
              Kokkos::parallel_reduce(
                  Kokkos::ThreadVectorRange(t, we),
                  [&](int w2, int& v) {
                    int const dy = yc(f2, w0 + w2) - ya;
                    if (dy < sny && -dy < sny && w2 < v) v = w2;
                  },
                  Kokkos::Min<int>(lo));
              Kokkos::parallel_reduce(
                  Kokkos::ThreadVectorRange(t, we),
                  [&](int w2, int& v) {
                    int const dy = yc(f2, w0 + w2) - ya;
                    if (dy < sny && -dy < sny && w2 > v) v = w2;
                  },
                  Kokkos::Max<int>(hi));
            }
            for (int w2 = lo; w2 <= hi; ++w2) {
              int const xb = xc(f2, w0 + w2), yb = yc(f2, w0 + w2);
              int const r0 = imax(imax(ya, yb), ylo), r1 = imin(imin(ya, yb) + sny, yhi);
              int const c0 = imax(imax(xa, xb), 0), c1 = imin(imin(xa, xb) + snx, npix_x);
              if (r1 <= r0 || c1 <= c0) continue;
              double const* b = &spots(f2, w0 + w2, 0, 0);
              double const v = overlap(t, a, xa, ya, b, xb, yb, r0, r1, c0, c1);
              int const j = k2 * m + w2;
              Kokkos::single(Kokkos::PerThread(t), [&]() { icov(p, i, j) = v; });
              cnt += static_cast<long long>(r1 - r0) * (c1 - c0);
            }
          }
        },
        team_macs);
    if (t.team_rank() == 0) macs += team_macs;  // all lanes of thread 0 (CUDA convention)
  }
};

// ---------------------------------------------------------------------------------------
// Weak prior (§4): minweight = 1e-4 max(fluxweight); bins below it get alpha =
// minweight - fluxweight, the others alpha = regularize; iCov += diag(alpha^2 + 1e-15).
template <class ExecSpace>
struct ApplyPrior {
  using T = Types<ExecSpace>;
  using Member = typename T::Member;
  typename T::CTable ptab;
  typename T::Mat icov;
  typename T::Vec fw;
  typename T::Vec1 minweight;
  int m;
  double regularize;
  KOKKOS_INLINE_FUNCTION void operator()(Member const& t) const {
    int const p = t.league_rank();
    int const nreal = ptab(p, PF_NFIB) * m;
    double mx = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(t, nreal),
        [&](int i, double& v) {
          if (fw(p, i) > v) v = fw(p, i);
        },
        Kokkos::Max<double>(mx));
    double const minw = 1e-4 * (mx > 0 ? mx : 0.0);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, nreal), [&](int i) {
      double const f = fw(p, i);
      double const alpha = f < minw ? minw - f : regularize;
      Kokkos::single(Kokkos::PerThread(t), [&]() { icov(p, i, i) += alpha * alpha + 1e-15; });
    });
    Kokkos::single(Kokkos::PerTeam(t), [&]() { minweight(p) = minw; });
  }
};

// ---------------------------------------------------------------------------------------
// After the Cholesky: a patch whose factorisation failed gets L = I and y = 0, so every
// later step stays finite; its bins are masked (ivar = 0) when the results are written.
template <class ExecSpace>
struct RepairFailed {
  using T = Types<ExecSpace>;
  using Member = typename T::Member;
  typename T::Mat icov;
  typename T::Vec rhs;
  Kokkos::View<const int*, typename ExecSpace::memory_space> info;
  int n;
  KOKKOS_INLINE_FUNCTION void operator()(Member const& t) const {
    int const p = t.league_rank();
    if (info(p) == 0) return;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, n), [&](int i) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, n),
                           [&](int j) { icov(p, i, j) = (i == j) ? 1.0 : 0.0; });
      Kokkos::single(Kokkos::PerThread(t), [&]() { rhs(p, i) = 0.0; });
    });
  }
};

// ---------------------------------------------------------------------------------------
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
    int const ncore = ptab(p, PF_NCORE), slot = ptab(p, PF_CORE) + c;
    int const b = p * ncslots + c;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, m), [&](int r) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, m), [&](int s) {
        q(b, r, s) = (c < ncore) ? cblocks(p, slot, r, s) : (r == s ? 1.0 : 0.0);
      });
    });
  }
};

// ---------------------------------------------------------------------------------------
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

  static int scratch_bytes(int m) { return static_cast<int>(Scratch::shmem_size(m)); }

  KOKKOS_INLINE_FUNCTION void operator()(Member const& t) const {
    int const p = t.league_rank() / ncslots, c = t.league_rank() % ncslots;
    if (c >= ptab(p, PF_NCORE)) return;
    int const spec = ptab(p, PF_OUT0) + c;
    if (spec < 0 || spec >= nspec) return;
    int const slot = ptab(p, PF_CORE) + c;
    int const b = p * ncslots + c;
    int const wout0 = ptab(p, PF_WAVE0), nkeep = ptab(p, PF_NKEEP);
    bool const bad_patch = info(p) != 0;
    double const minw = minweight(p);
    Scratch s(t.team_scratch(0), m);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, m), [&](int r) {
      double sum = 0;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(t, m), [&](int col, double& acc) { acc += q(b, r, col); }, sum);
      Kokkos::single(Kokkos::PerThread(t), [&]() { s(r) = sum; });
    });
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
        failed(spec, wout) = bad_patch ? 1 : 0;
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

// ---------------------------------------------------------------------------------------
// For each patch, fiber slot and window row: the range [lo, hi] of padded bins whose spot
// covers that row (lo > hi: none), and the columns [xlo, xhi) the slot's spots span. Lets
// the model gather its spots per pixel.
template <class ExecSpace>
struct RowRanges {
  using T = Types<ExecSpace>;
  typename T::Corners xc, yc;
  typename T::CTable ptab;
  typename T::Ranges rr;  // [P][nslots][nrow_max][2]
  Kokkos::View<int***, Kokkos::LayoutRight, typename ExecSpace::memory_space> xr;  // [P][nslots][2]
  int nslots, m, sny, snx, nrow_max;
  KOKKOS_INLINE_FUNCTION void operator()(int idx) const {
    int const p = idx / nslots, k = idx % nslots;
    int const y0 = ptab(p, PF_Y0), nrow = imin(ptab(p, PF_Y1) - y0, nrow_max);
    for (int r = 0; r < nrow; ++r) {
      rr(p, k, r, 0) = m;
      rr(p, k, r, 1) = -1;
    }
    xr(p, k, 0) = 0;
    xr(p, k, 1) = 0;
    if (k >= ptab(p, PF_NFIB)) return;
    int const f = ptab(p, PF_FIB0) + k, w0 = ptab(p, PF_WAVE0);
    int xlo = 2147483647, xhi = -2147483647;
    for (int w = 0; w < m; ++w) {
      int const ylo = yc(f, w0 + w) - y0;
      xlo = imin(xlo, xc(f, w0 + w));
      xhi = imax(xhi, xc(f, w0 + w) + snx);
      for (int r = imax(ylo, 0); r < imin(ylo + sny, nrow); ++r) {
        if (w < rr(p, k, r, 0)) rr(p, k, r, 0) = w;
        if (w > rr(p, k, r, 1)) rr(p, k, r, 1) = w;
      }
    }
    xr(p, k, 0) = xlo;
    xr(p, k, 1) = xhi;
  }
};

// ---------------------------------------------------------------------------------------
// Model of the window (A f over the padded patch, §5) and its chi^2 per pixel:
// totpix_ivar = 1 / (1/W + (psferr model + 1e-32)^2), chi^2 = (p - model)^2 totpix_ivar.
// Pixels with W = 0 or off the CCD store -1.
template <class ExecSpace>
struct ModelChi2 {
  using T = Types<ExecSpace>;
  using Member = typename T::Member;
  typename T::Spots spots;
  typename T::Corners xc, yc;
  typename T::CTable ptab;
  typename T::Ranges rr;
  Kokkos::View<const int***, Kokkos::LayoutRight, typename ExecSpace::memory_space> xr;
  typename T::Image w, image;
  typename T::Vec rhs;  // the solution f
  typename T::Vec pix;  // [P][npix_max]
  int nslots, m, sny, snx, npix_y, npix_x, nrow_max;
  double psferr;
  KOKKOS_INLINE_FUNCTION void operator()(Member const& t, long long& macs) const {
    int const p = t.league_rank();
    int const x0 = ptab(p, PF_X0), y0 = ptab(p, PF_Y0), nfib = ptab(p, PF_NFIB);
    int const ncol = ptab(p, PF_PIXSTRIDE), nrow = imin(ptab(p, PF_Y1) - y0, nrow_max);
    int const fib0 = ptab(p, PF_FIB0), w0 = ptab(p, PF_WAVE0);
    long long team_macs = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(t, nrow),
        [&](int r, long long& cnt) {
          int const y = y0 + r;
          long long row_macs = 0;
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(t, ncol),
              [&](int c, long long& rc) {
                int const x = x0 + c;
                double out = -1.0;
                if (y >= 0 && y < npix_y && x >= 0 && x < npix_x && w(y, x) > 0) {
                  double model = 0;
                  for (int k = 0; k < nfib; ++k) {
                    if (x < xr(p, k, 0) || x >= xr(p, k, 1)) continue;
                    int const f = fib0 + k;
                    int const hi = rr(p, k, r, 1);
                    for (int wb = rr(p, k, r, 0); wb <= hi; ++wb) {
                      int const dx = x - xc(f, w0 + wb), dy = y - yc(f, w0 + wb);
                      if (dx >= 0 && dx < snx && dy >= 0 && dy < sny) {
                        model += spots(f, w0 + wb, dy, dx) * rhs(p, k * m + wb);
                        ++rc;
                      }
                    }
                  }
                  double const wv = w(y, x);
                  double const e = psferr * model + 1e-32;
                  double const tot = wv / (1.0 + wv * e * e);
                  double const d = image(y, x) - model;
                  out = d * d * tot;
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

// ---------------------------------------------------------------------------------------
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
  KOKKOS_INLINE_FUNCTION void operator()(Member const& t, long long& macs) const {
    int const p = t.league_rank() / ncslots, c = t.league_rank() % ncslots;
    if (c >= ptab(p, PF_NCORE)) return;
    int const spec = ptab(p, PF_OUT0) + c;
    if (spec < 0 || spec >= nspec) return;
    int const f = ptab(p, PF_FIB0) + ptab(p, PF_CORE) + c;
    int const w0 = ptab(p, PF_WAVE0), nkeep = ptab(p, PF_NKEEP);
    int const x0 = ptab(p, PF_X0), y0 = ptab(p, PF_Y0), ncol = ptab(p, PF_PIXSTRIDE);
    int const nrow = imin(ptab(p, PF_Y1) - y0, nrow_max);
    bool const bad_patch = info(p) != 0;
    long long team_macs = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(t, nkeep),
        [&](int jj, long long& cnt) {
          int const wb = w0 + wavepad + jj;
          int const xs = xc(f, wb), ys = yc(f, wb);
          double num = 0, den = 0, msk = 0;
          for (int iy = 0; iy < sny; ++iy) {
            int const y = ys + iy, r = y - y0;
            double n1 = 0, d1 = 0, m1 = 0;
            Kokkos::parallel_reduce(
                Kokkos::ThreadVectorRange(t, snx),
                [&](int ix, double& acc) {
                  int const x = xs + ix, cc = x - x0;
                  double const sv = spots(f, wb, iy, ix);
                  bool const on = y >= 0 && y < npix_y && x >= 0 && x < npix_x;
                  bool const inwin = r >= 0 && r < nrow && cc >= 0 && cc < ncol;
                  if (!on)
                    acc += sv;  // off the CCD: masked
                  else if (inwin && pix(p, r * ncol + cc) < 0)
                    acc += sv;
                },
                m1);
            Kokkos::parallel_reduce(
                Kokkos::ThreadVectorRange(t, snx),
                [&](int ix, double& acc) {
                  int const x = xs + ix, cc = x - x0;
                  bool const inwin = y >= 0 && y < npix_y && x >= 0 && x < npix_x && r >= 0 &&
                                     r < nrow && cc >= 0 && cc < ncol;
                  if (inwin) {
                    double const v = pix(p, r * ncol + cc);
                    if (v >= 0) acc += spots(f, wb, iy, ix) * v;
                  }
                },
                n1);
            Kokkos::parallel_reduce(
                Kokkos::ThreadVectorRange(t, snx),
                [&](int ix, double& acc) {
                  int const x = xs + ix, cc = x - x0;
                  bool const inwin = y >= 0 && y < npix_y && x >= 0 && x < npix_x && r >= 0 &&
                                     r < nrow && cc >= 0 && cc < ncol;
                  if (inwin && pix(p, r * ncol + cc) >= 0) acc += spots(f, wb, iy, ix);
                },
                d1);
            num += n1;
            den += d1;
            msk += m1;
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

// ---------------------------------------------------------------------------------------
// Frame model image (optional): for each fiber of the batch and CCD row, the range of output
// bins whose spot covers the row; then every pixel of the batch's box gathers spot x f over
// the kept bins with ivar > 0 and adds it to the model (batches run one after the other, and
// one thread owns each pixel, so the sum is deterministic).
template <class ExecSpace>
struct FrameRowRanges {
  using T = Types<ExecSpace>;
  typename T::Corners yc;
  Kokkos::View<int***, Kokkos::LayoutRight, typename ExecSpace::memory_space> rr;  // [nf][ny][2]
  Kokkos::View<int**, Kokkos::LayoutRight, typename ExecSpace::memory_space> xr;   // [nf][2]
  typename T::Corners xc;
  int fiber_off, wavepad, nwave, sny, snx, npix_y;
  KOKKOS_INLINE_FUNCTION void operator()(int k) const {
    int const f = fiber_off + k;
    for (int y = 0; y < npix_y; ++y) {
      rr(k, y, 0) = nwave;
      rr(k, y, 1) = -1;
    }
    int xlo = 2147483647, xhi = -2147483647;
    for (int iw = 0; iw < nwave; ++iw) {
      int const y0 = yc(f, wavepad + iw), x0 = xc(f, wavepad + iw);
      xlo = imin(xlo, x0);
      xhi = imax(xhi, x0 + snx);
      for (int y = imax(y0, 0); y < imin(y0 + sny, npix_y); ++y) {
        if (iw < rr(k, y, 0)) rr(k, y, 0) = iw;
        if (iw > rr(k, y, 1)) rr(k, y, 1) = iw;
      }
    }
    xr(k, 0) = xlo;
    xr(k, 1) = xhi;
  }
};

template <class ExecSpace>
struct FrameModel {
  using T = Types<ExecSpace>;
  typename T::Spots spots;
  typename T::Corners xc, yc;
  Kokkos::View<const int***, Kokkos::LayoutRight, typename ExecSpace::memory_space> rr;
  Kokkos::View<const int**, Kokkos::LayoutRight, typename ExecSpace::memory_space> xr;
  Kokkos::View<const double**, Kokkos::LayoutRight, typename ExecSpace::memory_space> deconv, ivar;
  Kokkos::View<double**, Kokkos::LayoutRight, typename ExecSpace::memory_space> model;
  int fiber_off, nf, spec_off, wavepad, sny, snx, xbox0, nxbox;
  KOKKOS_INLINE_FUNCTION void operator()(long idx) const {
    int const y = static_cast<int>(idx / nxbox), x = xbox0 + static_cast<int>(idx % nxbox);
    double acc = 0;
    for (int k = 0; k < nf; ++k) {
      if (x < xr(k, 0) || x >= xr(k, 1)) continue;
      int const f = fiber_off + k, spec = spec_off + k;
      int const hi = rr(k, y, 1);
      for (int iw = rr(k, y, 0); iw <= hi; ++iw) {
        int const dx = x - xc(f, wavepad + iw), dy = y - yc(f, wavepad + iw);
        if (dx >= 0 && dx < snx && dy >= 0 && dy < sny && ivar(spec, iw) > 0)
          acc += spots(f, wavepad + iw, dy, dx) * deconv(spec, iw);
      }
    }
    model(y, x) += acc;
  }
};

}  // namespace kspecter::extract::detail
