// The device memory of one frame extraction: the frame's output arrays and the batch buffers
// that every batch reuses, allocated once, grown when a batch needs more, and metered for the
// peak-memory figure (ExtractStats::peak_device_bytes).
#pragma once

#include "arena.hpp"
#include "context.hpp"
#include "solve_variant.hpp"

#include <kspecter/core/allocate.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/extract/patch_plan.hpp>
#include <kspecter/psf/spots.hpp>
#include <kspecter/solve/band.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kspecter::extract::detail {

/// Device bytes held now and at most.
struct MemoryMeter {
  std::size_t now = 0, peak = 0;
  void hold(std::size_t b) {
    now += b;
    peak = std::max(peak, now);
  }
  void release(std::size_t b) { now -= std::min(now, b); }
};

template <class View>
std::size_t bytes_of(View const& v) {
  return v.span() * sizeof(typename View::value_type);
}

/// The batch buffers of one batch: the first P patches' share of the workspace.
template <class ExecSpace>
struct BatchViews {
  using T = Types<ExecSpace>;
  int P = 0;                                       // patches of the batch
  int nrow_max = 0;                                // window rows the row ranges hold
  typename T::Spots spots;                         // [nfb][nfull][sny][snx]
  typename T::Corners xc, yc;                      // [nfb][nfull]
  typename T::Table ptab;                          // [pmax], entries [0, P) in use
  typename T::Mat icov;                            // [P][n][n] (dense path)
  solve::BandBatch<typename T::mem> band;          // [P][n][hw + 1] (band path, band_solve.hpp)
  typename T::Vec rhs, fw;                         // [P][n]
  typename T::Vec1 minw;                           // [P]
  Kokkos::View<int*, typename T::mem> info;        // [P] Cholesky status
  typename T::Blocks cblk;                         // [P][nslots][m][m] (band path: the band)
  typename T::Mat qb;                              // [P * ncs][m][m]
  typename T::Vec rhs_band;                        // [P][n] band path: y in wavelength-major order
  Kokkos::View<int*, typename T::mem> half_width;  // [P]
  Kokkos::View<int**, Kokkos::LayoutRight, typename T::mem> core_slots;  // [P][ncs]
};

/// A compact batch of the patches that a repeat assembles again (rework.hpp), grown as a
/// rework needs and kept with the solve: their ids in the batch, plan entries, and batch
/// buffers ([cap] patches; the band [cap][n][hw + 1] flat).
template <class Mem>
struct ReworkBuffers {
  using Vec = Kokkos::View<double**, Kokkos::LayoutRight, Mem>;
  int cap = 0;
  Kokkos::View<int*, Mem> ids, info;
  Kokkos::View<PatchEntry*, Mem> ptab;
  Kokkos::View<double*, Mem> band, minw;
  Vec rhs, fw;  // assembly writes both; the rework solves nothing
  Kokkos::View<double***, Kokkos::LayoutRight, Mem> qb;      // [cap * ncs][m][m]
  Kokkos::View<int**, Kokkos::LayoutRight, Mem> core_slots;  // [cap][ncs]
  std::size_t bytes = 0;
};

/// What a one-batch frame keeps for the next to solve with (reuse.hpp): the band it was
/// solved on, the weight strip it was assembled with, and the Cholesky status (which
/// start_frame zeroes); its factor, Q, spots and windows stay in the batch buffers. A repeat
/// whose weights differ in a few windows finds them with `rows` and `changed` and assembles
/// those patches again in `rework` (rework.hpp).
template <class Mem>
struct KeptSolve {
  BandSolve band{0};  // none: the dense path
  Kokkos::View<double**, Kokkos::LayoutRight, Mem> weights;
  int x0 = 0, ncol = 0;
  Kokkos::View<int*, Mem> info;
  Kokkos::View<int*, Mem> rows;     // [npy] weights that differ, per row
  Kokkos::View<int*, Mem> changed;  // [P] 1 where a patch's window holds such a weight
  ReworkBuffers<Mem> rework;
};

/// The model image's per-fiber row ranges and per-column fiber ranges (frame_model.hpp) of a
/// batch's requested fibers [fa, fa + nf), over the box of columns [bx0, bx1).
template <class Mem>
struct ModelRanges {
  Kokkos::View<int***, Kokkos::LayoutRight, Mem> rows;    // [nf][npy][2]
  Kokkos::View<int**, Kokkos::LayoutRight, Mem> spans;    // [nf][2]
  Kokkos::View<int**, Kokkos::LayoutRight, Mem> columns;  // [bx1 - bx0][2]
  int bx0 = 0, bx1 = 0;
  std::size_t bytes() const {
    return rows.span() * sizeof(int) + spans.span() * sizeof(int) + columns.span() * sizeof(int);
  }
};

/// Bits of Workspace::failed: the bin's patch failed (decorrelate), or the bin's numbers did
/// not fit float32 (finish_spectra). The mask's BAD2DFIT takes either.
constexpr int kFailedPatch = 1, kFailedFloat32 = 2;

template <class ExecSpace>
class Workspace {
 public:
  using T = Types<ExecSpace>;
  using mem = typename ExecSpace::memory_space;
  using Array2 = Kokkos::View<double**, Kokkos::LayoutRight, mem>;
  /// The frame arrays are the result's own vectors (host memory), so the stitch copies nothing.
  static constexpr bool results_in_place =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, mem>::accessible;

  // Frame arrays: the outputs the batches fill.
  Array2 flux, ivar, deconv, chi2, pixmask;                      // [nspec][nwave]
  Kokkos::View<double***, Kokkos::LayoutRight, mem> rdiag;       // [nspec][2 ndiag + 1][nwave]
  Kokkos::View<int**, Kokkos::LayoutRight, mem> failed;          // [nspec][nwave] kFailed* bits
  Kokkos::View<std::uint32_t**, Kokkos::LayoutRight, mem> mask;  // [nspec][nwave] specmask
  Array2 model;                                                  // [npy][npx] when asked for
  Kokkos::View<double*, mem> full_wave;                          // [nfull] padded grid

  // Batch buffers, sized for the largest batch.
  typename T::Mat icov_all;
  typename T::Vec rhs_all, fw_all;
  typename T::Vec1 minw_all;
  Kokkos::View<int*, mem> info_all;
  typename T::Blocks cblk_all;
  typename T::Mat q_all;
  typename T::Vec rhs_band_all;                                  // band path (band_solve.hpp)
  Kokkos::View<int*, mem> half_width_all;                        // band path
  Kokkos::View<int**, Kokkos::LayoutRight, mem> core_slots_all;  // band path
  typename T::Table ptab_all;
  typename T::Table::HostMirror ptab_host;
  typename T::Vec pix_all;     // [pmax][window pixels], grown as windows need
  typename T::Ranges rr_all;   // [pmax * nslots][window rows][2], grown with pix_all
  typename T::XRanges xr_all;  // [pmax * nslots][2]
  psf::Spots<mem> spots;       // the batch's spots (the provider reallocates them)
  // The inverse square root's device memory (GPU), kept from batch to batch; metered by
  // decorrelate() as it grows.
  solve::InverseSqrtWorkspace<mem> inverse_sqrt;

  // The quality kernels' pixel products, two a batch (quality.hpp), read with the stitch.
  Kokkos::View<long long*, mem> quality_counts;

  // The second instance (its own stream on a GPU) that copies the frame arrays to the host
  // while the batches run (stitch.hpp), kept with the buffers: on a GPU its stream and Kokkos'
  // scratch for it cost a stream creation and four small allocations a frame otherwise.
  compat::SideInstance<ExecSpace> side;
  // The instance that runs the quality stage's window kernels beside the decorrelation and
  // the model image (quality.hpp): on a GPU each is latency-bound, and they share no buffer.
  compat::SideInstance<ExecSpace> quality_side;

  // The batch's pixel weights: CCD columns [weights_x0, weights_x0 + ncol) of every row.
  Array2 weights;   // [npy][ncol], grown when a batch's strip is wider
  Array2 weighted;  // a host's weighted image W p over the strip (0 where W = 0; assembly.hpp)
  int weights_x0 = 0, weights_ncol = 0;
  MemoryMeter meter;
  // Set by a one-batch frame that allows reuse (ExtractHooks::reuse_factor), dropped by any
  // other frame, so that it always describes the buffers' last frame.
  std::optional<KeptSolve<mem>> kept_solve;
  // The quality stage's row ranges (rr_all, xr_all) and the model image's, as a one-batch
  // frame that allows reuse made them: they follow from the spots and the plan alone, so a
  // repeat of the kept solve (reuse.hpp) takes them as they are (quality.hpp,
  // frame_model.hpp). Forgotten by any other frame, and when the window buffers move.
  bool ranges_kept = false;
  std::optional<ModelRanges<mem>> model_ranges;

  // A host backend's model image: the columns [model_x0, model_x1) its spots reached this frame
  // (frame_model.hpp; none: model_x0 >= model_x1).
  int model_x0 = 0, model_x1 = 0;

  // The row sums of Q (decorrelation.hpp) as a frame allowed to keep its solve left them.
  Kokkos::View<double*, mem> q_rowsums;

  /// Room for `n` kept row sums of Q (metered).
  void keep_row_sums(std::size_t n) {
    if (q_rowsums.extent(0) >= n) return;
    forget_row_sums();
    q_rowsums = allocate<Kokkos::View<double*, mem>>(space_, "kspecter::extract::q_rowsums", n);
    meter.hold(n * sizeof(double));
  }
  void forget_row_sums() {
    meter.release(q_rowsums.span() * sizeof(double));
    q_rowsums = Kokkos::View<double*, mem>();
  }

  void forget_ranges() {
    ranges_kept = false;
    if (model_ranges) meter.release(model_ranges->bytes());
    model_ranges.reset();
  }

  /// `res`: the frame's result, whose vectors a host backend's frame arrays are (see output).
  Workspace(ExecSpace const& space, PatchPlan const& plan, FrameShape const& s, bool with_model,
            FrameResult& res)
      : side(space), quality_side(space), space_(space), shape_(s) {
    // On a GPU one block (arena.hpp); on a host each buffer on its own.
    arena_ = Arena<mem>::make(space_, "kspecter::extract::workspace", !results_in_place,
                              [&](Arena<mem>& a) { cut(a, plan, res, with_model); });
    meter.hold(arena_.bytes() + outside(failed) + outside(rhs_all) + outside(fw_all) +
               outside(minw_all) + outside(info_all) + outside(cblk_all) + outside(q_all) +
               outside(ptab_all) + outside(rhs_band_all) + outside(half_width_all) +
               outside(core_slots_all) + outside(xr_all) + outside_outputs());
    // On a GPU the table's host copy is a vector's memory, not a View of its own: Kokkos 3.4
    // fills and destroys a View of structs with a parallel_for on the host's execution space,
    // and waking the OpenMP pool for them is a frame's cost that buys nothing here
    // (docs/algorithm.md).
    if (arena_.holds(ptab_all.data())) {
      ptab_store_.resize(std::size_t(s.pmax));
      ptab_host = typename T::Table::HostMirror(ptab_store_.data(), s.pmax);
    } else {
      ptab_host = Kokkos::create_mirror_view(ptab_all);  // ptab_all itself on a host
    }
    advise_huge_pages(cblk_all);  // the band (or the dense blocks) and Q: written whole
    advise_huge_pages(q_all);
    zero_frame_arrays();
    upload_grid(plan);
  }

  /// Whether this workspace's buffers serve a frame of shape `s` (KeptBuffers): its sizes,
  /// and a model image if asked for (a host backend's frame arrays are the result's own).
  bool fits(FrameShape const& s, bool with_model) const {
    return s == shape_ && (results_in_place || !with_model || model.extent(0) > 0);
  }

  /// Readies the buffers of the frame before (fits) for a new frame `res`, on `space`: the
  /// frame arrays zeroed as a new workspace's are (on a host, the new result's vectors), the
  /// grid uploaded. The batch buffers and those grown by the frame before are kept as they
  /// are: each batch writes what it reads.
  void start_frame(ExecSpace const& space, PatchPlan const& plan, FrameResult& res,
                   bool with_model) {
    space_ = space;
    if constexpr (results_in_place) {
      meter.release(output_bytes_);
      bind_outputs(arena_, res, with_model);
      meter.hold(output_bytes_);
    }
    zero_frame_arrays();
    upload_grid(plan);
    meter.peak = meter.now;
  }

  /// Room for the quality counts of `nbatch` batches (each batch writes its own two).
  void reserve_counts(int nbatch) {
    if (quality_counts.extent(0) >= std::size_t(2 * nbatch)) return;
    quality_counts = allocate<decltype(quality_counts)>(space_, "kspecter::extract::quality_counts",
                                                        std::size_t(2 * nbatch));
  }

  /// Points the weights at CCD columns [x0, x0 + ncol), and makes room for windows of `nrow`
  /// rows x `npix / nrow` columns: the weight strip, the pixel buffers and the row ranges,
  /// sized by the first batch's windows, and grown together (from one new block on a GPU, as
  /// the rest of the workspace) when a batch needs more. Their contents need not survive:
  /// each batch sanitizes its own strip and writes its own windows.
  void reserve_windows(int x0, int ncol, std::size_t npix, int nrow) {
    weights_x0 = x0;
    weights_ncol = ncol;
    int const pmax = shape_.pmax;
    if (weights.extent(0) > 0 && weights.extent(1) >= std::size_t(ncol) &&
        pix_all.extent(0) >= std::size_t(pmax) && pix_all.extent(1) >= npix &&
        rr_all.extent(1) >= std::size_t(nrow))
      return;
    // Each at least as big as it was: a batch's strip and windows differ by a few columns.
    int const wcol = std::max(int(weights.extent(1)), std::min(shape_.npx, with_headroom(ncol)));
    std::size_t const pcol = std::max(pix_all.extent(1), with_headroom(npix));
    std::size_t const rrow = std::max(rr_all.extent(1), std::size_t(with_headroom(nrow)));
    meter.release(window_bytes_);
    ranges_kept = false;  // rr_all goes
    weights = Array2(), weighted = Array2(), pix_all = typename T::Vec(),
    rr_all = typename T::Ranges();
    windows_ = Arena<mem>::off();  // the old memory goes before the new comes
    windows_ = Arena<mem>::make(
        space_, "kspecter::extract::windows", !results_in_place, [&](Arena<mem>& a) {
          weights = a.template take<Array2>(space_, "kspecter::extract::weights", shape_.npy, wcol);
          if constexpr (T::Tune::host_loops)
            weighted = a.template take<Array2>(space_, "kspecter::extract::weighted_image",
                                               shape_.npy, wcol);
          pix_all = a.template take<typename T::Vec>(space_, "kspecter::extract::chi2_pixels", pmax,
                                                     pcol);
          rr_all = a.template take<typename T::Ranges>(space_, "kspecter::extract::row_ranges",
                                                       pmax * shape_.nslots, rrow, 2);
        });
    advise_huge_pages(weights);  // written whole by the sanitizing kernel
    advise_huge_pages(weighted);
    advise_huge_pages(pix_all);
    window_bytes_ = windows_.bytes() + windows_.outside(weights) + windows_.outside(weighted) +
                    windows_.outside(pix_all) + windows_.outside(rr_all);
    meter.hold(window_bytes_);
  }

  /// The weights as the kernels index them (by CCD column).
  WeightStrip<mem> weight_strip() const {
    return {Kokkos::subview(weights, Kokkos::ALL, std::make_pair(0, weights_ncol)), weights_x0};
  }
  /// A host's weighted image W p, indexed as the weights (none on a GPU).
  WeightStrip<mem> weighted_strip() const {
    if (weighted.extent(0) == 0) return {weighted, weights_x0};
    return {Kokkos::subview(weighted, Kokkos::ALL, std::make_pair(0, weights_ncol)), weights_x0};
  }

  /// The dense matrices [pmax][n][n], for the batches that take the dense path (allocated
  /// when the first such batch comes).
  void ensure_dense() {
    if (icov_all.extent(0) > 0) return;
    icov_all = allocate<typename T::Mat>(space_, "kspecter::extract::icov", shape_.pmax, shape_.n,
                                         shape_.n);
    advise_huge_pages(icov_all);
    meter.hold(bytes_of(icov_all));
  }

  /// A buffer that grows takes a quarter more than asked: the batches' strips and windows
  /// differ by a few columns, and each growth is a free and an allocation of tens of MB
  /// (on a GPU, about a millisecond).
  template <class N>
  static N with_headroom(N n) {
    return n + n / 4;
  }

  /// Device bytes this workspace holds of its own (a host backend's frame arrays are the
  /// result's vectors, not its own).
  std::size_t own_bytes() const {
    return meter.now - (results_in_place ? std::min(meter.now, output_bytes_) : 0);
  }

  /// Meters the inverse square root's workspace as the last call left it.
  void meter_inverse_sqrt() {
    meter.release(isqrt_bytes_);
    isqrt_bytes_ = outside(inverse_sqrt.doubles) + outside(inverse_sqrt.ints);
    meter.hold(isqrt_bytes_);
  }

  /// Meters the spots the provider just made (in place of the previous batch's).
  void meter_spots() {
    meter.release(spot_bytes_);
    spot_bytes_ = outside(spots.values) + outside(spots.xc) + outside(spots.yc);
    meter.hold(spot_bytes_);
  }

  /// The first P patches' buffers, with this batch's spots: iCov as band matrices of the
  /// variant's half-width, or dense ones (DenseSolve: ensure_dense first).
  template <class Solve>
  BatchViews<ExecSpace> batch(int P, Solve variant) const {
    BatchViews<ExecSpace> b;
    auto const pr = std::make_pair(0, P);
    b.P = P;
    b.nrow_max = static_cast<int>(rr_all.extent(1));
    b.spots = spots.values;
    b.xc = spots.xc;
    b.yc = spots.yc;
    b.ptab = ptab_all;
    if constexpr (is_band_v<Solve>)
      b.band = solve::BandBatch<mem>(cblk_all.data(), P, shape_.n, variant.half_width + 1);
    else
      b.icov = Kokkos::subview(icov_all, pr, Kokkos::ALL, Kokkos::ALL);
    b.rhs = Kokkos::subview(rhs_all, pr, Kokkos::ALL);
    b.fw = Kokkos::subview(fw_all, pr, Kokkos::ALL);
    b.minw = Kokkos::subview(minw_all, pr);
    b.info = Kokkos::subview(info_all, pr);
    b.cblk = Kokkos::subview(cblk_all, pr, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
    b.qb = Kokkos::subview(q_all, std::make_pair(std::size_t(0), std::size_t(P) * shape_.ncs),
                           Kokkos::ALL, Kokkos::ALL);
    b.rhs_band = Kokkos::subview(rhs_band_all, pr, Kokkos::ALL);
    b.half_width = Kokkos::subview(half_width_all, pr);
    b.core_slots = Kokkos::subview(core_slots_all, pr, Kokkos::ALL);
    return b;
  }

 private:
  // Every buffer whose size the frame's shape gives, from `a` (arena.hpp): the frame arrays,
  // the batch buffers, the quality counts, and the first batch's spots and inverse square
  // root's workspace (as their providers would make them, so that they make none). Not
  // initialised; no metering (two passes go through here on a GPU).
  void cut(Arena<mem>& a, PatchPlan const& plan, FrameResult& res, bool with_model) {
    FrameShape const& s = shape_;
    int const pmax = s.pmax;
    auto take = [&](auto& v, char const* label, auto... extents) {
      v = a.template take<std::remove_reference_t<decltype(v)>>(space_, label, extents...);
    };
    bind_outputs(a, res, with_model);
    take(failed, "kspecter::extract::failed", s.nspec, s.nwave);
    take(full_wave, "kspecter::extract::full_wave", s.nfull);
    take(rhs_all, "kspecter::extract::rhs", pmax, s.n);
    take(fw_all, "kspecter::extract::fluxweight", pmax, s.n);
    take(minw_all, "kspecter::extract::minweight", pmax);
    take(info_all, "kspecter::extract::info", pmax);
    take(cblk_all, "kspecter::extract::cov_blocks", pmax, s.nslots, s.m, s.m);
    take(q_all, "kspecter::extract::q_blocks", std::size_t(pmax) * s.ncs, s.m, s.m);
    take(rhs_band_all, "kspecter::extract::rhs_band", pmax, s.n);
    take(half_width_all, "kspecter::extract::half_width", pmax);
    take(core_slots_all, "kspecter::extract::core_slots", pmax, s.ncs);
    take(ptab_all, "kspecter::extract::patches", pmax);
    take(xr_all, "kspecter::extract::slot_columns", pmax * s.nslots, 2);
    take(quality_counts, "kspecter::extract::quality_counts", 2 * plan.batches.size());
    if (!plan.batches.empty()) {
      int const nfb = plan.batches[0].fiber_end - plan.batches[0].fiber_begin;
      take(spots.values, "kspecter::psf::spots", nfb, s.nfull, s.sny, s.snx);
      take(spots.xc, "kspecter::psf::spots_xc", nfb, s.nfull);
      take(spots.yc, "kspecter::psf::spots_yc", nfb, s.nfull);
    }
    solve::InverseSqrtWorkspaceSize const isqrt =
        solve::inverse_sqrt_workspace_size<ExecSpace>(pmax * s.ncs, s.m);
    if (isqrt.doubles > 0)
      take(inverse_sqrt.doubles, "kspecter::solve::inverse_sqrt::doubles", isqrt.doubles);
    if (isqrt.ints > 0) take(inverse_sqrt.ints, "kspecter::solve::inverse_sqrt::ints", isqrt.ints);
  }

  // The frame arrays (the result's vectors on a host backend, see output).
  void bind_outputs(Arena<mem>& a, FrameResult& res, bool with_model) {
    FrameShape const& s = shape_;
    output_bytes_ = 0;
    flux = output<Array2>(a, "kspecter::extract::flux", res.flux, s.nspec, s.nwave);
    ivar = output<Array2>(a, "kspecter::extract::ivar", res.ivar, s.nspec, s.nwave);
    deconv =
        output<Array2>(a, "kspecter::extract::deconvolved", res.deconvolved_flux, s.nspec, s.nwave);
    chi2 = output<Array2>(a, "kspecter::extract::chi2pix", res.chi2pix, s.nspec, s.nwave);
    pixmask =
        output<Array2>(a, "kspecter::extract::pixmask", res.pixmask_fraction, s.nspec, s.nwave);
    rdiag = output<decltype(rdiag)>(a, "kspecter::extract::rdiag", res.resolution, s.nspec,
                                    2 * s.ndiag + 1, s.nwave);
    mask = output<decltype(mask)>(a, "kspecter::extract::mask", res.mask, s.nspec, s.nwave);
    model = with_model ? output<Array2>(a, "kspecter::extract::model", res.model, s.npy, s.npx)
                       : Array2();
  }

  // The frame arrays' bytes outside the arena (a host backend's: the result's vectors).
  std::size_t outside_outputs() const {
    return outside(flux) + outside(ivar) + outside(deconv) + outside(chi2) + outside(pixmask) +
           outside(rdiag) + outside(mask) + outside(model);
  }

  // Zeros what a frame expects zeroed: its arrays (on a host backend the result's vectors,
  // zero already), the failed bits and the Cholesky status.
  void zero_frame_arrays() {
    model_x0 = shape_.npx, model_x1 = 0;
    auto zero = [&](auto const& v) { fill_span(space_, v, {}); };
    if constexpr (!results_in_place) {
      zero(flux), zero(ivar), zero(deconv), zero(chi2), zero(pixmask), zero(rdiag), zero(mask);
      if (model.extent(0) > 0) zero(model);
    }
    zero(failed), zero(info_all);
  }

  // Bytes of `v` that the meter counts apart from the arena's.
  template <class View>
  std::size_t outside(View const& v) const {
    return arena_.outside(v);
  }

  void upload_grid(PatchPlan const& plan) {
    Kokkos::View<double const*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(
        plan.full_wave.data(), plan.full_wave.size());
    Kokkos::deep_copy(space_, full_wave, h);
  }

  // A frame array, zeroed: on a host backend the result's own vector (sized here, given the
  // huge-page hint), so that the stitch copies nothing; on a GPU a device array that the
  // stitch copies into that vector (ResultArrays).
  template <class View, class V, class... Extents>
  View output(Arena<mem>& a, char const* name, std::vector<V>& dst, Extents... extents) {
    View v;
    if constexpr (results_in_place) {
      std::size_t const size = (std::size_t(extents) * ...);
      if (dst.size() != size) {  // else zeros already (ExtractHooks::model_buffer)
        reserve_huge(dst, size);
        dst.resize(size);
      }
      v = View(dst.data(), extents...);
    } else {
      v = a.template take<View>(space_, name, extents...);
    }
    output_bytes_ += bytes_of(v);
    return v;
  }

  ExecSpace space_;
  Arena<mem> arena_ = Arena<mem>::off();    // its Views are unmanaged: no order to keep
  Arena<mem> windows_ = Arena<mem>::off();  // the window-sized buffers (reserve_windows)
  std::vector<PatchEntry> ptab_store_;      // ptab_host's memory on a GPU
  FrameShape shape_;
  std::size_t spot_bytes_ = 0, window_bytes_ = 0, isqrt_bytes_ = 0, output_bytes_ = 0;
};

}  // namespace kspecter::extract::detail
