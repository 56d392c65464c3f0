// The fp64 tensor-core product of sm_80 and later (mma.m8n8k4.f64) and the warp shuffle that
// the DMMA kernels (band_blocks_dmma.hpp, eig_finish_dmma.hpp) share.
#pragma once

#include <Kokkos_Core.hpp>

#include "unroll.hpp"

namespace kspecter::solve::detail {

/// D = A B + D for one warp's 8 x 8 x 4 fp64 product: lane l holds A(l / 4, l % 4),
/// B(l % 4, l / 4) and D(l / 4, 2 (l % 4) + {0, 1}) (the PTX ISA's fragments for m8n8k4.f64).
KOKKOS_INLINE_FUNCTION void dmma_8x8x4(double& d0, double& d1, double a, double b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
      : "+d"(d0), "+d"(d1)
      : "d"(a), "d"(b));
#else
  (void)d0, (void)d1, (void)a, (void)b;
  Kokkos::abort("kspecter::solve: DMMA needs an sm_80 or later device");
#endif
}

/// The value v of lane src of the calling warp (all 32 lanes take part).
KOKKOS_INLINE_FUNCTION double warp_value(double v, int src) {
#if defined(__CUDA_ARCH__)
  return __shfl_sync(0xffffffffu, v, src);
#else
  (void)src;
  return v;
#endif
}

/// f(e, a, cc) for the tiles e = 0 .. N - 1 of warp `warp` of W that share a lower triangle of
/// tiles: tiles t = warp + W e, row by row, as (a, cc) with a >= cc, followed without a
/// division (those past the triangle's last tile included: the caller checks t).
template <int W, int N, class F>
KOKKOS_INLINE_FUNCTION void each_warp_tile(int warp, F const& f) {
  int a = 0, cc = warp;
  KSPECTER_UNROLL
  for (int e = 0; e < N; ++e) {
    while (cc > a) cc -= ++a;
    f(e, a, cc);
    cc += W;
  }
}

}  // namespace kspecter::solve::detail
