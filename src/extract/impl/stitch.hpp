// Stage "stitch" (docs/algorithm.md §6): the frame arrays to the host, then what needs the
// whole frame (host_steps.hpp: the model's float32 limits, the mask bits).
#pragma once

#include "context.hpp"
#include "workspace.hpp"

#include <kspecter/core/allocate.hpp>
#include <kspecter/core/kokkos_compat.hpp>

#include <algorithm>
#include <functional>
#include <future>
#include <vector>

namespace kspecter::extract::detail {

/// The result's host arrays, sized (first touched) before the copies: reserved with no page
/// touched, given the huge-page hint, then zero-filled on threads of their own, one array
/// each. On one thread in 4 KiB page faults, a full frame's ~150 MB were most of the stitch
/// on a GPU (perf/gpu_runs.md); with a GPU backend this starts with the frame, so the host
/// does it while the device extracts. A host backend's frame arrays are the result's vectors
/// already (Workspace::output): nothing to do.
///
/// The spectra of finished bundles are copied while the device goes on with the next batch
/// (copy_spectra): on a side instance (its own stream), from a host thread, one copy after
/// the other. The stitch then copies only the last batch's spectra and the model. Under a
/// Kokkos tool the copies stay on the calling thread.
template <class ExecSpace>
class ResultArrays {
 public:
  ResultArrays(FrameContext<ExecSpace> const& fc, Workspace<ExecSpace> const& ws, FrameResult& res)
      : side_(fc.space), nspec_(fc.shape.nspec) {
    if constexpr (!Workspace<ExecSpace>::results_in_place) {
      std::size_t const w = static_cast<std::size_t>(fc.shape.nwave);
      outs_ = {out(ws.flux, w, res.flux),
               out(ws.ivar, w, res.ivar),
               out(ws.deconv, w, res.deconvolved_flux),
               out(ws.chi2, w, res.chi2pix),
               out(ws.pixmask, w, res.pixmask_fraction),
               out(ws.mask, w, res.mask),
               out(ws.rdiag, ws.rdiag.extent(1) * w, res.resolution)};
      if (fc.opt.model) outs_.push_back(out(ws.model, 0, res.model));
      start();
    }
  }
  ResultArrays(ResultArrays const&) = delete;
  ResultArrays& operator=(ResultArrays const&) = delete;
  ~ResultArrays() {
    if (pending_.valid()) pending_.wait();  // before the arrays it copies go
  }

  /// Starts copying spectra [copied, s1) of the frame arrays, which the batches launched on
  /// `space` so far have finished, while `space` goes on with the next batch.
  void copy_spectra(ExecSpace const& space, int s1) {
    if constexpr (!Workspace<ExecSpace>::results_in_place) {
      int const s0 = copied_;
      s1 = std::min(s1, nspec_);
      if (s1 <= s0) return;
      copied_ = s1;
      space.fence();  // the kernels that wrote these spectra
      if (Kokkos::Tools::profileLibraryLoaded()) {
        // Tools (kokkos-tools, bench_extract --kernels) keep one stack of events and are
        // not thread-safe: copy here, in order, without the overlap.
        wait_touched();
        copy_range(space, s0, s1);
        space.fence();
        return;
      }
      pending_ = std::async(std::launch::async, [this, s0, s1, prev = std::move(pending_)]() {
        if (prev.valid()) prev.wait();
        wait_touched();
        copy_range(side_.get(), s0, s1);
        side_.get().fence();
      });
    }
  }

  /// Copies what is left (the spectra not yet copied and the model) into the result arrays,
  /// and waits for every copy.
  void copy(ExecSpace const& space) {
    if constexpr (!Workspace<ExecSpace>::results_in_place) {
      if (pending_.valid()) pending_.get();
      wait_touched();
      copy_range(space, copied_, nspec_);
      copied_ = nspec_;
      for (Out const& o : outs_)
        if (o.row == 0) copy_part(space, o, 0, o.size);
      space.fence();
    }
  }

 private:
  // A device array and the result's vector it goes to, as bytes.
  struct Out {
    char const* src;
    std::size_t size;  // bytes
    std::size_t row;   // bytes per spectrum; 0: not per spectrum (the model), copied last
    char* dst;         // the vector's storage, reserved
    std::function<void()> touch;  // sizes the vector, within its capacity
  };
  // The vector gets its storage here (reserved, no page touched), so that nothing allocates
  // while the copies run.
  template <class View, class V>
  static Out out(View const& src, std::size_t row, std::vector<V>& dst) {
    std::size_t const n = src.span();
    reserve_huge(dst, n);
    return {reinterpret_cast<char const*>(src.data()), n * sizeof(V), row * sizeof(V),
            reinterpret_cast<char*>(dst.data()), [&dst, n] { dst.resize(n); }};
  }
  void start() {
    for (Out const& o : outs_)  // within the capacity: no allocation, nothing thrown
      touched_.push_back(std::async(std::launch::async, o.touch));
  }
  void wait_touched() {
    for (auto& t : touched_)
      if (t.valid()) t.get();
  }
  void copy_range(ExecSpace const& space, int s0, int s1) {
    if (s1 <= s0) return;
    for (Out const& o : outs_)
      if (o.row > 0) copy_part(space, o, std::size_t(s0) * o.row, std::size_t(s1) * o.row);
  }
  // Straight into the result's storage: one device-to-host pass, no intermediate mirror.
  static void copy_part(ExecSpace const& space, Out const& o, std::size_t i0, std::size_t i1) {
    using Flat = Kokkos::View<char*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    using FlatDev = Kokkos::View<char const*, typename ExecSpace::memory_space,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    Kokkos::deep_copy(space, Flat(o.dst + i0, i1 - i0), FlatDev(o.src + i0, i1 - i0));
  }

  compat::SideInstance<ExecSpace> side_;
  int nspec_ = 0;
  int copied_ = 0;  // spectra [0, copied_) copied or being copied
  std::vector<Out> outs_;
  std::vector<std::future<void>> touched_;
  std::future<void> pending_;  // the last copy started
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
  finalize_frame(res, fc.opt);
}

}  // namespace kspecter::extract::detail
