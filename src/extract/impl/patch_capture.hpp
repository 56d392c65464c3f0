// The intermediates of the debug patches (ExtractHooks::debug_patch) for tests: copied to
// the host between the stages of their batch, so that the stages themselves know nothing
// about them.
#pragma once

#include "context.hpp"
#include "solve_variant.hpp"
#include "workspace.hpp"

#include <cstddef>
#include <utility>
#include <vector>

namespace kspecter::extract::detail {

template <class ExecSpace>
class PatchCapture {
 public:
  /// Picks the batch's debug patches (one, or all with ExtractHooks::every_patch); their windows
  /// are in the workspace's host patch table once the windows stage has run.
  PatchCapture(FrameContext<ExecSpace> const& fc, Batch const& batch,
               Workspace<ExecSpace> const& ws)
      : space_(fc.space) {
    int const P = batch.patch_end - batch.patch_begin;
    int const want = fc.hooks.debug_patch;
    for (int i = 0; i < P; ++i) {
      if (want != ExtractHooks::every_patch && want != batch.patch_begin + i) continue;
      index_.push_back(i);
      PatchDebug pd;
      pd.patch = fc.plan.patches[static_cast<std::size_t>(batch.patch_begin + i)];
      pd.x0 = ws.ptab_host(i).x0;
      pd.x1 = ws.ptab_host(i).x1;
      pd.y0 = ws.ptab_host(i).y0;
      pd.y1 = ws.ptab_host(i).y1;
      pd.n = fc.shape.n;
      pd.nslots = fc.shape.nslots;
      pd.m = fc.shape.m;
      patches_.push_back(std::move(pd));
    }
  }

  /// The kernels fill the lower triangle only: the captured matrices are zeroed first, so
  /// that every byte copied out is defined.
  template <class Solve>
  void before_assembly(BatchViews<ExecSpace> const& b, Solve) const {
    if constexpr (is_band_v<Solve>) return;  // the band path zeroes its band
    for (int i : index_)
      Kokkos::deep_copy(space_, Kokkos::subview(b.icov, i, Kokkos::ALL, Kokkos::ALL), 0.0);
  }

  template <class Solve>
  void after_assembly(BatchViews<ExecSpace> const& b, Solve) {
    for (std::size_t d = 0; d < index_.size(); ++d) {
      PatchDebug& pd = patches_[d];
      int const n = pd.n;
      auto& c = pd.icov;
      if constexpr (is_band_v<Solve>) {
        // The band (wavelength-major, v = bin * nslots + slot) back to a full fiber-major matrix.
        std::vector<double> band;
        grab(Kokkos::subview(b.band, index_[d], Kokkos::ALL, Kokkos::ALL), band);
        int const w = int(b.band.extent(2)), ns = pd.nslots, m = pd.m;
        c.assign(std::size_t(n) * n, 0.0);
        for (int v = 0; v < n; ++v)
          for (int k = 0; k < w; ++k) {
            int const col = v - (w - 1) + k;
            if (col < 0) continue;
            int const u = (v % ns) * m + v / ns, uc = (col % ns) * m + col / ns;
            c[std::size_t(u) * n + uc] = c[std::size_t(uc) * n + u] = band[std::size_t(v) * w + k];
          }
      } else {
        grab(Kokkos::subview(b.icov, index_[d], Kokkos::ALL, Kokkos::ALL), c);
        for (int i = 0; i < n; ++i)  // the kernels fill the lower triangle only
          for (int j = i + 1; j < n; ++j) c[std::size_t(i) * n + j] = c[std::size_t(j) * n + i];
      }
      grab(Kokkos::subview(b.rhs, index_[d], Kokkos::ALL), pd.y);
      grab(Kokkos::subview(b.fw, index_[d], Kokkos::ALL), pd.fluxweight);
    }
  }

  void after_factorisation(BatchViews<ExecSpace> const& b) {
    if (index_.empty()) return;
    auto const info = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.info);
    for (std::size_t d = 0; d < index_.size(); ++d) {
      patches_[d].info = info(index_[d]);
      grab(Kokkos::subview(b.rhs, index_[d], Kokkos::ALL), patches_[d].deconvolved);
    }
  }

  void after_decorrelation(BatchViews<ExecSpace> const& b, int ncs) {
    for (std::size_t d = 0; d < index_.size(); ++d) {
      std::size_t const i = std::size_t(index_[d]);
      grab(Kokkos::subview(b.qb, std::make_pair(i * ncs, (i + 1) * ncs), Kokkos::ALL, Kokkos::ALL),
           patches_[d].q);
    }
  }

  /// Hands the captured patches over, in plan order.
  void move_to(std::vector<PatchDebug>& out) {
    for (auto& pd : patches_) out.push_back(std::move(pd));
    patches_.clear();
  }

 private:
  template <class View>
  static void grab(View const& dv, std::vector<double>& out) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dv);
    out.assign(h.data(), h.data() + h.span());
  }

  ExecSpace space_;
  std::vector<int> index_;  // batch-relative indices of the captured patches
  std::vector<PatchDebug> patches_;
};

}  // namespace kspecter::extract::detail
