// Diagonal blocks of A⁻¹ from the Cholesky factor (declared in batched.hpp).
#pragma once

#include <Kokkos_Core.hpp>
#include <kspecter/core/error.hpp>
#include <kspecter/core/profiling.hpp>
#include <kspecter/solve/batched.hpp>
#include <string>

#include "../common/team_gemm.hpp"
#include "../tuning.hpp"
#include "row_envelope.hpp"

namespace kspecter::solve {

// W = L⁻¹ in place, then c_k = Σ_{r >= k m} W[r, km:km+m]ᵀ W[r, km:km+m] (A⁻¹ = Wᵀ W).
// W is built by tiles of nb (D = the diagonal tiles of L, N = D⁻¹ times L's off-diagonal
// tiles, so that W = (I + N)⁻¹ D⁻¹): every step is a team_gemm with a long K loop.
//   1. each diagonal tile L_ii becomes D_ii⁻¹ (full tile, zeros above the diagonal);
//   2. each tile row i left of the diagonal becomes N_i = D_ii⁻¹ L[i, :i];
//   3. block column j, top to bottom: W_ij = -Σ_{j <= k < i} N_ik W_kj;
//   4. the strict upper triangle of each m-block on the diagonal is zeroed (W is lower);
//   5. the Gram products of step "c_k" above, one team_gemm per block.
// Cost: n³/3 (W) + n² nb / 2 (N) + Σ_k 2 m² (n - k m) (Gram) flops.
namespace detail {

template <class Tune, class ExecSpace>
void inverse_diagonal_blocks_impl(ExecSpace const& space,
                                  MatrixBatch<typename ExecSpace::memory_space> l,
                                  BlockBatch<typename ExecSpace::memory_space> c) {
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  ScopedRegion region("kspecter::solve::inverse_blocks");
  int const nmat = int(l.extent(0));
  int const n = int(l.extent(1));
  int const nblock = int(c.extent(1));
  int const m = int(c.extent(2));
  if (int(l.extent(2)) != n)
    throw ParameterError("solve::inverse_diagonal_blocks: L is not square");
  if (int(c.extent(0)) < nmat || int(c.extent(3)) != m || nblock * m != n)
    throw ParameterError("solve::inverse_diagonal_blocks: blocks [" + std::to_string(nblock) +
                         "][" + std::to_string(m) + "][" + std::to_string(c.extent(3)) +
                         "] do not tile a matrix of size " + std::to_string(n));
  if (nmat == 0 || n == 0) return;
  int const nb = detail::imin(Tune::block, n);
  int const nt = (n + nb - 1) / nb;
  int const tr = Tune::block, tn = Tune::block;
  int const gtr = detail::tile_for<Tune>(m);
  int const gtn = detail::tile_for<Tune>(m);
  int const stage = detail::stage_doubles<Policy, Tune>(0, "solve::inverse_diagonal_blocks");
  int const l1 = Tune::max_tile * Tune::max_tile + nb * nb;
  using IScratch = Kokkos::View<int*, typename ExecSpace::scratch_memory_space,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  auto kernel = KOKKOS_LAMBDA(Member const& team) {
    int const b = team.league_rank();
    double* W = &l(b, 0, 0);
    Scratch s0(team.team_scratch(0), stage);
    Scratch s1(team.team_scratch(1), l1);
    IScratch env(team.team_scratch(1), n);
    detail::GemmWork const work{s0.data(), stage, s1.data()};
    double* tmp = s1.data() + Tune::max_tile * Tune::max_tile;
    // L's row envelope (as in cholesky): N_i is zero left of its rows' first nonzero.
    detail::team_row_envelope(team, W, n, env.data());
    int const* f = env.data();

    // 1. D_ii⁻¹ over each diagonal tile.
    for (int i0 = 0; i0 < n; i0 += nb) {
      int const w = detail::imin(nb, n - i0);
      double* t = W + i0 * n + i0;
      detail::team_trtri_unblocked<Tune>(team, t, n, w, tmp, w);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, w), [&](int r) {
        for (int q = 0; q < w; ++q) t[r * n + q] = tmp[r * w + q];
      });
      team.team_barrier();
    }
    // 2. N_i = D_ii⁻¹ L[i, :i] in place (C aliases B column for column, one tile row).
    for (int i = 1; i < nt; ++i) {
      int const i0 = i * nb, w = detail::imin(nb, n - i0);
      int const e = detail::envelope_min(f, i0, w);
      if (e >= i0) continue;
      detail::GemmArgs const g = detail::gemm(
          w, i0 - e, w, 1.0, detail::Operand{W + i0 * n + i0, n, 1},
          detail::Operand{W + i0 * n + e, 1, n}, 0.0, W + i0 * n + e, n, detail::kALower, tr, tn);
      detail::team_gemm<Tune>(team, work, g);
    }
    // 3. W_ij = -Σ_k N_ik W_kj (C aliases A row for row, one tile column).
    for (int j = 0; j + 1 < nt; ++j) {
      int const j0 = j * nb, wj = detail::imin(nb, n - j0);
      for (int i = j + 1; i < nt; ++i) {
        int const i0 = i * nb, wi = detail::imin(nb, n - i0);
        int const k0 = detail::imax(j0, detail::envelope_min(f, i0, wi));
        if (k0 >= i0) continue;  // N[i, j0:i0] = 0, so W_ij = 0 = what the tile holds
        detail::GemmArgs const g = detail::gemm(
            wi, wj, i0 - k0, -1.0, detail::Operand{W + i0 * n + k0, n, 1},
            detail::Operand{W + k0 * n + j0, 1, n}, 0.0, W + i0 * n + j0, n, 0u, tr, tn);
        detail::team_gemm<Tune>(team, work, g);
      }
    }
    // 4. zeros above the diagonal of each m-block, so that the Gram reads a lower W.
    for (int k = 0; k < nblock; ++k) {
      double* wk = W + (k * m) * n + k * m;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m), [&](int r) {
        for (int q = r + 1; q < m; ++q) wk[r * n + q] = 0.0;
      });
    }
    // 5. c_k = W[km:, km:km+m]ᵀ W[km:, km:km+m].
    for (int k = 0; k < nblock; ++k) {
      double const* wk = W + (k * m) * n + k * m;
      detail::GemmArgs const g =
          detail::gemm(m, m, n - k * m, 1.0, detail::Operand{wk, 1, n}, detail::Operand{wk, 1, n},
                       0.0, &c(b, k, 0, 0), m, 0u, gtr, gtn);
      detail::team_gemm<Tune>(team, work, g);
    }
  };

  auto const scratch = [&](Policy p) {
    return p.set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(stage)))
        .set_scratch_size(1, Kokkos::PerTeam(Scratch::shmem_size(l1) + IScratch::shmem_size(n)));
  };
  int const team_size =
      detail::team_size_for(scratch(Policy(space, nmat, 1)), kernel, Tune::team_size);
  Policy const policy = scratch(Policy(space, nmat, team_size));
  Kokkos::parallel_for("kspecter::solve::inverse_blocks", policy, kernel);
}

}  // namespace detail

template <class ExecSpace>
void inverse_diagonal_blocks(ExecSpace const& space,
                             MatrixBatch<typename ExecSpace::memory_space> l,
                             BlockBatch<typename ExecSpace::memory_space> c) {
  detail::inverse_diagonal_blocks_impl<Tuning<ExecSpace>>(space, l, c);
}

}  // namespace kspecter::solve
