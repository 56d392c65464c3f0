// Stage "stitch" (docs/algorithm.md §6): the frame arrays to the host, then the host-side
// finishing (host_steps.hpp: units, float32 limits, mask bits).
#pragma once

#include "context.hpp"
#include "workspace.hpp"

#include <vector>

namespace kspecter::extract::detail {

template <class ExecSpace>
void stitch(FrameContext<ExecSpace> const& fc, Workspace<ExecSpace> const& ws, FrameResult& res) {
  using mem = typename ExecSpace::memory_space;
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::stitch", fc.times);
  // Straight into the result's storage: one device-to-host pass, no intermediate mirror.
  auto copy = [&](auto const& dv, std::vector<double>& out) {
    using Flat = Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    using FlatDev = Kokkos::View<double const*, mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    out.resize(dv.span());
    Kokkos::deep_copy(fc.space, Flat(out.data(), out.size()), FlatDev(dv.data(), dv.span()));
    fc.space.fence();
  };
  copy(ws.flux, res.flux);
  copy(ws.ivar, res.ivar);
  copy(ws.deconv, res.deconvolved_flux);
  copy(ws.chi2, res.chi2pix);
  copy(ws.pixmask, res.pixmask_fraction);
  copy(ws.rdiag, res.resolution);
  auto const failed = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ws.failed);
  if (fc.opt.model) {
    copy(ws.model, res.model);
    res.model_nx = fc.shape.npx;
    res.model_ny = fc.shape.npy;
  }
  finalize_frame(res, failed.data(), fc.plan.dw, fc.opt);
}

}  // namespace kspecter::extract::detail
