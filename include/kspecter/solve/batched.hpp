// Batched dense linear algebra for extraction (docs/algorithm.md §4), as team kernels: one
// matrix per team, the batch index first. It knows nothing about PSFs or images.
//
// All matrices are symmetric positive (semi)definite, double precision, LayoutRight. Each
// operation is a profiling region and one kernel launch labelled
// "kspecter::solve::<operation>", asynchronous on `space`; except inverse_sqrt on a GPU, which
// runs as kernels "kspecter::solve::inverse_sqrt::<step>" in rounds and returns when done. Results
// of a matrix depend on that matrix only (not on the batch around it) and are bitwise reproducible
// on a given machine; the host picks AVX-512/AVX2/portable micro-kernels at run time, which differ
// by rounding.
//
// The library instantiates them for every backend of its build (cmake/kspecter_backends.cmake).
// How (details in src/solve/impl/: cholesky.hpp, inverse_blocks.hpp, inverse_sqrt.hpp,
// team_gemm.hpp): blocked algorithms whose work is a register-tiled team GEMM fed through team
// scratch (impl/tuning.hpp holds the host and GPU shapes). Costs for n = 518, m = 74: Cholesky
// n³/3, blocks n³/3 + 23 Mflop, inverse sqrt (Householder + implicit QL + Q = V w^-1/2 Vᵀ) about 11
// m³ per block.
//
// Differences from gpu_specter (which gets C from a clipped eigendecomposition of the
// whole iCov): C = iCov⁻¹ here is exact (Cholesky), so it equals gpu_specter's whenever
// cond(iCov) < 1e14; a worse-conditioned iCov may fail the Cholesky (info != 0) where
// gpu_specter would clip. The 1e-14 clip of the blocks' eigenvalues is kept (inverse_sqrt).
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace kspecter::solve {

template <class MemorySpace>
using MatrixBatch = Kokkos::View<double***, Kokkos::LayoutRight, MemorySpace>;  // [batch][n][n]
template <class MemorySpace>
using VectorBatch = Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace>;  // [batch][n]
template <class MemorySpace>
using BlockBatch =
    Kokkos::View<double****, Kokkos::LayoutRight, MemorySpace>;  // [batch][nblock][m][m]

/// In-place Cholesky A = L Lᵀ of every matrix; L is left in the lower triangle.
/// Only the lower triangle is read or written (the strict upper triangle keeps its values).
/// info(b) = 0 on success, k + 1 if the k-th pivot was not positive (that matrix is then
/// unusable and the caller masks it; nothing aborts, the other matrices are unaffected).
template <class ExecSpace>
void cholesky(ExecSpace const& space, MatrixBatch<typename ExecSpace::memory_space> a,
              Kokkos::View<int*, typename ExecSpace::memory_space> info);

/// Solves L Lᵀ x = b in place (b becomes x) with the factor from cholesky().
template <class ExecSpace>
void cholesky_solve(ExecSpace const& space, MatrixBatch<typename ExecSpace::memory_space> l,
                    VectorBatch<typename ExecSpace::memory_space> b);

/// The diagonal blocks of A⁻¹ = (L Lᵀ)⁻¹ for blocks of size m along the diagonal
/// (n = nblock * m): c(b, k) = [A⁻¹][k m : (k+1) m, k m : (k+1) m], exactly symmetric.
/// Overwrites l: its lower triangle becomes L⁻¹, parts of its upper triangle zeros.
template <class ExecSpace>
void inverse_diagonal_blocks(ExecSpace const& space,
                             MatrixBatch<typename ExecSpace::memory_space> l,
                             BlockBatch<typename ExecSpace::memory_space> c);

/// In place, c(i) becomes Q = c(i)^(-1/2), the symmetric inverse square root, for every
/// matrix of the batch [nmat][m][m]. Eigenvalues below rel_clip * (largest eigenvalue) are
/// raised to that floor, so Q stays finite for nearly singular blocks (the floor is per
/// matrix; gpu_specter's clip_scale is the same 1e-14). Q is exactly symmetric. A matrix with
/// no positive eigenvalue, or holding NaN/Inf, gets Q = 0. rel_clip must be in (0, 1).
/// On a GPU it allocates m² + 74 m doubles a matrix of workspace for the call (88 KB, m = 74).
template <class ExecSpace>
void inverse_sqrt(ExecSpace const& space, MatrixBatch<typename ExecSpace::memory_space> c,
                  double rel_clip = 1e-14);

/// The device memory inverse_sqrt works in on a GPU (m² + 74 m doubles a matrix), kept by a
/// caller that runs it batch after batch: allocated by the first call and grown when a batch
/// needs more, where the three-argument form allocates and frees it every call (about 0.7 GB
/// for a batch of 5875 blocks of 74). Host backends do not use it. Its contents do not
/// survive between calls.
template <class MemorySpace>
struct InverseSqrtWorkspace {
  Kokkos::View<double*, MemorySpace> doubles;
  Kokkos::View<int*, MemorySpace> ints;
};

/// The lengths of the Views that inverse_sqrt's workspace grows to for `nmat` matrices of
/// m x m on ExecSpace (zero where the backend takes none): a caller may give the workspace that
/// much up front, in memory of its own, and no call then allocates.
struct InverseSqrtWorkspaceSize {
  std::size_t doubles = 0, ints = 0;
};
template <class ExecSpace>
InverseSqrtWorkspaceSize inverse_sqrt_workspace_size(int nmat, int m);

/// inverse_sqrt, working in `work`.
template <class ExecSpace>
void inverse_sqrt(ExecSpace const& space, MatrixBatch<typename ExecSpace::memory_space> c,
                  double rel_clip, InverseSqrtWorkspace<typename ExecSpace::memory_space>& work);

}  // namespace kspecter::solve
