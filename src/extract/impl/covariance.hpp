// Stage "covariance" (docs/algorithm.md §4): the diagonal fiber blocks of C = iCov^-1 of
// every patch, from its Cholesky factor.
#pragma once

#include "context.hpp"
#include "solve_variant.hpp"
#include "workspace.hpp"

#include <kspecter/solve/batched.hpp>

namespace kspecter::extract::detail {

/// The dense path: the blocks from the whole inverse's diagonal, into b.cblk.
template <class ExecSpace>
void covariance_blocks(FrameContext<ExecSpace> const& fc, BatchViews<ExecSpace> const& b,
                       DenseSolve) {
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::covariance", fc.times);
  solve::inverse_diagonal_blocks(fc.space, b.icov, b.cblk);
}

}  // namespace kspecter::extract::detail
