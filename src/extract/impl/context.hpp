// What every stage of a frame extraction reads: the execution space, the plan, the options,
// the input images and the frame's sizes; and the caller's hooks.
#pragma once

#include "../host_steps.hpp"
#include "types.hpp"

#include <kspecter/core/profiling.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/extract/options.hpp>
#include <kspecter/extract/patch_plan.hpp>

namespace kspecter::extract::detail {

template <class ExecSpace>
struct FrameContext {
  using T = Types<ExecSpace>;
  ExecSpace space;
  PatchPlan const& plan;
  ExtractOptions const& opt;
  FrameShape shape;
  typename T::Image image, ivar;  // [npy][npx]
  double psferr = 0;              // model error of chi2pix
  StageTimes* times = nullptr;    // where the stage timers add their times
  ExtractHooks const& hooks;      // progress and debug patches
};

/// Whether this frame may keep its solve for the next or use the last one's (reuse.hpp): the
/// caller vouches for the PSF and options, the frame is one batch (its buffers hold every
/// patch), and no debug patch is asked. Only the band path keeps its factor: the dense path's
/// covariance blocks overwrite L with its inverse (solve/batched.hpp).
template <class ExecSpace>
bool reuse_allowed(FrameContext<ExecSpace> const& fc) {
  return fc.hooks.reuse_factor && fc.plan.batches.size() == 1 &&
         fc.hooks.debug_patch == ExtractHooks::no_patch;
}

}  // namespace kspecter::extract::detail
