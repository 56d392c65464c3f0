// extract_frame for one execution space: the batch loop that runs the stages (one header per
// stage in this folder) over the batches of the patch plan. Included by the per-backend
// instantiation files.
#pragma once

#include "../host_steps.hpp"
#include "../out_of_memory.hpp"
#include "assembly.hpp"
#include "band_solve.hpp"
#include "context.hpp"
#include "covariance.hpp"
#include "decorrelation.hpp"
#include "factorisation.hpp"
#include "finish_spectra.hpp"
#include "patch_capture.hpp"
#include "quality.hpp"
#include "reuse.hpp"
#include "solve_variant.hpp"
#include "spots_stage.hpp"
#include "stitch.hpp"
#include "windows_stage.hpp"
#include "workspace.hpp"

#include <kspecter/extract/frame.hpp>

#include <memory>
#include <optional>

namespace kspecter::extract::detail {

// The frame's Workspace: the one `kept` holds if it fits the frame, else a new one (what
// `kept` held is freed first).
template <class ExecSpace>
std::shared_ptr<Workspace<ExecSpace>> workspace_for(FrameContext<ExecSpace> const& fc,
                                                    KeptBuffers* kept, FrameResult& res) {
  using W = Workspace<ExecSpace>;
  if (kept) {
    std::shared_ptr<W> w = kept->take<W>();
    if (w && w->fits(fc.shape, fc.opt.model)) {
      w->start_frame(fc.space, fc.plan, res, fc.opt.model);
      return w;
    }
  }
  return std::make_shared<W>(fc.space, fc.plan, fc.shape, fc.opt.model, res);
}

// One batch's solve on the variant it was given: assembly, factorisation, covariance blocks,
// decorrelation; the quality stage's window kernels start beside the last two. Returns the batch's
// views, which its quality stage reads after.
template <class ExecSpace, class Solve>
BatchViews<ExecSpace> solve_batch(FrameContext<ExecSpace> const& fc, Batch const& batch,
                                  Solve variant, Workspace<ExecSpace>& ws,
                                  PatchCapture<ExecSpace>& capture, FrameResult& res) {
  int const P = batch.patch_end - batch.patch_begin;
  if constexpr (!is_band_v<Solve>) ws.ensure_dense();
  res.stats.nbatch_band += is_band_v<Solve> ? 1 : 0;
  BatchViews<ExecSpace> const b = ws.batch(P, variant);
  capture.before_assembly(b, variant);
  res.stats.assembly_macs += assemble(fc, b, ws, variant);
  capture.after_assembly(b, variant);
  res.stats.nfailed += factorise(fc, b, variant);
  capture.after_factorisation(b);
  start_window_quality(fc, b, ws, int(&batch - fc.plan.batches.data()), false);
  covariance_blocks(fc, b, variant);
  decorrelate(fc, b, ws, variant);
  capture.after_decorrelation(b, fc.shape.ncs);
  return b;
}

// What follows a batch's solve: its spectra finished on the device and its quality stage;
// the spectra of the bundles finished so far are copied during the next batch, the last
// batch's solution during its quality stage, unless the frame model (frame_model.hpp) still
// needs it in the solver's units. `repeat`: the batch is a repeat of the kept solve.
template <class ExecSpace>
void finish_batch(FrameContext<ExecSpace> const& fc, Batch const& batch,
                  BatchViews<ExecSpace> const& b, Workspace<ExecSpace>& ws,
                  ResultArrays<ExecSpace>& arrays, Finished& finished, bool repeat) {
  int const done =
      (batch.completes_bundles ? batch.fiber_end : batch.fiber_begin) - fc.plan.specmin;
  bool const solution_first = !fc.opt.model;
  if (solution_first) {
    finish_solution(fc, ws, &finished, done);
    if (&batch == &fc.plan.batches.back())
      arrays.copy_spectra(fc.space, finished.solution, ResultArrays<ExecSpace>::kSolution);
  }
  assess_quality(fc, batch, b, ws, repeat);
  if (!solution_first) finish_solution(fc, ws, &finished, done);
  if (fc.hooks.on_batch_done) {
    fc.space.fence();
    fc.hooks.on_batch_done(batch.completes_bundles ? batch.bundle_end : batch.bundle_begin,
                           static_cast<int>(fc.plan.bundles.size()));
  }
  finish_quality(fc, ws, &finished, done);
}

// After the last batch: the spectra not finished yet, then the stitch. Both paths end here,
// the full one (run_batches) and the kept factor's (run_again).
template <class ExecSpace>
void finish_frame(FrameContext<ExecSpace> const& fc, Workspace<ExecSpace>& ws,
                  ResultArrays<ExecSpace>& arrays, Finished& finished, FrameResult& res) {
  finish_solution(fc, ws, &finished, fc.shape.nspec);
  finish_quality(fc, ws, &finished, fc.shape.nspec);
  stitch(fc, ws, arrays, res);
}

// The batches of the plan, stage by stage, then the stitch. Returns the last batch's band
// variant (none: the dense path), which keep_solve records.
template <class ExecSpace>
std::optional<BandSolve> run_batches(FrameContext<ExecSpace> const& fc,
                                     SpotProvider<typename ExecSpace::memory_space> const& provider,
                                     Workspace<ExecSpace>& ws, ResultArrays<ExecSpace>& arrays,
                                     FrameResult& res) {
  ExecSpace const& space = fc.space;
  Finished finished;  // how far the spectra are finished
  std::optional<BandSolve> band;
  for (Batch const& batch : fc.plan.batches) {
    make_spots(fc, batch, provider, ws, res.stats);
    pixel_windows(fc, batch, ws);
    int const P = batch.patch_end - batch.patch_begin;
    // The band path (band_solve.hpp) unless turned off or the band is too wide for it.
    band = fc.opt.band_solve ? band_variant(fc, ws, P) : std::optional<BandSolve>();
    // The spectra the batches before finished go to the host while this batch's assembly and
    // solves run. Started before this batch's spots and windows, the copy (to pageable
    // memory, through the driver's staging) held up their own small copies to the host
    // (perf/gpu_runs.md, session 16).
    arrays.copy_spectra(space, finished.quality);
    PatchCapture<ExecSpace> capture(fc, batch, ws);
    BatchViews<ExecSpace> const b = band ? solve_batch(fc, batch, *band, ws, capture, res)
                                         : solve_batch(fc, batch, DenseSolve{}, ws, capture, res);
    capture.move_to(res.debug);
    finish_batch(fc, batch, b, ws, arrays, finished, false);
  }
  finish_frame(fc, ws, arrays, finished, res);
  return band;
}

// The frame from the last frame's factor (reuse.hpp), when it may and its weights are the
// last frame's; false when the full path must run.
template <class ExecSpace>
bool run_again(FrameContext<ExecSpace> const& fc, Workspace<ExecSpace>& ws,
               ResultArrays<ExecSpace>& arrays, FrameResult& res) {
  std::optional<BatchViews<ExecSpace>> const b = solve_again(fc, ws, res);
  if (!b) return false;
  Finished finished;
  finish_batch(fc, fc.plan.batches.front(), *b, ws, arrays, finished, true);
  finish_frame(fc, ws, arrays, finished, res);
  return true;
}

template <class ExecSpace>
FrameResult extract_frame_impl(ExecSpace const& space,
                               SpotProvider<typename ExecSpace::memory_space> const& provider,
                               SpotGeometry const& geom,
                               ImageView<typename ExecSpace::memory_space> image,
                               ImageView<typename ExecSpace::memory_space> ivar,
                               ExtractOptions const& opt, StageTimes* times,
                               ExtractHooks const& hooks) {
  check_image_shapes(geom, image.extent(0), image.extent(1), ivar.extent(0), ivar.extent(1));
  // Stage "setup": the plan, and the device buffers allocated (and zeroed) for the frame.
  std::optional<StageTimer<ExecSpace>> setup(std::in_place, space, "kspecter::extract::setup",
                                             times);
  int const bundles_per_batch =
      opt.bundles_per_batch >= 0 ? opt.bundles_per_batch : Tuning<ExecSpace>::bundles_per_batch;
  PatchPlan const plan = make_patch_plan(opt, geom.nfiber, 2 * geom.hsizey + 1, 2 * geom.hsizex + 1,
                                         bundles_per_batch);
  opt.validate_range(geom.wavemin, geom.wavemax);
  FrameContext<ExecSpace> const fc{space,
                                   plan,
                                   opt,
                                   frame_shape(plan, geom),
                                   image,
                                   ivar,
                                   opt.psferr >= 0 ? opt.psferr : geom.psferr,
                                   times,
                                   hooks};
  FrameResult res = start_result(plan, fc.shape);
  std::size_t const model_size = std::size_t(fc.shape.npy) * std::size_t(fc.shape.npx);
  if constexpr (Workspace<ExecSpace>::results_in_place)
    if (opt.model && hooks.model_buffer && hooks.model_buffer->size() == model_size) {
      res.model = std::move(*hooks.model_buffer);
      hooks.model_buffer->clear();  // taken: a later frame with these hooks makes its own
    }
  // Stage "release": the device buffers freed or kept (timed from the end of the stitch until
  // the Workspace's destructor has run).
  std::optional<StageTimer<ExecSpace>> release;
  {
    std::shared_ptr<Workspace<ExecSpace>> ws = workspace_for(fc, hooks.buffers, res);
    ResultArrays<ExecSpace> arrays(fc, *ws, res);  // a GPU's: touched while the batches run
    setup.reset();
    ws->reserve_counts(int(plan.batches.size()));
    if (!run_again(fc, *ws, arrays, res))
      keep_solve(fc, *ws, run_batches(fc, provider, *ws, arrays, res));
    res.stats.peak_device_bytes = ws->meter.peak;
    release.emplace(space, "kspecter::extract::release", times);
    if (hooks.buffers) hooks.buffers->keep(ws, ws->own_bytes());
  }
  return res;
}

}  // namespace kspecter::extract::detail

namespace kspecter::extract {

// When the device runs out of memory (the budget is an estimate, and other processes may hold
// part of the device), the extraction starts again with batches half as big, down to one
// patch per batch; every View of the failed try is freed by then. Batching changes no
// number, so the frame is the one a smaller budget would have given.
template <class ExecSpace>
FrameResult extract_frame(ExecSpace const& space,
                          SpotProvider<typename ExecSpace::memory_space> const& spots,
                          SpotGeometry const& geometry,
                          ImageView<typename ExecSpace::memory_space> image,
                          ImageView<typename ExecSpace::memory_space> ivar,
                          ExtractOptions const& opt, StageTimes* times, ExtractHooks const& hooks) {
  ExtractOptions o = opt;
  for (;;) {
    try {
      return detail::extract_frame_impl(space, spots, geometry, image, ivar, o, times, hooks);
    } catch (std::exception const& e) {
      if (!detail::is_out_of_memory(e)) throw;
      if (hooks.buffers) hooks.buffers->release();  // the frame before's, if any are left
      auto const budget = detail::smaller_budget(o, geometry);
      if (!budget) throw detail::out_of_memory_error(e, opt.memory_budget, o.memory_budget);
      o.memory_budget = *budget;
    }
  }
}

}  // namespace kspecter::extract
