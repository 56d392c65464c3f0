// A frame solved with the last frame's factor (ExtractHooks::reuse_factor; docs/architecture.md,
// "The warm extractor"). When only the image changed, iCov, its factor, the covariance blocks,
// Q and the resolution are the last frame's: the kept ones serve, and only y = A^T W p, the
// solves with the factor, the products with Q and the quality stage run. Each is the full
// path's own kernel on the same inputs, so the frame is the one a full extraction gives, bit
// for bit.
#pragma once

#include "assembly.hpp"
#include "band_solve.hpp"
#include "context.hpp"
#include "decorrelation.hpp"
#include "factorisation.hpp"
#include "quality.hpp"
#include "rework.hpp"
#include "windows_stage.hpp"
#include "workspace.hpp"

#include <kspecter/core/allocate.hpp>

#include <optional>
#include <utility>
#include <vector>

namespace kspecter::extract::detail {

/// After a full solve: what the next frame needs to use it again (none when not allowed).
template <class ExecSpace>
void keep_solve(FrameContext<ExecSpace> const& fc, Workspace<ExecSpace>& ws,
                std::optional<BandSolve> band) {
  using mem = typename ExecSpace::memory_space;
  ReworkBuffers<mem> rework;  // the last solve's rework buffers serve this one's
  if (ws.kept_solve) rework = std::exchange(ws.kept_solve->rework, ReworkBuffers<mem>());
  ws.kept_solve.reset();  // its strip goes before the new one comes
  if (!reuse_allowed(fc) || !band) {
    ws.meter.release(rework.bytes);
    ws.forget_ranges();  // another frame's spots may follow
    return;
  }
  int const P = fc.plan.batches.front().patch_end - fc.plan.batches.front().patch_begin;
  KeptSolve<mem> k;
  k.band = *band;
  k.x0 = ws.weights_x0;
  k.ncol = ws.weights_ncol;
  k.weights = allocate<decltype(k.weights)>(fc.space, "kspecter::extract::kept_weights",
                                            fc.shape.npy, k.ncol);
  Kokkos::deep_copy(fc.space, k.weights,
                    Kokkos::subview(ws.weights, Kokkos::ALL, std::make_pair(0, k.ncol)));
  k.info = allocate<decltype(k.info)>(fc.space, "kspecter::extract::kept_info", P);
  Kokkos::deep_copy(fc.space, k.info, Kokkos::subview(ws.info_all, std::make_pair(0, P)));
  k.rows = allocate<decltype(k.rows)>(fc.space, "kspecter::extract::changed_rows", fc.shape.npy);
  k.changed = allocate<decltype(k.changed)>(fc.space, "kspecter::extract::changed_patches", P);
  k.rework = std::move(rework);
  ws.kept_solve = std::move(k);
}

/// The one batch's solve with the kept factor and Q, when its weights are the kept ones or
/// differ in the windows of a few patches (those are reworked first, rework.hpp); returns the
/// batch's views, or none (then nothing of the frame's numbers was written and the full path
/// runs).
template <class ExecSpace>
std::optional<BatchViews<ExecSpace>> solve_again(FrameContext<ExecSpace> const& fc,
                                                 Workspace<ExecSpace>& ws, FrameResult& res) {
  if (!reuse_allowed(fc) || !ws.kept_solve) return std::nullopt;
  Batch const& batch = fc.plan.batches.front();
  pixel_windows(fc, batch, ws, true);  // this frame's weights; the kept spots' windows
  KeptSolve<typename ExecSpace::memory_space>& k = *ws.kept_solve;
  int const P = batch.patch_end - batch.patch_begin;
  std::optional<std::vector<int>> const rework = patches_to_rework(fc, ws, k, P);
  if (!rework) return std::nullopt;
  if (!rework->empty()) rework_patches(fc, ws, k, *rework, res);
  res.stats.nreworked = int(rework->size());
  Kokkos::deep_copy(fc.space, Kokkos::subview(ws.info_all, std::make_pair(0, P)), k.info);
  BatchViews<ExecSpace> const b = ws.batch(P, k.band);
  assemble_rhs(fc, b, ws, k.band);
  {
    StageTimer<ExecSpace> st(fc.space, "kspecter::extract::factorisation", fc.times);
    res.stats.nfailed += solve_with_factor(fc, b, k.band);
  }
  start_window_quality(fc, b, ws, 0, true);
  {
    StageTimer<ExecSpace> st(fc.space, "kspecter::extract::decorrelation", fc.times);
    decorrelate_spectra(fc, b, ws,
                        Kokkos::View<const int*, typename ExecSpace::memory_space>(
                            Kokkos::subview(k.changed, std::make_pair(0, P))));
  }
  res.stats.nbatch_band += 1;
  res.stats.reused_factor = true;
  return b;
}

}  // namespace kspecter::extract::detail
