// Stage "stitch" (docs/algorithm.md §6): the frame arrays to the host, then the host-side
// finishing (host_steps.hpp: units, float32 limits, mask bits).
#pragma once

#include "context.hpp"
#include "workspace.hpp"

#include <kspecter/core/allocate.hpp>

#include <future>
#include <vector>

namespace kspecter::extract::detail {

/// The result's host arrays, sized (first touched) before the copies: reserved with no page
/// touched, given the huge-page hint, then zero-filled on threads of their own, one array
/// each. On one thread in 4 KiB page faults, a full frame's ~150 MB were most of the stitch
/// on a GPU (perf/gpu_runs.md); with a GPU backend this starts with the frame, so the host
/// does it while the device extracts. A host backend's frame arrays are the result's vectors
/// already (Workspace::output): nothing to do.
template <class ExecSpace>
class ResultArrays {
 public:
  ResultArrays(FrameContext<ExecSpace> const& fc, Workspace<ExecSpace> const& ws,
               FrameResult& res) {
    if constexpr (!Workspace<ExecSpace>::results_in_place) {
      outs_ = {{ws.flux.data(), ws.flux.span(), &res.flux},
               {ws.ivar.data(), ws.ivar.span(), &res.ivar},
               {ws.deconv.data(), ws.deconv.span(), &res.deconvolved_flux},
               {ws.chi2.data(), ws.chi2.span(), &res.chi2pix},
               {ws.pixmask.data(), ws.pixmask.span(), &res.pixmask_fraction},
               {ws.rdiag.data(), ws.rdiag.span(), &res.resolution}};
      if (fc.opt.model) outs_.push_back({ws.model.data(), ws.model.span(), &res.model});
      for (Out const& o : outs_) reserve_huge(*o.dst, o.size);  // allocation stays here
      start();
    }
  }

  /// Copies the device arrays into the (touched) result arrays.
  void copy(ExecSpace const& space) {
    if constexpr (!Workspace<ExecSpace>::results_in_place) {
      for (auto& t : touched_) t.get();
      using Flat =
          Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
      using FlatDev = Kokkos::View<double const*, typename ExecSpace::memory_space,
                                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
      // Straight into the result's storage: one device-to-host pass, no intermediate mirror.
      for (Out const& o : outs_)
        Kokkos::deep_copy(space, Flat(o.dst->data(), o.size), FlatDev(o.src, o.size));
      space.fence();
    }
  }

 private:
  struct Out {
    double const* src;
    std::size_t size;
    std::vector<double>* dst;
  };
  void start() {
    for (Out const& o : outs_)  // within the capacity: no allocation, nothing thrown
      touched_.push_back(std::async(std::launch::async, [o] { o.dst->resize(o.size); }));
  }
  std::vector<Out> outs_;
  std::vector<std::future<void>> touched_;
};

template <class ExecSpace>
void stitch(FrameContext<ExecSpace> const& fc, Workspace<ExecSpace> const& ws,
            ResultArrays<ExecSpace>& arrays, FrameResult& res) {
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::stitch", fc.times);
  arrays.copy(fc.space);
  if (fc.opt.model) {
    res.model_nx = fc.shape.npx;
    res.model_ny = fc.shape.npy;
  }
  auto const failed = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ws.failed);
  finalize_frame(res, failed.data(), fc.plan.dw, fc.opt);
}

}  // namespace kspecter::extract::detail
