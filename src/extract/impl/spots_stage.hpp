// Stage "spots" (docs/algorithm.md §2): the spots of the batch's fibers over the padded grid,
// from the caller's spot provider.
#pragma once

#include "context.hpp"
#include "workspace.hpp"

#include <kspecter/core/error.hpp>

namespace kspecter::extract::detail {

template <class ExecSpace>
void make_spots(FrameContext<ExecSpace> const& fc, Batch const& batch,
                SpotProvider<typename ExecSpace::memory_space> const& provider,
                Workspace<ExecSpace>& ws, ExtractStats& stats) {
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::spots", fc.times);
  FrameShape const& s = fc.shape;
  int const nfb = batch.fiber_end - batch.fiber_begin;
  provider(batch.fiber_begin, nfb, ws.full_wave, ws.spots);
  auto const& v = ws.spots.values;
  if (static_cast<int>(v.extent(0)) != nfb || static_cast<int>(v.extent(1)) != s.nfull ||
      static_cast<int>(v.extent(2)) != s.sny || static_cast<int>(v.extent(3)) != s.snx)
    throw Error("extract: the spot provider returned spots of the wrong shape");
  ws.meter_spots();
  stats.nspots += static_cast<long long>(nfb) * s.nfull;
}

}  // namespace kspecter::extract::detail
