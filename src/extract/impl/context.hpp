// What every stage of a frame extraction reads: the execution space, the plan, the options,
// the input images and the frame's sizes.
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
};

}  // namespace kspecter::extract::detail
