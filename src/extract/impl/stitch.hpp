// Stage "stitch" (docs/algorithm.md §6): the frame arrays to the host, then what needs the
// whole frame (host_steps.hpp: the model's float32 limits, the mask bits); or, when the caller
// keeps them on the backend (ExtractHooks::outputs), both there (frame_outputs.hpp).
#pragma once

#include "context.hpp"
#include "frame_outputs.hpp"
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
/// the other. The last batch's solution part goes while its quality stage runs; the stitch
/// then copies only its quality part and the model. Under a Kokkos tool the copies stay on
/// the calling thread.
template <class ExecSpace>
class ResultArrays {
 public:
  ResultArrays(FrameContext<ExecSpace> const& fc, Workspace<ExecSpace> const& ws, FrameResult& res)
      : side_(ws.side), nspec_(fc.shape.nspec) {
    // Arrays that stay on the backend (ExtractHooks::outputs) are written by the stitch.
    if (fc.hooks.outputs) return;
    if constexpr (!Workspace<ExecSpace>::results_in_place) {
      std::size_t const w = static_cast<std::size_t>(fc.shape.nwave);
      outs_ = {out(ws.flux, w, res.flux, kSolution),
               out(ws.ivar, w, res.ivar, kSolution),
               out(ws.deconv, w, res.deconvolved_flux, kSolution),
               out(ws.rdiag, ws.rdiag.extent(1) * w, res.resolution, kSolution),
               out(ws.chi2, w, res.chi2pix, kQuality),
               out(ws.pixmask, w, res.pixmask_fraction, kQuality),
               out(ws.mask, w, res.mask, kQuality)};
      if (fc.opt.model) outs_.push_back(out(ws.model, 0, res.model, kQuality));
      start();
    }
  }
  ResultArrays(ResultArrays const&) = delete;
  ResultArrays& operator=(ResultArrays const&) = delete;
  ~ResultArrays() {
    if (pending_.valid()) pending_.wait();  // before the arrays it copies go
  }

  /// The frame arrays in two parts, finished at two times (finish_spectra.hpp): the
  /// solution's (flux, ivar, deconvolved flux, resolution) and the quality's (chi2pix,
  /// pixmask_fraction, mask; the model, copied last).
  static constexpr int kSolution = 0, kQuality = 1;

  /// Starts copying spectra [copied, s1) of the part, or of both parts (part < 0), which the
  /// kernels launched on `space` so far have finished, while `space` goes on.
  void copy_spectra(ExecSpace const& space, int s1, int part = -1) {
    if constexpr (!Workspace<ExecSpace>::results_in_place) {
      if (outs_.empty()) return;  // nothing goes to the host
      s1 = std::min(s1, nspec_);
      std::vector<Range> ranges;
      for (int p : {kSolution, kQuality})
        if ((part < 0 || part == p) && s1 > copied_[p]) {
          ranges.push_back({p, copied_[p], s1});
          copied_[p] = s1;
        }
      if (ranges.empty()) return;
      space.fence();  // the kernels that wrote these spectra
      if (Kokkos::Tools::profileLibraryLoaded()) {
        // Tools (kokkos-tools, bench_extract --kernels) keep one stack of events and are
        // not thread-safe: copy here, in order, without the overlap.
        wait_touched();
        for (Range const& r : ranges) copy_range(space, r);
        space.fence();
        return;
      }
      pending_ = std::async(std::launch::async, [this, ranges, prev = std::move(pending_)]() {
        if (prev.valid()) prev.wait();
        wait_touched();
        for (Range const& r : ranges) copy_range(side_.get(), r);
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
      for (int p : {kSolution, kQuality}) {
        copy_range(space, {p, copied_[p], nspec_});
        copied_[p] = nspec_;
      }
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
    int part;                     // kSolution or kQuality
  };
  struct Range {
    int part, s0, s1;  // spectra [s0, s1) of the part
  };
  // The vector gets its storage here (reserved, no page touched), so that nothing allocates
  // while the copies run.
  template <class View, class V>
  static Out out(View const& src, std::size_t row, std::vector<V>& dst, int part) {
    std::size_t const n = src.span();
    reserve_huge(dst, n);
    return {reinterpret_cast<char const*>(src.data()),
            n * sizeof(V),
            row * sizeof(V),
            reinterpret_cast<char*>(dst.data()),
            [&dst, n] { dst.resize(n); },
            part};
  }
  void start() {
    for (Out const& o : outs_)  // within the capacity: no allocation, nothing thrown
      touched_.push_back(std::async(std::launch::async, o.touch));
  }
  void wait_touched() {
    for (auto& t : touched_)
      if (t.valid()) t.get();
  }
  void copy_range(ExecSpace const& space, Range const& r) {
    if (r.s1 <= r.s0) return;
    for (Out const& o : outs_)
      if (o.row > 0 && o.part == r.part)
        copy_part(space, o, std::size_t(r.s0) * o.row, std::size_t(r.s1) * o.row);
  }
  // Straight into the result's storage: one device-to-host pass, no intermediate mirror.
  static void copy_part(ExecSpace const& space, Out const& o, std::size_t i0, std::size_t i1) {
    using Flat = Kokkos::View<char*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    using FlatDev = Kokkos::View<char const*, typename ExecSpace::memory_space,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    Kokkos::deep_copy(space, Flat(o.dst + i0, i1 - i0), FlatDev(o.src + i0, i1 - i0));
  }

  compat::SideInstance<ExecSpace> const& side_;  // the Workspace's
  int nspec_ = 0;
  int copied_[2] = {0, 0};  // spectra [0, copied_[part]) copied or being copied
  std::vector<Out> outs_;
  std::vector<std::future<void>> touched_;
  std::future<void> pending_;  // the last copy started
};

template <class ExecSpace>
void stitch(FrameContext<ExecSpace> const& fc, Workspace<ExecSpace> const& ws,
            ResultArrays<ExecSpace>& arrays, FrameResult& res) {
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::stitch", fc.times);
  if (fc.hooks.outputs)
    write_outputs(fc, ws, *fc.hooks.outputs, res);
  else
    arrays.copy(fc.space);
  auto const counts = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ws.quality_counts);
  for (std::size_t i = 0; i < 2 * fc.plan.batches.size(); ++i) res.stats.quality_macs += counts(i);
  if (fc.opt.model) {
    res.model_nx = fc.shape.npx;
    res.model_ny = fc.shape.npy;
    // A host's model is zero outside the columns its spots reached (frame_model.hpp).
    bool const narrowed = Workspace<ExecSpace>::results_in_place && !fc.hooks.outputs;
    res.model_x0 = narrowed ? std::min(ws.model_x0, ws.model_x1) : 0;
    res.model_x1 = narrowed ? ws.model_x1 : fc.shape.npx;
  }
  if (!fc.hooks.outputs) finalize_frame(res, fc.opt);
}

}  // namespace kspecter::extract::detail
