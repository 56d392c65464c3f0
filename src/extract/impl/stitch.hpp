// Stage "stitch" (docs/algorithm.md §6): the frame arrays to the host, then the host-side
// finishing (host_steps.hpp: units, float32 limits, mask bits).
#pragma once

#include "context.hpp"
#include "workspace.hpp"

#include <kspecter/core/allocate.hpp>

#include <vector>

namespace kspecter::extract::detail {

template <class ExecSpace>
void stitch(FrameContext<ExecSpace> const& fc, Workspace<ExecSpace> const& ws, FrameResult& res) {
  using mem = typename ExecSpace::memory_space;
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::stitch", fc.times);
  // The result's arrays, sized before any copy: reserved (no page touched yet), given the
  // huge-page hint, then zero-filled on the host threads, one array each. A full frame's
  // ~150 MB were otherwise first touched on one thread in 4 KiB page faults, most of the
  // stitch's time on a GPU (perf/gpu_runs.md).
  struct Out {
    double const* src;
    std::size_t size;
    std::vector<double>* dst;
  };
  std::vector<Out> outs{{ws.flux.data(), ws.flux.span(), &res.flux},
                        {ws.ivar.data(), ws.ivar.span(), &res.ivar},
                        {ws.deconv.data(), ws.deconv.span(), &res.deconvolved_flux},
                        {ws.chi2.data(), ws.chi2.span(), &res.chi2pix},
                        {ws.pixmask.data(), ws.pixmask.span(), &res.pixmask_fraction},
                        {ws.rdiag.data(), ws.rdiag.span(), &res.resolution}};
  if (fc.opt.model) {
    outs.push_back({ws.model.data(), ws.model.span(), &res.model});
    res.model_nx = fc.shape.npx;
    res.model_ny = fc.shape.npy;
  }
  for (Out const& o : outs) {
    o.dst->reserve(o.size);
    kspecter::detail::advise_huge_pages(o.dst->data(), o.dst->capacity() * sizeof(double));
  }
  Kokkos::parallel_for("kspecter::extract::stitch_first_touch",
                       Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, int(outs.size())),
                       [&](int k) { outs[std::size_t(k)].dst->resize(outs[std::size_t(k)].size); });
  // Straight into the result's storage: one device-to-host pass, no intermediate mirror.
  using Flat = Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using FlatDev = Kokkos::View<double const*, mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  for (Out const& o : outs)
    Kokkos::deep_copy(fc.space, Flat(o.dst->data(), o.size), FlatDev(o.src, o.size));
  fc.space.fence();
  auto const failed = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ws.failed);
  finalize_frame(res, failed.data(), fc.plan.dw, fc.opt);
}

}  // namespace kspecter::extract::detail
