// extract_frame for one execution space: the batch loop around the kernels of kernels.hpp
// and the batched solves of solve/. Included by the per-backend instantiation files.
#pragma once

#include "kernels.hpp"
#include "out_of_memory.hpp"

#include <kspecter/core/allocate.hpp>
#include <kspecter/core/error.hpp>
#include <kspecter/core/profiling.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/extract/mask_bits.hpp>
#include <kspecter/psf/spots.hpp>
#include <kspecter/solve/batched.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

namespace kspecter::extract::detail {

// Device bytes held now and at most, for the benchmark's peak-memory figure.
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

// Median of the finite values of a strided sequence (BAD2DFIT's relative rule).
inline double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<long>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  double hi = *mid;
  if (v.size() % 2 == 1) return hi;
  double lo = *std::max_element(v.begin(), mid);
  return 0.5 * (lo + hi);
}

template <class ExecSpace>
FrameResult extract_frame_impl(ExecSpace const& space,
                               SpotProvider<typename ExecSpace::memory_space> const& provider,
                               SpotGeometry const& geom,
                               ImageView<typename ExecSpace::memory_space> image,
                               ImageView<typename ExecSpace::memory_space> ivar_in,
                               ExtractOptions const& opt, StageTimes* times) {
  using T = Types<ExecSpace>;
  using mem = typename ExecSpace::memory_space;
  using Policy = typename T::Policy;
  using RangeL = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long>>;
  using RangeI = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>;

  // ------------------------------------------------------------------ checks and plan
  if (static_cast<int>(image.extent(0)) != geom.npix_y ||
      static_cast<int>(image.extent(1)) != geom.npix_x)
    throw ParameterError("extract: the image is " + std::to_string(image.extent(1)) + " x " +
                         std::to_string(image.extent(0)) +
                         " (columns x rows) but the PSF describes " + std::to_string(geom.npix_x) +
                         " x " + std::to_string(geom.npix_y));
  if (ivar_in.extent(0) != image.extent(0) || ivar_in.extent(1) != image.extent(1))
    throw ParameterError("extract: the inverse variance is " + std::to_string(ivar_in.extent(1)) +
                         " x " + std::to_string(ivar_in.extent(0)) + ", the image " +
                         std::to_string(image.extent(1)) + " x " + std::to_string(image.extent(0)));
  int const sny = 2 * geom.hsizey + 1, snx = 2 * geom.hsizex + 1;
  PatchPlan const plan = make_patch_plan(opt, geom.nfiber, sny, snx);
  opt.validate_range(geom.wavemin, geom.wavemax);
  double const psferr = opt.psferr >= 0 ? opt.psferr : geom.psferr;
  int const nspec = plan.nspec, nwave = plan.nwave, m = plan.nwave_pad, n = plan.n;
  int const nslots = plan.nfiber_slots, ncs = plan.ncore_slots, ndiag = geom.hsizey;
  int const npy = geom.npix_y, npx = geom.npix_x;
  int const nfull = static_cast<int>(plan.full_wave.size());

  FrameResult res;
  res.specmin = plan.specmin;
  res.nspec = nspec;
  res.nwave = nwave;
  res.ndiag = ndiag;
  res.wavelength = plan.wave;
  res.stats.n = n;
  res.stats.block = m;
  res.stats.npatch = static_cast<int>(plan.patches.size());
  res.stats.nbatch = static_cast<int>(plan.batches.size());
  MemoryMeter meter;

  // ------------------------------------------------------------------ frame-level arrays
  using Mat2 = Kokkos::View<double**, Kokkos::LayoutRight, mem>;
  auto alloc2 = [&](char const* name, int a, int b) {
    auto v = allocate_zeroed<Mat2>(space, name, a, b);
    meter.hold(bytes_of(v));
    return v;
  };
  auto weights = allocate<Mat2>(space, "kspecter::extract::weights", npy, npx);
  meter.hold(bytes_of(weights));
  auto d_flux = alloc2("kspecter::extract::flux", nspec, nwave);
  auto d_ivar = alloc2("kspecter::extract::ivar", nspec, nwave);
  auto d_deconv = alloc2("kspecter::extract::deconvolved", nspec, nwave);
  auto d_chi2 = alloc2("kspecter::extract::chi2pix", nspec, nwave);
  auto d_pixmask = alloc2("kspecter::extract::pixmask", nspec, nwave);
  auto d_rdiag = allocate_zeroed<Kokkos::View<double***, Kokkos::LayoutRight, mem>>(
      space, "kspecter::extract::rdiag", nspec, 2 * ndiag + 1, nwave);
  meter.hold(bytes_of(d_rdiag));
  auto d_failed = allocate_zeroed<Kokkos::View<int**, Kokkos::LayoutRight, mem>>(
      space, "kspecter::extract::failed", nspec, nwave);
  meter.hold(bytes_of(d_failed));
  Mat2 d_model;
  if (opt.model) {
    d_model = allocate_zeroed<Mat2>(space, "kspecter::extract::model", npy, npx);
    meter.hold(bytes_of(d_model));
  }
  auto d_fullwave =
      allocate<Kokkos::View<double*, mem>>(space, "kspecter::extract::full_wave", nfull);
  {
    Kokkos::View<double const*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(
        plan.full_wave.data(), plan.full_wave.size());
    Kokkos::deep_copy(space, d_fullwave, h);
  }

  // ------------------------------------------------------------------ batch buffers
  int pmax = 0;
  for (auto const& b : plan.batches) pmax = std::max(pmax, b.patch_end - b.patch_begin);
  auto icov_all = allocate<typename T::Mat>(space, "kspecter::extract::icov", pmax, n, n);
  auto rhs_all = allocate<typename T::Vec>(space, "kspecter::extract::rhs", pmax, n);
  auto fw_all = allocate<typename T::Vec>(space, "kspecter::extract::fluxweight", pmax, n);
  auto minw_all = allocate<typename T::Vec1>(space, "kspecter::extract::minweight", pmax);
  auto info_all = allocate_zeroed<Kokkos::View<int*, mem>>(space, "kspecter::extract::info", pmax);
  auto cblk_all =
      allocate<typename T::Blocks>(space, "kspecter::extract::cov_blocks", pmax, nslots, m, m);
  auto q_all = allocate<typename T::Mat>(space, "kspecter::extract::q_blocks",
                                         std::size_t(pmax) * ncs, m, m);
  auto ptab_all = allocate<typename T::Table>(space, "kspecter::extract::patches", pmax, int(NPT));
  auto ptab_host = Kokkos::create_mirror_view(ptab_all);
  meter.hold(bytes_of(icov_all) + bytes_of(rhs_all) + bytes_of(fw_all) + bytes_of(minw_all) +
             bytes_of(info_all) + bytes_of(cblk_all) + bytes_of(q_all) + bytes_of(ptab_all));
  typename T::Vec pix_all;
  typename T::Ranges rr_all;
  auto xr_all = allocate<Kokkos::View<int***, Kokkos::LayoutRight, mem>>(
      space, "kspecter::extract::slot_columns", pmax, nslots, 2);
  meter.hold(bytes_of(xr_all));
  std::vector<char> ready(std::size_t(npx), 0);  // columns whose weights are sanitized
  std::size_t pix_bytes = 0;

  psf::Spots<mem> spots;
  std::size_t spot_bytes = 0;

  for (Batch const& batch : plan.batches) {
    int const P = batch.patch_end - batch.patch_begin;
    int const nfb = batch.fiber_end - batch.fiber_begin;
    auto const pr = std::make_pair(0, P);

    // ---------------------------------------------------------------- spots
    {
      StageTimer<ExecSpace> st(space, "kspecter::extract::spots", times);
      meter.release(spot_bytes);
      provider(batch.fiber_begin, nfb, d_fullwave, spots);
      if (static_cast<int>(spots.values.extent(0)) != nfb ||
          static_cast<int>(spots.values.extent(1)) != nfull ||
          static_cast<int>(spots.values.extent(2)) != sny ||
          static_cast<int>(spots.values.extent(3)) != snx)
        throw Error("extract: the spot provider returned spots of the wrong shape");
      spot_bytes = bytes_of(spots.values) + bytes_of(spots.xc) + bytes_of(spots.yc);
      meter.hold(spot_bytes);
      res.stats.nspots += static_cast<long long>(nfb) * nfull;
    }
    typename T::Spots sp = spots.values;
    typename T::Corners xc = spots.xc, yc = spots.yc;

    // ---------------------------------------------------------------- plan: patch table, windows
    auto ptab = Kokkos::subview(ptab_all, pr, Kokkos::ALL);
    int nrow_max = 0, ncol_max = 0;
    {
      StageTimer<ExecSpace> st(space, "kspecter::extract::plan", times);
      for (int i = 0; i < P; ++i) {
        Patch const& pa = plan.patches[static_cast<std::size_t>(batch.patch_begin + i)];
        ptab_host(i, PF_FIB0) = pa.fiber_pad0 - batch.fiber_begin;
        ptab_host(i, PF_NFIB) = pa.nfiber_pad;
        ptab_host(i, PF_CORE) = pa.core_slot;
        ptab_host(i, PF_NCORE) = pa.ncore;
        ptab_host(i, PF_WAVE0) = pa.wave0;
        ptab_host(i, PF_NKEEP) = pa.nkeep;
        ptab_host(i, PF_OUT0) = pa.fiber_pad0 + pa.core_slot - plan.specmin;
        for (int f = PF_X0; f < NPT; ++f) ptab_host(i, f) = 0;
      }
      Kokkos::deep_copy(space, ptab_all, ptab_host);
      Kokkos::parallel_for("kspecter::extract::plan_windows", RangeI(space, 0, P),
                           PlanWindows<ExecSpace>{xc, yc, ptab_all, m, plan.wavepad, plan.nwavestep,
                                                  sny, snx, opt.pixpad_frac});
      Kokkos::deep_copy(space, ptab_host, ptab_all);
      space.fence();
      for (int i = 0; i < P; ++i) {
        nrow_max = std::max(nrow_max, ptab_host(i, PF_Y1) - ptab_host(i, PF_Y0));
        ncol_max = std::max(ncol_max, ptab_host(i, PF_PIXSTRIDE));
      }
      std::size_t const need_pix = std::size_t(nrow_max) * std::size_t(ncol_max);
      // Weights of the columns this batch's windows span (each column sanitized once).
      int bx0 = npx, bx1 = 0;
      for (int i = 0; i < P; ++i) {
        bx0 = std::min(bx0, std::max(ptab_host(i, PF_X0), 0));
        bx1 = std::max(bx1, std::min(ptab_host(i, PF_X1), npx));
      }
      auto sanitize = [&](int c0, int c1) {
        if (c1 > c0)
          Kokkos::parallel_for("kspecter::extract::sanitize_weights",
                               RangeL(space, 0, long(npy) * (c1 - c0)),
                               SanitizeWeights<ExecSpace>{image, ivar_in, weights, c0, c1 - c0});
      };
      for (int c = bx0; c < bx1;) {  // runs of columns not sanitized yet
        if (ready[std::size_t(c)]) {
          ++c;
          continue;
        }
        int e = c;
        while (e < bx1 && !ready[std::size_t(e)]) ready[std::size_t(e++)] = 1;
        sanitize(c, e);
        c = e;
      }
      if (pix_all.extent(0) < std::size_t(pmax) || pix_all.extent(1) < need_pix ||
          rr_all.extent(2) < std::size_t(nrow_max)) {
        meter.release(pix_bytes);
        pix_all = typename T::Vec();
        rr_all = typename T::Ranges();
        pix_all =
            allocate<typename T::Vec>(space, "kspecter::extract::chi2_pixels", pmax, need_pix);
        rr_all = allocate<typename T::Ranges>(space, "kspecter::extract::row_ranges", pmax, nslots,
                                              nrow_max, 2);
        pix_bytes = bytes_of(pix_all) + bytes_of(rr_all);
        meter.hold(pix_bytes);
      }
    }
    nrow_max = static_cast<int>(rr_all.extent(2));
    typename T::CTable cptab = ptab_all;

    typename T::Mat icov = Kokkos::subview(icov_all, pr, Kokkos::ALL, Kokkos::ALL);
    typename T::Vec rhs = Kokkos::subview(rhs_all, pr, Kokkos::ALL);
    typename T::Vec fw = Kokkos::subview(fw_all, pr, Kokkos::ALL);
    typename T::Vec1 minw = Kokkos::subview(minw_all, pr);
    Kokkos::View<int*, mem> info = Kokkos::subview(info_all, pr);
    typename T::Blocks cblk = Kokkos::subview(cblk_all, pr, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
    typename T::Mat qb = Kokkos::subview(
        q_all, std::make_pair(std::size_t(0), std::size_t(P) * ncs), Kokkos::ALL, Kokkos::ALL);

    // Debug patches of this batch (one, or all with debug_patch == -2).
    std::vector<int> dbgs;
    for (int i = 0; i < P; ++i)
      if (opt.debug_patch == -2 || opt.debug_patch == batch.patch_begin + i) dbgs.push_back(i);
    std::vector<PatchDebug> pds(dbgs.size());
    for (std::size_t d = 0; d < dbgs.size(); ++d) {
      int const i = dbgs[d];
      PatchDebug& pd = pds[d];
      pd.patch = plan.patches[static_cast<std::size_t>(batch.patch_begin + i)];
      pd.x0 = ptab_host(i, PF_X0);
      pd.x1 = ptab_host(i, PF_X1);
      pd.y0 = ptab_host(i, PF_Y0);
      pd.y1 = ptab_host(i, PF_Y1);
      pd.n = n;
      pd.nslots = nslots;
      pd.m = m;
    }
    auto grab = [&](auto const& dv, std::vector<double>& out) {
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dv);
      out.assign(h.data(), h.data() + h.span());
    };

    // ---------------------------------------------------------------- assembly + prior
    {
      StageTimer<ExecSpace> st(space, "kspecter::extract::assembly", times);
      // The kernels fill the lower triangle only: a debug patch's matrix is zeroed first, so
      // that every byte copied out below is defined.
      for (int i : dbgs)
        Kokkos::deep_copy(space, Kokkos::subview(icov, i, Kokkos::ALL, Kokkos::ALL), 0.0);
      long long macs = 0;
      Kokkos::parallel_reduce("kspecter::extract::assemble_icov",
                              Policy(space, P * nslots, T::team, T::vector),
                              AssembleICov<ExecSpace>{sp, xc, yc, cptab, weights, image, icov, rhs,
                                                      fw, nslots, m, sny, snx, npy, npx},
                              macs);
      Kokkos::parallel_for("kspecter::extract::prior", Policy(space, P, T::team * T::vector, 1),
                           ApplyPrior<ExecSpace>{cptab, icov, fw, minw, m, opt.regularize});
      space.fence();
      res.stats.assembly_macs += macs;
      for (std::size_t d = 0; d < dbgs.size(); ++d) {
        grab(Kokkos::subview(icov, dbgs[d], Kokkos::ALL, Kokkos::ALL), pds[d].icov);
        auto& c = pds[d].icov;  // the kernels fill the lower triangle only
        for (int i = 0; i < n; ++i)
          for (int j = i + 1; j < n; ++j) c[std::size_t(i) * n + j] = c[std::size_t(j) * n + i];
        grab(Kokkos::subview(rhs, dbgs[d], Kokkos::ALL), pds[d].y);
        grab(Kokkos::subview(fw, dbgs[d], Kokkos::ALL), pds[d].fluxweight);
      }
    }

    // ---------------------------------------------------------------- factorisation + solve
    {
      StageTimer<ExecSpace> st(space, "kspecter::extract::factorisation", times);
      solve::cholesky(space, icov, info);
      Kokkos::parallel_for("kspecter::extract::repair_failed", Policy(space, P, T::team, T::vector),
                           RepairFailed<ExecSpace>{icov, rhs, info, n});
      solve::cholesky_solve(space, icov, rhs);
      auto info_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
      for (int i = 0; i < P; ++i) res.stats.nfailed += info_h(i) != 0 ? 1 : 0;
      for (std::size_t d = 0; d < dbgs.size(); ++d) {
        pds[d].info = info_h(dbgs[d]);
        grab(Kokkos::subview(rhs, dbgs[d], Kokkos::ALL), pds[d].deconvolved);
      }
    }

    // ---------------------------------------------------------------- covariance blocks
    {
      StageTimer<ExecSpace> st(space, "kspecter::extract::covariance", times);
      solve::inverse_diagonal_blocks(space, icov, cblk);
    }

    // ---------------------------------------------------------------- decorrelation
    {
      StageTimer<ExecSpace> st(space, "kspecter::extract::decorrelation", times);
      Kokkos::parallel_for("kspecter::extract::gather_core_blocks",
                           Policy(space, P * ncs, T::team, T::vector),
                           GatherCoreBlocks<ExecSpace>{cptab, cblk, qb, ncs, m});
      solve::inverse_sqrt(space, qb, opt.eig_rel_clip);
      int const sbytes = Decorrelate<ExecSpace>::scratch_bytes(m);
      Kokkos::parallel_for(
          "kspecter::extract::decorrelate",
          Policy(space, P * ncs, T::team, T::vector).set_scratch_size(0, Kokkos::PerTeam(sbytes)),
          Decorrelate<ExecSpace>{cptab, qb, rhs, fw, minw, info, d_flux, d_ivar, d_deconv, d_rdiag,
                                 d_failed, ncs, m, plan.wavepad, ndiag, nspec});
      for (std::size_t d = 0; d < dbgs.size(); ++d)
        grab(Kokkos::subview(
                 qb, std::make_pair(std::size_t(dbgs[d]) * ncs, std::size_t(dbgs[d] + 1) * ncs),
                 Kokkos::ALL, Kokkos::ALL),
             pds[d].q);
    }

    // ---------------------------------------------------------------- quality
    {
      StageTimer<ExecSpace> st(space, "kspecter::extract::quality", times);
      Kokkos::parallel_for(
          "kspecter::extract::row_ranges", RangeI(space, 0, P * nslots),
          RowRanges<ExecSpace>{xc, yc, cptab, rr_all, xr_all, nslots, m, sny, snx, nrow_max});
      long long qm = 0, qm2 = 0;
      Kokkos::parallel_reduce(
          "kspecter::extract::model_chi2", Policy(space, P, T::team, T::vector),
          ModelChi2<ExecSpace>{sp, xc, yc, cptab, rr_all, xr_all, weights, image, rhs, pix_all,
                               nslots, m, sny, snx, npy, npx, nrow_max, psferr},
          qm);
      Kokkos::parallel_reduce(
          "kspecter::extract::chi2pix", Policy(space, P * ncs, T::team, T::vector),
          Chi2PixMask<ExecSpace>{sp, xc, yc, cptab, pix_all, info, d_chi2, d_pixmask, ncs, m,
                                 plan.wavepad, sny, snx, npy, npx, nspec, nrow_max},
          qm2);
      res.stats.quality_macs += qm + qm2;

      // The model of a bundle cut into slices waits for its last slice, when every patch of
      // its fibers has its solution.
      if (opt.model && batch.completes_bundles) {
        // Requested spectra of this batch: fibers [fa, fb) of the PSF.
        int const fa = std::max(batch.fiber_begin, plan.specmin);
        int const fb = std::min(batch.fiber_end, plan.specmin + nspec);
        int const nf = fb - fa;
        if (nf > 0) {
          auto frr = allocate<Kokkos::View<int***, Kokkos::LayoutRight, mem>>(
              space, "kspecter::extract::frame_row_ranges", nf, npy, 2);
          auto fxr = allocate<Kokkos::View<int**, Kokkos::LayoutRight, mem>>(
              space, "kspecter::extract::frame_x_ranges", nf, 2);
          meter.hold(bytes_of(frr) + bytes_of(fxr));
          Kokkos::parallel_for("kspecter::extract::frame_row_ranges", RangeI(space, 0, nf),
                               FrameRowRanges<ExecSpace>{yc, frr, fxr, xc, fa - batch.fiber_begin,
                                                         plan.wavepad, nwave, sny, snx, npy});
          auto fxr_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fxr);
          int bx0 = npx, bx1 = 0;
          for (int k = 0; k < nf; ++k) {
            bx0 = std::min(bx0, std::max(fxr_h(k, 0), 0));
            bx1 = std::max(bx1, std::min(fxr_h(k, 1), npx));
          }
          if (bx1 > bx0) {
            long const nbox = long(npy) * (bx1 - bx0);
            Kokkos::parallel_for(
                "kspecter::extract::frame_model", RangeL(space, 0, nbox),
                FrameModel<ExecSpace>{sp, xc, yc, frr, fxr, d_deconv, d_ivar, d_model,
                                      fa - batch.fiber_begin, nf, fa - plan.specmin, plan.wavepad,
                                      sny, snx, bx0, bx1 - bx0});
          }
          space.fence();
          meter.release(bytes_of(frr) + bytes_of(fxr));
        }
      }
    }
    for (auto& pd : pds) res.debug.push_back(std::move(pd));
    if (opt.on_batch_done) {
      space.fence();
      opt.on_batch_done(batch.completes_bundles ? batch.bundle_end : batch.bundle_begin,
                        static_cast<int>(plan.bundles.size()));
    }
  }

  // ------------------------------------------------------------------ stitch: to the host, units,
  // mask
  {
    StageTimer<ExecSpace> st(space, "kspecter::extract::stitch", times);
    // Straight into the result's storage: one device-to-host pass, no intermediate mirror.
    auto copy = [&](auto const& dv, std::vector<double>& out) {
      using Flat =
          Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
      using FlatDev = Kokkos::View<double const*, mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
      out.resize(dv.span());
      Kokkos::deep_copy(space, Flat(out.data(), out.size()), FlatDev(dv.data(), dv.span()));
      space.fence();
    };
    copy(d_flux, res.flux);
    copy(d_ivar, res.ivar);
    copy(d_deconv, res.deconvolved_flux);
    copy(d_chi2, res.chi2pix);
    copy(d_pixmask, res.pixmask_fraction);
    copy(d_rdiag, res.resolution);
    auto failed = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d_failed);
    if (opt.model) {
      copy(d_model, res.model);
      res.model_nx = npx;
      res.model_ny = npy;
    }
    // Electrons per bin -> electrons per Angstrom (np.gradient of a uniform grid is dw).
    double const dw = plan.dw;
    for (auto& v : res.flux) v /= dw;
    for (auto& v : res.deconvolved_flux) v /= dw;
    for (auto& v : res.ivar) v *= dw * dw;

    std::size_t const nb = std::size_t(nspec) * std::size_t(nwave);
    // Frames are float32: a bin whose numbers do not fit there (pixels near the float limit)
    // is unusable and is flagged like a failed patch (ivar = 0, BAD2DFIT, identity
    // resolution), never written as Inf. chi2pix is capped; the model image too.
    std::vector<char> overflow(nb, 0);
    {
      auto fits = [](double v) { return std::isfinite(v) && std::fabs(v) <= double(FLT_MAX); };
      int const nd = 2 * ndiag + 1;
      auto rd = [&](int s, int k, int w) -> double& {
        return res.resolution[(std::size_t(s) * nd + std::size_t(k)) * nwave + std::size_t(w)];
      };
      for (int s = 0; s < nspec; ++s)
        for (int w = 0; w < nwave; ++w) {
          std::size_t const i = std::size_t(s) * nwave + std::size_t(w);
          bool ok = fits(res.flux[i]) && fits(res.ivar[i]) && fits(res.deconvolved_flux[i]);
          for (int k = 0; k < nd; ++k) ok = ok && fits(rd(s, k, w));
          if (!ok) {
            overflow[i] = 1;
            res.flux[i] = res.ivar[i] = res.deconvolved_flux[i] = 0;
            for (int k = 0; k < nd; ++k) rd(s, k, w) = k == ndiag ? 1.0 : 0.0;
          }
          if (!(res.chi2pix[i] <= double(FLT_MAX))) res.chi2pix[i] = double(FLT_MAX);
        }
      for (auto& v : res.model)
        if (!fits(v)) v = std::isnan(v) ? 0.0 : std::copysign(double(FLT_MAX), v);
    }
    res.mask.assign(nb, 0u);
    std::vector<double> med_fiber, med_wave;
    if (opt.bad2dfit_median_factor > 0) {
      med_fiber.resize(std::size_t(nspec));
      med_wave.resize(std::size_t(nwave));
      std::vector<double> tmp;
      for (int s = 0; s < nspec; ++s) {
        tmp.assign(res.chi2pix.begin() + long(s) * nwave,
                   res.chi2pix.begin() + long(s + 1) * nwave);
        med_fiber[std::size_t(s)] = median_of(tmp);
      }
      for (int w = 0; w < nwave; ++w) {
        tmp.clear();
        for (int s = 0; s < nspec; ++s)
          tmp.push_back(res.chi2pix[std::size_t(s) * nwave + std::size_t(w)]);
        med_wave[std::size_t(w)] = median_of(tmp);
      }
    }
    for (int s = 0; s < nspec; ++s) {
      for (int w = 0; w < nwave; ++w) {
        std::size_t const i = std::size_t(s) * nwave + std::size_t(w);
        std::uint32_t mk = 0;
        double const pm = res.pixmask_fraction[i], c2 = res.chi2pix[i];
        if (res.ivar[i] == 0) mk |= specmask::SOMEBADPIX;
        if (pm > 0.5) mk |= specmask::SOMEBADPIX;
        if (pm >= 1.0 - 1e-12) mk |= specmask::ALLBADPIX;
        if (opt.bad2dfit_chi2 > 0 && c2 > opt.bad2dfit_chi2) mk |= specmask::BAD2DFIT;
        if (opt.bad2dfit_median_factor > 0 &&
            c2 > opt.bad2dfit_median_factor * med_fiber[std::size_t(s)] &&
            c2 > opt.bad2dfit_median_factor * med_wave[std::size_t(w)])
          mk |= specmask::BAD2DFIT;
        if (failed(s, w) || overflow[i]) mk |= specmask::BAD2DFIT;
        res.mask[i] = mk;
      }
    }
  }
  meter.hold(0);
  res.stats.peak_device_bytes = meter.peak;
  return res;
}

}  // namespace kspecter::extract::detail

namespace kspecter::extract {

// When the device runs out of memory (the budget is an estimate, and other processes may hold
// part of the device), the extraction starts again with batches half as big, down to one
// patch per batch; every View of the failed try is freed by then. Batching changes no
// number, so the frame is the one a smaller budget would have given.
template <class ExecSpace>
FrameResult extract_frame(ExecSpace const& space,
                          SpotProvider<typename ExecSpace::memory_space> const& spots,
                          SpotGeometry const& geometry,
                          ImageView<typename ExecSpace::memory_space> image,
                          ImageView<typename ExecSpace::memory_space> ivar,
                          ExtractOptions const& opt, StageTimes* times) {
  ExtractOptions o = opt;
  for (;;) {
    try {
      return detail::extract_frame_impl(space, spots, geometry, image, ivar, o, times);
    } catch (std::exception const& e) {
      if (!detail::is_out_of_memory(e)) throw;
      auto const budget = detail::smaller_budget(o, geometry);
      if (!budget) throw detail::out_of_memory_error(e, opt.memory_budget, o.memory_budget);
      o.memory_budget = *budget;
    }
  }
}

}  // namespace kspecter::extract
