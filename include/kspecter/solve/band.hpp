// Batched solves on symmetric band matrices (docs/algorithm.md §4): extraction's iCov with
// its unknowns in wavelength-major order (v = bin * nslots + slot) is a band matrix of
// half-bandwidth about 58 (a DESI r patch: 51 to 65, against 156 in fiber-major order), so
// its Cholesky factor costs about n b² instead of n³/3 flops, and the covariance blocks of
// the core fibers, C_ff = (L⁻¹ E_f)ᵀ (L⁻¹ E_f), cost about 3 m² b... per fiber instead of a
// whole triangular inverse. One team per matrix (per matrix and block for the blocks), as in
// batched.hpp; the kernels are one source for every backend, shaped by BandTuning, kept in
// src/solve/impl/band_*.hpp and instantiated for every backend of the build.
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

/// Launch shapes of the band kernels. Host: one matrix per thread, rows walked contiguously
/// (vectorised axpys). GPUs: a team per matrix, consecutive threads on consecutive entries.
template <class ExecSpace>
struct BandTuning {
  static constexpr bool coalesce = false;
  static constexpr int factor_team_size = 1;  // band_cholesky
  /// band_cholesky by panels of this many columns (its GPU path; 0: a column at a time), and
  /// the entries of a panel's next rows a thread holds in registers (more are read directly).
  static constexpr int factor_panel = 0, factor_panel_rows = 1;
  static constexpr int team_size = 1;  // band_cholesky_solve
  /// band_cholesky_solve: entries of a band row each thread holds in registers (its GPU path,
  /// for bands up to solve_entries x team_size; 0: the plain loops).
  static constexpr int solve_entries = 0;
  static constexpr int blocks_team_size = 1;  // band_strided_inverse_blocks
  /// GPU path of band_strided_inverse_blocks only: rows of Z made between two barriers,
  /// and the most 2 x 2 tiles of a block's lower triangle a thread accumulates in registers.
  static constexpr int rows = 2;
  static constexpr int tiles = 1;
  /// Teams an SM must hold at once (0: no launch bound): caps the registers a thread takes.
  static constexpr int blocks_teams_per_sm = 0;
  /// band_strided_inverse_blocks on fp64 tensor cores (a CUDA specialisation for sm_80 and
  /// later, solve/impl/band_blocks_dmma.hpp), with teams of dmma_warps warps, dmma_teams_per_sm
  /// of them an SM at least (its launch bound).
  static constexpr bool dmma = false;
  static constexpr int dmma_warps = 1, dmma_teams_per_sm = 1;
};

#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct BandTuning<Kokkos::Cuda> {
  static constexpr bool coalesce = true;
  static constexpr int factor_team_size = 128;  // 4 warps beat 1 (perf/bench_band, H100)
  // The window of b + 8 rows fits Kokkos 3.4's 40 KB for bands to 67; 8 x 80 entries of the
  // rows that replace a panel's take 5 a thread.
  static constexpr int factor_panel = 8, factor_panel_rows = 5;
  static constexpr int team_size = 32;     // one warp: a band row of 66 is two entries a thread
  static constexpr int solve_entries = 4;  // bands to 128
  static constexpr int blocks_team_size = 128;
  static constexpr int rows = 4;   // the window and 4 rows of L fit 40 KB for bands to 65
  static constexpr int tiles = 6;  // 37 x 38 / 2 = 703 tiles for m = 74, over 128 threads
  static constexpr int blocks_teams_per_sm = 5;  // 96 registers: 5 teams (scratch allows 5)
  static constexpr bool dmma = KSPECTER_CUDA_DMMA;
  // 5 warps, 4 teams an SM beat 4 and 8 warps and the grouped kernel (perf/bench_band, H100;
  // perf/gpu_runs.md).
  static constexpr int dmma_warps = 5, dmma_teams_per_sm = 4;
};
#endif

#if defined(KOKKOS_ENABLE_HIP)
template <>
struct BandTuning<compat::HIP> {
  static constexpr bool coalesce = true;
  static constexpr int factor_team_size = 64;
  static constexpr int factor_panel = 8, factor_panel_rows = 10;
  static constexpr int team_size = 64;     // one wavefront
  static constexpr int solve_entries = 2;  // bands to 128
  static constexpr int blocks_team_size = 128;
  static constexpr int rows = 4;
  static constexpr int tiles = 6;
  static constexpr int blocks_teams_per_sm = 0;
  static constexpr bool dmma = false;
  static constexpr int dmma_warps = 1, dmma_teams_per_sm = 1;
};
#endif

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
