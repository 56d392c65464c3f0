// Launch shapes of the batched solve kernels, per backend: team size, register micro-tile,
// tile sizes, scratch padding. The numbers that a GPU profile should tune live here only.
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
  /// on sm_80 and later. 4 warps (154 registers) beat the generic finish and 8 warps on an
  /// H100 (8 warps, 3 teams: 80 registers; perf/gpu_runs.md).
#if KSPECTER_CUDA_DMMA
  static constexpr bool eig_finish_dmma = std::is_same_v<ExecSpace, Kokkos::Cuda>;
#else
  static constexpr bool eig_finish_dmma = false;
#endif
  static constexpr int eig_finish_warps = 8, eig_finish_teams_per_sm = 3;
  static constexpr bool coalesce = true;
};

}  // namespace kspecter::solve
