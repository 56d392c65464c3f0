// Stage "assembly" (docs/algorithm.md §4): iCov = A^T W A, y = A^T W p and
// fluxweight = A^T W 1 of every patch of the batch, then the weak prior on iCov's diagonal.
#pragma once

#include "context.hpp"
#include "solve_variant.hpp"
#include "workspace.hpp"

#include <kspecter/core/allocate.hpp>
#include <kspecter/solve/band.hpp>

namespace kspecter::extract::detail {

/// q = n / d and r = n mod d for 0 <= n < 2^22 and d >= 1, from rd = 1 / d in float and one
/// correction: a GPU has no integer divider, and a division a pixel loop costs more
/// instructions than the products it indexes.
KOKKOS_INLINE_FUNCTION void small_divmod(int n, int d, float rd, int& q, int& r) {
  q = int((float(n) + 0.5f) * rd);
  r = n - q * d;
  if (r < 0) {
    --q;
    r += d;
  } else if (r >= d) {
    ++q;
    r -= d;
  }
}

// iCov = A^T W A, y = A^T (W p), fluxweight = A^T W 1, straight from the spots: entry (i, j)
// is the weighted overlap of spots i and j inside the window and the CCD. One team per
// (patch, fiber slot k1) owns the rows of fiber k1: it zeroes their lower triangle and fills
// in the overlaps with fibers k2 <= k1 (bins w2 <= w1 on its own fiber). Only the lower
// triangle is written: the solves read nothing else, and each row is written by one thread,
// contiguously (no memset of the whole matrix, no transposed stores). On the band path
// (Solve = BandSolve, band_solve.hpp) each pair goes to the band in wavelength-major order
// instead, still once; the band was zeroed before (its rows mix the teams' fibers). On a GPU
// a thread takes a row (spot a): its V lanes share spot a's pixels for the weighted copy aw
// and the sums y and fluxweight (the lanes' shares wait in a PairBuffer, summed kPairs at a
// time by flush()), then take a pair each, summed by overlap() as on the host.
//
// kRhsOnly: y alone, summed exactly as above, for a frame that keeps the last frame's factor
// (reuse.hpp): no matrix entry is touched. A host sums y as A^T (W p) from the weighted image
// and keeps the last fluxweight (its weights are the kept ones): a third fewer loads, 11.7 ->
// 7.7 ms a bundle on 2 cores. A GPU sums (A W)^T p from the weights and the image, and
// fluxweight again: the weighted image's fewer loads made an H200's y slower, 2.5 -> 2.7-2.9
// ms (perf/gpu_runs.md, session 32).
template <class ExecSpace, class Solve, bool kRhsOnly = false>
struct AssembleICov {
  static constexpr bool kBand = is_band_v<Solve>;
  using T = Types<ExecSpace>;
  using Member = typename T::Member;
  typename T::Spots spots;
  typename T::Corners xc, yc;
  typename T::CTable ptab;
  WeightStrip<typename T::mem> w, wp;  // W and, on a host, the weighted image W p
  typename T::Image image;             // p, which a GPU reads
  typename T::Mat icov;                // dense path: [P][n][n]
  typename T::Vec rhs, fw;
  int nslots, m, sny, snx, npix_y, npix_x;
  int scratch_level;  // 0, or 1 where spots too large for level 0 make it
  solve::BandBatch<typename ExecSpace::memory_space> band;  // band path: [P][n][hw + 1]
  static constexpr int V = T::Tune::assembly_vector;        // vector lanes per thread

  /// Team scratch: each fiber slot's range of spot columns over the patch's bins and, on a GPU,
  /// each thread's PairBuffer.
  KOKKOS_INLINE_FUNCTION static std::size_t scratch_bytes(int nslots, int spot_px) {
    std::size_t const pairs = T::Tune::host_loops
                                  ? aw_pixels(spot_px) * sizeof(double)
                                  : T::Tune::assembly_team * pair_buffer_bytes(spot_px);
    return pairs + 2 * sizeof(int) * std::size_t(nslots);
  }

  // Pixels of the weighted copy aw of spot a, which the pairs read: none for y alone.
  KOKKOS_INLINE_FUNCTION static constexpr int aw_pixels(int spot_px) {
    return kRhsOnly ? 0 : spot_px;
  }

  // Entry (fiber slot k1, bin w1; slot k2, bin w2) of patch p's iCov, on or below the diagonal:
  // the dense matrix's (fiber-major unknowns u = slot * m + bin) or the band's (wavelength-major
  // unknowns v = bin * nslots + slot).
  KOKKOS_INLINE_FUNCTION double* entry(int p, int k1, int w1, int k2, int w2) const {
    if constexpr (!kBand) {
      return &icov(p, k1 * m + w1, k2 * m + w2);
    } else {
      int const vi = w1 * nslots + k1, vj = w2 * nslots + k2;
      int const hi = vi > vj ? vi : vj, d = vi > vj ? vi - vj : vj - vi;
      return &band(p, hi, int(band.extent(2)) - 1 - d);
    }
  }

  // Lane l's walk over a box of C columns from row r0, column c0, in row-major order: pixels
  // l, l + V, l + 2 V, ..., stepped without a division (each_pixel, lane_rhs).
  struct LaneWalk {
    int r = 0, c = 0, dr = 0, dc = 0, c0, C;
    KOKKOS_INLINE_FUNCTION LaneWalk(int l, int r0, int first_col, int ncol)
        : c0(first_col), C(ncol) {
      float const rc = 1.0f / float(C);
      small_divmod(V, C, rc, dr, dc);
      small_divmod(l, C, rc, r, c);
      r += r0;
      c += c0;
    }
    KOKKOS_INLINE_FUNCTION void step() {
      r += dr;
      c += dc;
      if (c >= c0 + C) {
        c -= C;
        ++r;
      }
    }
  };

  // f(r, c) for lane l's pixels of rows [r0, r1) x columns [c0, c1) in row-major order.
  template <class F>
  KOKKOS_INLINE_FUNCTION static void each_pixel(int l, int r0, int r1, int c0, int c1, F&& f) {
    int const C = c1 - c0, npx = (r1 - r0) * C;
    if (C <= 0 || r1 <= r0 || npx <= l) return;
    LaneWalk p(l, r0, c0, C);
    for (int k = l; k < npx; k += V, p.step()) f(p.r, p.c);
  }

  // y alone (kRhsOnly) on a GPU: lane l's shares of fluxweight and y over its pixels l, l + V,
  // ... of spot a's box (corner xa, ya) inside rows [r0, r1) and columns [c0, c1), summed in
  // each_pixel's order, as the full assembly sums them. The loads of kUnroll pixels are issued
  // before their sums: a lane waits on its loads, not on its sums (perf/gpu_runs.md, session 30).
  static constexpr int kUnroll = 4;
  KOKKOS_INLINE_FUNCTION void lane_rhs(int l, double const* a, int xa, int ya, int r0, int r1,
                                       int c0, int c1, double& sw, double& sy) const {
    int const npx = sny * snx;
    LaneWalk p(l, ya, xa, snx);
    for (int k = l; k < npx; k += kUnroll * V) {
      double av[kUnroll], wv[kUnroll], pv[kUnroll];
      bool in[kUnroll];
      for (int u = 0; u < kUnroll; ++u, p.step()) {
        int const r = p.r, c = p.c;
        in[u] = k + u * V < npx && r >= r0 && r < r1 && c >= c0 && c < c1;
        av[u] = in[u] ? a[k + u * V] : 0.0;
        wv[u] = in[u] ? w(r, c) : 0.0;
        pv[u] = in[u] ? image(r, c) : 0.0;
      }
      for (int u = 0; u < kUnroll; ++u)
        if (in[u]) {
          double const aw = av[u] * wv[u];
          sw += aw;
          if (wv[u] > 0) sy += aw * pv[u];
        }
    }
  }

  // Weighted overlap of spot a (corner xa, ya) and spot b over rows [r0, r1), columns
  // [c0, c1) (already clipped to both spots, the window and the CCD), from aw = spot a times
  // the weights (a's box): four running sums in a fixed order, which the host keeps in vector
  // registers; on a GPU a lane's pair (one or two sums were slower than four, though they
  // need fewer registers: perf/gpu_runs.md, session 19).
  KOKKOS_INLINE_FUNCTION double overlap(double const* aw, int xa, int ya, double const* b, int xb,
                                        int yb, int r0, int r1, int c0, int c1) const {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int const C = c1 - c0;
    for (int r = r0; r < r1; ++r) {
      double const* x = aw + (r - ya) * snx + (c0 - xa);
      double const* y = b + (r - yb) * snx + (c0 - xb);
      int c = 0;
      for (; c + 4 <= C; c += 4) {
        s0 += x[c] * y[c];
        s1 += x[c + 1] * y[c + 1];
        s2 += x[c + 2] * y[c + 2];
        s3 += x[c + 3] * y[c + 3];
      }
      for (; c < C; ++c) s0 += x[c] * y[c];
    }
    return (s0 + s1) + (s2 + s3);
  }

  /// GPU scratch of a thread: the weighted spot of its row, and the lanes' shares of up to
  /// kPairs sums (a row's y and fluxweight) with where each goes.
  static constexpr int kPairs = T::Tune::assembly_pairs;
  static constexpr int kPartStride = V + 1;  // a sum's V shares; odd: lanes read across sums
  struct PairBuffer {
    double* part;  // [kPairs][kPartStride]
    double* aw;    // [sny][snx]: spot a times the weights, 0 off the window and the CCD
    double** at;   // [kPairs]
    int n = 0;
    int lane = 0;  // this lane's index among the thread's V
  };
  KOKKOS_INLINE_FUNCTION static std::size_t pair_buffer_bytes(int spot_px) {
    return (kPairs * kPartStride + aw_pixels(spot_px)) * sizeof(double) + kPairs * sizeof(double*);
  }

  // Kokkos ends a vector loop with a sync of the thread's lanes (a GPU's), and has no other.
  KOKKOS_INLINE_FUNCTION static void lane_sync(Member const& t) {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, 1), [](int) {});
  }

  // This lane's share v of the sum that goes to *at.
  KOKKOS_INLINE_FUNCTION static void push(Member const& t, PairBuffer& pb, double v, double* at) {
    pb.part[pb.n * kPartStride + pb.lane] = v;
    if (pb.lane == 0) pb.at[pb.n] = at;
    if (++pb.n == kPairs) flush(t, pb);
  }

  // Sum q = its shares summed in lane order, lane q taking sum q: one pass a kPairs sums,
  // cheaper than a reduction across the lanes a sum. The lanes sync before the shares are
  // read, and again at the summing loop's end.
  KOKKOS_INLINE_FUNCTION static void flush(Member const& t, PairBuffer& pb) {
    lane_sync(t);
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, pb.n), [&](int q) {
      double const* s = pb.part + q * kPartStride;
      double v = 0;
      for (int l = 0; l < V; ++l) v += s[l];
      *pb.at[q] = v;
    });
    pb.n = 0;
  }

  // GPU: a team per (patch, slot), the band zeroed before the launch. Host: a thread per
  // patch, which zeroes the patch's band and then assembles its slots in turn, so the band is
  // written while it is in the thread's cache instead of in a pass of its own.
  KOKKOS_INLINE_FUNCTION void operator()(Member const& t, long long& macs) const {
    char* const shmem = static_cast<char*>(
        t.team_scratch(scratch_level).get_shmem(scratch_bytes(nslots, sny * snx)));
    if constexpr (T::Tune::host_loops) {
      PairBuffer pb{nullptr, reinterpret_cast<double*>(shmem), nullptr};  // aw only
      int* const xr = reinterpret_cast<int*>(shmem + aw_pixels(sny * snx) * sizeof(double));
      int const p = t.league_rank();
      if constexpr (kBand && !kRhsOnly) {
        double* const bp = &band(p, 0, 0);
        long const len = long(band.extent(1)) * long(band.extent(2));
        for (long i = 0; i < len; ++i) bp[i] = 0.0;
      }
      if constexpr (!kRhsOnly) column_ranges(t, p, nslots - 1, xr);
      for (int k1 = 0; k1 < nslots; ++k1) slot(t, p, k1, xr, &pb, macs);
    } else {
      std::size_t const per_thread = pair_buffer_bytes(sny * snx);
      int* const xr = reinterpret_cast<int*>(shmem + t.team_size() * per_thread);
      double* const mine = reinterpret_cast<double*>(shmem + t.team_rank() * per_thread);
      PairBuffer pb{mine, mine + kPairs * kPartStride,
                    reinterpret_cast<double**>(mine + kPairs * kPartStride + aw_pixels(sny * snx))};
      // The lanes run the pair loop together, each on its own share of the pixels (the
      // vector loops a pair cost more instructions than the pair's products).
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, V), [&](int l) { pb.lane = l; });
      int const p = t.league_rank() / nslots, k1 = t.league_rank() - p * nslots;
      if constexpr (!kRhsOnly) {  // y alone meets no other spot
        column_ranges(t, p, k1, xr);
        t.team_barrier();
      }
      slot(t, p, k1, xr, &pb, macs);
    }
  }

  // xr[2k], xr[2k + 1]: the least and the greatest spot column corner of fiber slot k over
  // the patch's bins, for slots k <= k1 that hold a fiber. A fiber whose spots all lie
  // snx or more columns away from spot a has no overlap with it: slot() skips it whole.
  KOKKOS_INLINE_FUNCTION void column_ranges(Member const& t, int p, int k1, int* xr) const {
    int const fib0 = ptab(p).fib0, nfib = imin(ptab(p).nfib, k1 + 1), w0 = ptab(p).wave0;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, nfib), [&](int k) {
      int lo = 0, hi = 0;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(t, m),
          [&](int wb, int& v) {
            int const x = xc(fib0 + k, w0 + wb);
            if (x < v) v = x;
          },
          Kokkos::Min<int>(lo));
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(t, m),
          [&](int wb, int& v) {
            int const x = xc(fib0 + k, w0 + wb);
            if (x > v) v = x;
          },
          Kokkos::Max<int>(hi));
      Kokkos::single(Kokkos::PerThread(t), [&]() {
        xr[2 * k] = lo;
        xr[2 * k + 1] = hi;
      });
    });
  }

  // pb: the thread's PairBuffer (on the host its aw only: each pair is stored at once).
  KOKKOS_INLINE_FUNCTION void slot(Member const& t, int p, int k1, int const* xr, PairBuffer* pb,
                                   long long& macs) const {
    int const fib0 = ptab(p).fib0, nfib = ptab(p).nfib, w0 = ptab(p).wave0;
    if (k1 >= nfib) {  // identity padding: a decoupled unknown with nothing to fit
      Kokkos::parallel_for(Kokkos::TeamThreadRange(t, m), [&](int w1) {
        int const i = k1 * m + w1;
        if constexpr (!kRhsOnly && !kBand)
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, i + 1),
                               [&](int j) { icov(p, i, j) = (j == i) ? 1.0 : 0.0; });
        else if constexpr (!kRhsOnly)
          Kokkos::single(Kokkos::PerThread(t), [&]() { *entry(p, k1, w1, k1, w1) = 1.0; });
        Kokkos::single(Kokkos::PerThread(t), [&]() {
          rhs(p, i) = 0.0;
          if constexpr (!kRhsOnly || !T::Tune::host_loops) fw(p, i) = 0.0;
        });
      });
      return;
    }
    // Rows usable by this patch: its window, clipped to the CCD.
    int const ylo = imax(ptab(p).y0, 0), yhi = imin(ptab(p).y1, npix_y);
    bool const mono = ptab(p).mono != 0;
    int const f1 = fib0 + k1;
    // The team's rows start at zero (lower triangle, contiguous stores); the barrier orders
    // these stores before the band entries, which other lanes may write.
    if constexpr (!kBand && !kRhsOnly) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(t, m), [&](int w1) {
        int const i = k1 * m + w1;
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, i + 1),
                             [&](int j) { icov(p, i, j) = 0.0; });
      });
      t.team_barrier();
    }
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
            if constexpr (T::Tune::host_loops) {
              double* const aw = pb->aw;  // y alone keeps no copy
              if constexpr (!kRhsOnly)
                for (int k = 0; k < sny * snx; ++k) aw[k] = 0.0;
              for (int r = r0; r < r1; ++r) {
                double const* ar = a + (r - ya) * snx - xa;
                if constexpr (!kRhsOnly) {
                  double* const awr = aw + (r - ya) * snx - xa;
                  for (int c = c0; c < c1; ++c) {
                    double const v = ar[c] * w(r, c);
                    awr[c] = v;
                    sw += v;
                  }
                }
                for (int c = c0; c < c1; ++c) sy += ar[c] * wp(r, c);
              }
              rhs(p, i) = sy;
              if constexpr (!kRhsOnly) fw(p, i) = sw;
            } else if constexpr (kRhsOnly) {
              lane_rhs(pb->lane, a, xa, ya, r0, r1, c0, c1, sw, sy);
              push(t, *pb, sw, &fw(p, i));
              push(t, *pb, sy, &rhs(p, i));
            } else {         // aw over a's whole box for the pairs, and the lane's shares of y, fw
              lane_sync(t);  // every lane done with the last row's aw
              each_pixel(pb->lane, ya, ya + sny, xa, xa + snx, [&](int r, int c) {
                int const k = (r - ya) * snx + (c - xa);
                double aw = 0;
                if (r >= r0 && r < r1 && c >= c0 && c < c1) {
                  double const wv = w(r, c);
                  aw = a[k] * wv;
                  sw += aw;
                  if (wv > 0) sy += aw * image(r, c);
                }
                pb->aw[k] = aw;
              });
              lane_sync(t);  // this row's aw visible to every lane
              push(t, *pb, sw, &fw(p, i));
              push(t, *pb, sy, &rhs(p, i));
            }
            if (r1 > r0 && c1 > c0) cnt += 2LL * (r1 - r0) * (c1 - c0);
          }
          // Overlaps with the spots of fibers k2 <= k1 (bins w2 <= w1 on fiber k1); none
          // for y alone.
          int const k2_last = kRhsOnly ? -1 : k1;
          for (int k2 = 0; k2 <= k2_last; ++k2) {
            if (xr[2 * k2] >= xa + snx || xr[2 * k2 + 1] + snx <= xa) continue;  // never meet
            int const f2 = fib0 + k2;
            // Fiber f2's corners and spots from the patch's first bin on.
            int const *xc2 = &xc(f2, w0), *yc2 = &yc(f2, w0);
            double const* b0 = &spots(f2, w0, 0, 0);
            long const bstride = long(spots.stride(1));
            int const we = (k2 == k1) ? w1 + 1 : m;  // candidate bins [0, we)
            // Range [lo, hi] of bins whose spot box can meet spot a's box: bins with
            // ya - sny < yc < ya + sny. A binary search when yc grows with the bin (any real
            // trace), else a scan of every bin.
            int lo = m, hi = -1;
            if (mono) {
              int a0 = 0, a1 = we;  // first bin with yc > ya - sny
              while (a0 < a1) {
                int const mid = (a0 + a1) / 2;
                if (yc2[mid] > ya - sny)
                  a1 = mid;
                else
                  a0 = mid + 1;
              }
              lo = a0;
              int b0 = lo, b1 = we;  // first bin with yc >= ya + sny
              while (b0 < b1) {
                int const mid = (b0 + b1) / 2;
                if (yc2[mid] >= ya + sny)
                  b1 = mid;
                else
                  b0 = mid + 1;
              }
              hi = b0 - 1;
            } else {
              Kokkos::parallel_reduce(
                  Kokkos::ThreadVectorRange(t, we),
                  [&](int w2, int& v) {
                    int const dy = yc2[w2] - ya;
                    if (dy < sny && -dy < sny && w2 < v) v = w2;
                  },
                  Kokkos::Min<int>(lo));
              Kokkos::parallel_reduce(
                  Kokkos::ThreadVectorRange(t, we),
                  [&](int w2, int& v) {
                    int const dy = yc2[w2] - ya;
                    if (dy < sny && -dy < sny && w2 > v) v = w2;
                  },
                  Kokkos::Max<int>(hi));
            }
            // Entry (w1, w2): the overlap of spot a and spot w2, summed as the host sums it.
            auto const pair = [&](int w2) -> long long {
              int const xb = xc2[w2], yb = yc2[w2];
              int const r0 = imax(imax(ya, yb), ylo), r1 = imin(imin(ya, yb) + sny, yhi);
              int const c0 = imax(imax(xa, xb), 0), c1 = imin(imin(xa, xb) + snx, npix_x);
              if (r1 <= r0 || c1 <= c0) return 0;
              *entry(p, k1, w1, k2, w2) =
                  overlap(pb->aw, xa, ya, b0 + w2 * bstride, xb, yb, r0, r1, c0, c1);
              return static_cast<long long>(r1 - r0) * (c1 - c0);
            };
            if constexpr (T::Tune::host_loops) {
              for (int w2 = lo; w2 <= hi; ++w2) cnt += pair(w2);
            } else {  // a lane a pair: each pair's set-up once, and no sum across lanes
              long long n = 0;
              Kokkos::parallel_reduce(
                  Kokkos::ThreadVectorRange(t, imax(hi - lo + 1, 0)),
                  [&](int q, long long& acc) { acc += pair(lo + q); }, n);
              cnt += n;
            }
          }
        },
        team_macs);
    if constexpr (!T::Tune::host_loops) flush(t, *pb);
    if (t.team_rank() == 0) macs += team_macs;  // all lanes of thread 0 (CUDA convention)
  }
};

// Weak prior (§4): minweight = 1e-4 max(fluxweight); bins below it get alpha =
// minweight - fluxweight, the others alpha = regularize; iCov += diag(alpha^2 + 1e-15).
template <class ExecSpace, class Solve>
struct ApplyPrior {
  using T = Types<ExecSpace>;
  using Member = typename T::Member;
  typename T::CTable ptab;
  typename T::Mat icov;
  typename T::Vec fw;
  typename T::Vec1 minweight;
  int m;
  double regularize;
  solve::BandBatch<typename ExecSpace::memory_space> band;  // band path (AssembleICov)
  int nslots;
  KOKKOS_INLINE_FUNCTION void operator()(Member const& t) const {
    int const p = t.league_rank();
    int const nreal = ptab(p).nfib * m;
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
      Kokkos::single(Kokkos::PerThread(t), [&]() {
        if constexpr (is_band_v<Solve>)
          band(p, (i % m) * nslots + i / m, int(band.extent(2)) - 1) += alpha * alpha + 1e-15;
        else
          icov(p, i, i) += alpha * alpha + 1e-15;
      });
    });
    Kokkos::single(Kokkos::PerTeam(t), [&]() { minweight(p) = minw; });
  }
};

/// Returns the pixel products summed (ExtractStats::assembly_macs).
template <class ExecSpace, class Solve>
long long assemble(FrameContext<ExecSpace> const& fc, BatchViews<ExecSpace> const& b,
                   Workspace<ExecSpace> const& ws, Solve) {
  using T = Types<ExecSpace>;
  using Policy = typename T::Policy;
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::assembly", fc.times);
  FrameShape const& s = fc.shape;
  long long macs = 0;
  if constexpr (is_band_v<Solve> && !T::Tune::host_loops) fill_span(fc.space, b.band, 0.0);
  int const league = T::Tune::host_loops ? b.P : b.P * s.nslots;  // see operator()
  std::size_t const bytes = AssembleICov<ExecSpace, Solve>::scratch_bytes(s.nslots, s.sny * s.snx);
  int const level = bytes <= std::size_t(Policy::scratch_size_max(0)) ? 0 : 1;
  Kokkos::parallel_reduce(
      "kspecter::extract::assemble_icov",
      Policy(fc.space, league, T::Tune::assembly_team, T::Tune::assembly_vector)
          .set_scratch_size(level, Kokkos::PerTeam(bytes)),
      AssembleICov<ExecSpace, Solve>{b.spots, b.xc, b.yc, b.ptab, ws.weight_strip(),
                                     ws.weighted_strip(), fc.image, b.icov, b.rhs, b.fw, s.nslots,
                                     s.m, s.sny, s.snx, s.npy, s.npx, level, b.band},
      macs);
  Kokkos::parallel_for("kspecter::extract::prior",
                       Policy(fc.space, b.P, T::Tune::team * T::Tune::vector, 1),
                       ApplyPrior<ExecSpace, Solve>{b.ptab, b.icov, b.fw, b.minw, s.m,
                                                    fc.opt.regularize, b.band, s.nslots});
  fc.space.fence();
  return macs;
}

/// y = A^T W p of the batch's patches alone (AssembleICov's kRhsOnly; fluxweight too on a GPU),
/// for a frame that keeps the last frame's factor (reuse.hpp); the same sums, bit for bit.
template <class ExecSpace, class Solve>
void assemble_rhs(FrameContext<ExecSpace> const& fc, BatchViews<ExecSpace> const& b,
                  Workspace<ExecSpace> const& ws, Solve) {
  using T = Types<ExecSpace>;
  using Policy = typename T::Policy;
  using F = AssembleICov<ExecSpace, Solve, true>;
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::assembly", fc.times);
  FrameShape const& s = fc.shape;
  long long macs = 0;
  int const league = T::Tune::host_loops ? b.P : b.P * s.nslots;
  std::size_t const bytes = F::scratch_bytes(s.nslots, s.sny * s.snx);
  int const level = bytes <= std::size_t(Policy::scratch_size_max(0)) ? 0 : 1;
  Kokkos::parallel_reduce(
      "kspecter::extract::assemble_rhs",
      Policy(fc.space, league, T::Tune::assembly_team, T::Tune::assembly_vector)
          .set_scratch_size(level, Kokkos::PerTeam(bytes)),
      F{b.spots, b.xc, b.yc, b.ptab, ws.weight_strip(), ws.weighted_strip(), fc.image, b.icov,
        b.rhs, b.fw, s.nslots, s.m, s.sny, s.snx, s.npy, s.npx, level, b.band},
      macs);
}

}  // namespace kspecter::extract::detail
