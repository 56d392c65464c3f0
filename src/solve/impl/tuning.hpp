// Launch shapes of the solve room's kernels, per backend: Tuning for the dense batched
// kernels (dense/, eigen/) and BandTuning for the band ones (band/). Team sizes, register
// micro-tiles, tile sizes, scratch padding: the numbers that a GPU profile tunes live here
// only, private to the room (the extraction's own are in src/extract/impl/tuning.hpp).
#pragma once

#include <Kokkos_Core.hpp>
#include <kspecter/core/kokkos_compat.hpp>
#include <type_traits>

namespace kspecter::solve {

/// Host backends (an execution space that runs on the CPU: Serial, OpenMP, ...): one matrix
/// per thread (team size 1), so that a batch of a few hundred matrices keeps every core busy
/// and each matrix stays in that core's caches. The micro-tile (mr x nr accumulators) is
/// shaped for the vector ISA the compiler targets: nr is the contiguous (vectorised)
/// direction. Every backend of the build's list (cmake/kspecter_backends.cmake) gets the host
/// or the GPU entry by where it runs.
template <class ExecSpace,
          bool OnHost = Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible>
struct Tuning {
#if defined(__AVX512F__)
  static constexpr int mr = 4, nr = 16;  // 8 zmm accumulators
#elif defined(__AVX__)
  static constexpr int mr = 4, nr = 8;  // 8 ymm accumulators
#else
  static constexpr int mr = 4, nr = 4;  // 8 xmm accumulators (SSE2 leaves 16 registers)
#endif
  /// Tile sizes are multiples of this (covers the run-time dispatched 8 x 16 kernel).
  static constexpr int quantum = 16;
  /// Use host_simd.hpp's run-time dispatched micro-kernels when a team is one thread.
  static constexpr bool host_simd = true;
  /// Extra doubles per staged row in scratch (GPUs: an odd row stride avoids bank conflicts
  /// in the transposing copy).
  static constexpr int pad = 0;
  /// Block-column width of the blocked Cholesky and triangular inverse.
  static constexpr int block = 64;
  /// Largest GEMM output tile (rows or columns); a fiber block of 74 fits in one tile.
  static constexpr int max_tile = 80;
  /// Threads per team (matrix) of cholesky, cholesky_solve and inverse_diagonal_blocks.
  static constexpr int team_size = 1;
  /// Threads per team of inverse_sqrt (small matrices, a sequential QL chain: on a GPU,
  /// fewer threads per team let more teams share an SM).
  static constexpr int eig_team_size = 1;
  /// Most level-0 doubles inverse_sqrt stages its final GEMM through (0: all there are).
  static constexpr int eig_stage = 0;
  /// Matrices per inverse_sqrt team (1 or 2): two QL chains run by one thread in one loop
  /// overlap their latencies (inverse_sqrt.hpp, eig_iterate_pair).
  static constexpr int eig_matrices = 2;
  /// Whether inverse_sqrt runs as a sequence of kernels (inverse_sqrt_staged.hpp) rather
  /// than one: a GPU team would wait at a barrier for each sweep's sequential chain; a host
  /// thread has nothing to wait for.
  static constexpr bool eig_staged = false;
  /// Staged only: matrices (one a thread) per team of the QL chains; rows of the basis Z
  /// per team of the rotations (one a thread); rotations a matrix records per round, in
  /// units of m.
  static constexpr int eig_chain_team = 1, eig_apply_cols = 16, eig_round = 32;
  static constexpr bool eig_finish_dmma = false;  // the GPUs' (below)
  static constexpr int eig_finish_warps = 1, eig_finish_teams_per_sm = 1;
  /// Whether consecutive threads of a team should touch consecutive addresses (GPU
  /// coalescing) rather than each thread walking contiguous memory (CPU vectorisation).
  static constexpr bool coalesce = false;
};

/// GPU backends (CUDA, HIP): one matrix per team of 256 threads; a 64 x 64 output tile is
/// 16 x 16 micro-tiles of 4 x 4, one per thread, accumulated in registers across the whole K
/// loop.
template <class ExecSpace>
struct Tuning<ExecSpace, false> {
  static constexpr int mr = 4, nr = 4;
  static constexpr int quantum = 4;
  static constexpr bool host_simd = false;
  static constexpr int pad = 1;
  static constexpr int block = 64;
  static constexpr int max_tile = 80;
  static constexpr int team_size = 256;
  static constexpr int eig_team_size = 128;
  static constexpr int eig_stage = 0;
  static constexpr int eig_matrices = 1;
  static constexpr bool eig_staged = true;
  static constexpr int eig_chain_team = 32, eig_apply_cols = 32, eig_round = 32;
  /// The staged finish on the fp64 tensor cores (eig_finish_dmma.hpp), teams of
  /// eig_finish_warps warps, eig_finish_teams_per_sm an SM at least (the launch bound): CUDA
  /// on sm_80 and later. On an H100, 4 warps (154 registers) beat the generic finish, and 8
  /// warps bounded to 3 teams an SM (80 registers, no spills) beat 4 (perf/gpu_runs.md).
#if KSPECTER_CUDA_DMMA
  static constexpr bool eig_finish_dmma = std::is_same_v<ExecSpace, Kokkos::Cuda>;
#else
  static constexpr bool eig_finish_dmma = false;
#endif
  static constexpr int eig_finish_warps = 8, eig_finish_teams_per_sm = 3;
  static constexpr bool coalesce = true;
};

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
  /// Its GPU path: vector lanes a matrix (a warp), matrices a team, rows loaded ahead, and
  /// teams an SM must hold at once (its launch bound; 0: none).
  static constexpr int solve_lanes = 1, solve_team = 1, solve_ahead = 1, solve_teams_per_sm = 0;
  static constexpr int blocks_team_size = 1;  // band_strided_inverse_blocks
  /// GPU path of band_strided_inverse_blocks only: rows of Z made between two barriers,
  /// and the most 2 x 2 tiles of a block's lower triangle a thread accumulates in registers.
  static constexpr int rows = 2;
  static constexpr int tiles = 1;
  /// Teams an SM must hold at once (0: no launch bound): caps the registers a thread takes.
  static constexpr int blocks_teams_per_sm = 0;
  /// band_strided_inverse_blocks on fp64 tensor cores (a CUDA specialisation for sm_80 and
  /// later, solve/impl/band/band_blocks_dmma.hpp), with teams of dmma_warps warps,
  /// dmma_teams_per_sm of them an SM at least (its launch bound).
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
  static constexpr int team_size = 32;     // band_cholesky_solve's plain loops (bands over 128)
  static constexpr int solve_entries = 4;  // bands to 128: a row of 66 is 3 entries a lane
  // 4700 matrices of a full r frame at once: 40 warps an SM (51 registers a thread).
  static constexpr int solve_lanes = 32, solve_team = 2, solve_ahead = 2, solve_teams_per_sm = 18;
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
  static constexpr int solve_lanes = 64, solve_team = 1, solve_ahead = 2, solve_teams_per_sm = 0;
  static constexpr int blocks_team_size = 128;
  static constexpr int rows = 4;
  static constexpr int tiles = 6;
  static constexpr int blocks_teams_per_sm = 0;
  static constexpr bool dmma = false;
  static constexpr int dmma_warps = 1, dmma_teams_per_sm = 1;
};
#endif

}  // namespace kspecter::solve
