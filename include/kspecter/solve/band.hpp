// Batched solves on symmetric band matrices (docs/algorithm.md §4): extraction's iCov with
// its unknowns in wavelength-major order (v = bin * nslots + slot) is a band matrix of
// half-bandwidth about 58 (a DESI r patch: 51 to 65, against 156 in fiber-major order), so
// its Cholesky factor costs about n b² instead of n³/3 flops, and the covariance blocks of
// the core fibers, C_ff = (L⁻¹ E_f)ᵀ (L⁻¹ E_f), cost about 3 m² b... per fiber instead of a
// whole triangular inverse. One team per matrix (per matrix and block for the blocks), as in
// batched.hpp; the kernels are one source for every backend, kept private in
// src/solve/impl/band/ with their launch shapes in src/solve/impl/tuning.hpp (BandTuning),
// and instantiated for every backend of the build.
//
// Storage: BandBatch [batch][n][b + 1] holds the lower triangle by rows,
// ab(p, i, c) = A(i, i - b + c) for c = 0..b (c = b is the diagonal); the entries left of
// column 0 (c < b - i) are zero. Rows are contiguous, so a row of L is one coalesced read.
#pragma once

#include <Kokkos_Core.hpp>
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/solve/batched.hpp>

namespace kspecter::solve {

template <class MemorySpace>
using BandBatch = Kokkos::View<double***, Kokkos::LayoutRight, MemorySpace>;

/// In-place Cholesky A = L Lᵀ of every band matrix (L in the same band storage).
/// info(p) = 0 on success, k + 1 if pivot k was not positive and finite; such a matrix is
/// replaced by the identity (L = I), so that the solves after it run on harmless numbers and
/// the caller masks it. Zeros left of each row's first nonzero stay exact zeros and cost
/// nothing (the row envelope).
template <class ExecSpace>
void band_cholesky(ExecSpace const& space, BandBatch<typename ExecSpace::memory_space> ab,
                   Kokkos::View<int*, typename ExecSpace::memory_space> info);

/// Solves L Lᵀ x = b in place (b becomes x), b in the band matrix's unknown order.
template <class ExecSpace>
void band_cholesky_solve(ExecSpace const& space, BandBatch<typename ExecSpace::memory_space> l,
                         VectorBatch<typename ExecSpace::memory_space> b);

/// Diagonal blocks of A⁻¹ = (L Lᵀ)⁻¹ on strided index sets: for matrix p and block k,
/// c(p * nblock + k)(q1, q2) = A⁻¹(s + stride q1, s + stride q2), q1, q2 < m, with
/// s = slot(p, k); slot < 0 gives the identity. With the unknowns in wavelength-major order
/// (stride = fiber slots), these are the fiber blocks C_ff of the covariance. Exactly
/// symmetric. Cost per block: the m columns of L⁻¹ E (a band substitution each, from its
/// own row down) and their Gram products.
template <class ExecSpace>
void band_strided_inverse_blocks(
    ExecSpace const& space, BandBatch<typename ExecSpace::memory_space> l,
    Kokkos::View<const int**, Kokkos::LayoutRight, typename ExecSpace::memory_space> slot,
    int stride, MatrixBatch<typename ExecSpace::memory_space> c);

/// hw(p) = the half-bandwidth of dense symmetric matrix p (fiber-major unknowns, u = slot *
/// m + bin, the order of extraction's assembly) in wavelength-major order v = bin * nslots +
/// slot: the largest |v(i) - v(j)| over its nonzeros. Reads only the lower triangle.
template <class ExecSpace>
void band_half_width_wavelength_major(ExecSpace const& space,
                                      MatrixBatch<typename ExecSpace::memory_space> dense,
                                      int nslots,
                                      Kokkos::View<int*, typename ExecSpace::memory_space> hw);

/// The band storage (half-bandwidth ab.extent(2) - 1) of dense symmetric matrices with
/// fiber-major unknowns, in wavelength-major order. Reads only the lower triangle; entries
/// beyond the band are dropped, so the band must be at least band_half_width's.
template <class ExecSpace>
void pack_band_wavelength_major(ExecSpace const& space,
                                MatrixBatch<typename ExecSpace::memory_space> dense, int nslots,
                                BandBatch<typename ExecSpace::memory_space> ab);

}  // namespace kspecter::solve
