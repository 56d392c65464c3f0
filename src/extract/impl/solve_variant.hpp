// How a batch's iCov is stored and solved (docs/algorithm.md §4), as a type: run_batches
// chooses one per batch and hands it to each stage, which has an overload (or, for kernels
// that serve both, a template parameter) per variant, as Kokkos-Kernels' algorithm tags do.
// No stage and no kernel asks at run time which one it is on.
#pragma once

#include <type_traits>

namespace kspecter::extract::detail {

/// iCov whole ([P][n][n], lower triangle), unknowns fiber-major (u = slot * m + bin):
/// batched dense Cholesky and inverse blocks (kspecter/solve/batched.hpp).
struct DenseSolve {};

/// iCov as band matrices ([P][n][half_width + 1]), unknowns wavelength-major
/// (v = bin * nslots + slot): band Cholesky, solve and strided blocks
/// (kspecter/solve/band.hpp, band_solve.hpp).
struct BandSolve {
  int half_width;
};

template <class Solve>
inline constexpr bool is_band_v = std::is_same_v<Solve, BandSolve>;

}  // namespace kspecter::extract::detail
