// The frame simulator: spectra -> spots -> expected image -> noise -> defects, as a
// preprocessed CCD image (what `kspecter simulate` writes).
//
// Reproducibility: the same inputs and seed give the same bits on every thread count,
// because each stage is per-pixel independent (noise) or sums each pixel in one fixed order
// (projection, project.hpp). Across backends, a GPU's erf/exp/log and its fused
// multiply-adds round differently from the host's, so the simulator is run on
// Kokkos::DefaultHostExecutionSpace (simulate_on_host; spots included) even in a GPU build,
// from a translation unit compiled without floating-point contraction: a file is then
// bitwise identical whether kspecter was built for CPU or GPU. (A full frame takes a few
// seconds on two cores, so nothing is lost.)
#pragma once

#include <kspecter/core/error.hpp>
#include <kspecter/core/profiling.hpp>
#include <kspecter/psf/device_psf.hpp>
#include <kspecter/psf/gauss_hermite_psf.hpp>
#include <kspecter/psf/spots.hpp>
#include <kspecter/sim/defects.hpp>
#include <kspecter/sim/noise.hpp>
#include <kspecter/sim/project.hpp>
#include <kspecter/sim/spectra.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace kspecter::sim {

struct SimulateOptions {
  std::uint64_t seed = 0;
  double readnoise = 3.0;
  bool noiseless = false;
  bool defects = false;
  DefectOptions defect;
  /// Spots are made and projected this many fibers at a time (memory: 25 fibers of an r
  /// frame take 87 MB). Does not change the result.
  int fibers_per_block = 25;
  /// Keep the expected (noiseless, double) image in the result.
  bool keep_expected = false;
};

struct SimulatedImage {
  int nx = 0, ny = 0;
  std::vector<float> image;      // [ny][nx] electrons
  std::vector<float> ivar;       // [ny][nx]
  std::vector<int> mask;         // [ny][nx], desispec ccdmask bits
  std::vector<double> expected;  // [ny][nx] when keep_expected
  DefectSummary defects;
};

/// Fills `electrons` [nspec][nwave] with flux * bin width (host arrays in, view out).
template <class MemorySpace>
Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace> electrons_per_bin(Spectra const& s) {
  Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace> e(
      Kokkos::view_alloc(std::string("kspecter::sim::electrons"), Kokkos::WithoutInitializing),
      s.nspec, s.nwave());
  auto h = Kokkos::create_mirror_view(e);
  std::vector<double> const dw = bin_widths(s.wavelength);
  for (int f = 0; f < s.nspec; ++f)
    for (int w = 0; w < s.nwave(); ++w) h(f, w) = s.flux[std::size_t(f) * s.nwave() + w] * dw[w];
  Kokkos::deep_copy(e, h);
  return e;
}

/// The expected electrons per pixel [npix_y][npix_x] of the PSF's CCD: spots of fibers
/// spectra.specmin .. +nspec at the spectra's wavelengths, weighted by flux * bin width.
/// Throws ParameterError when the fibers or wavelengths are outside the PSF.
template <class ExecSpace>
Kokkos::View<double**, Kokkos::LayoutRight, typename ExecSpace::memory_space> expected_image(
    ExecSpace const& space, psf::GaussHermitePsf const& host_psf,
    psf::DevicePsf<typename ExecSpace::memory_space> const& dpsf, Spectra const& spectra,
    int fibers_per_block = 25, StageTimes* times = nullptr) {
  using mem = typename ExecSpace::memory_space;
  if (spectra.nspec <= 0 || spectra.nwave() <= 0)
    throw ParameterError("simulate: no spectra to project");
  if (spectra.flux.size() != std::size_t(spectra.nspec) * spectra.nwave())
    throw ParameterError("simulate: flux has " + std::to_string(spectra.flux.size()) +
                         " values, expected nspec x nwave = " +
                         std::to_string(std::size_t(spectra.nspec) * spectra.nwave()));
  if (spectra.specmin < 0 || spectra.specmin + spectra.nspec > host_psf.nfiber)
    throw ParameterError("simulate: fibers [" + std::to_string(spectra.specmin) + ", " +
                         std::to_string(spectra.specmin + spectra.nspec) +
                         ") are outside the PSF's " + std::to_string(host_psf.nfiber) + " fibers");
  if (host_psf.npix_x <= 0 || host_psf.npix_y <= 0)
    throw ParameterError("simulate: the PSF has no CCD size (NPIX_X, NPIX_Y)");
  if (fibers_per_block <= 0) fibers_per_block = 25;

  Kokkos::View<double**, Kokkos::LayoutRight, mem> image("kspecter::sim::expected", host_psf.npix_y,
                                                         host_psf.npix_x);
  Kokkos::View<double*, mem> wave(
      Kokkos::view_alloc(std::string("kspecter::sim::wavelength"), Kokkos::WithoutInitializing),
      spectra.nwave());
  {
    auto h = Kokkos::create_mirror_view(wave);
    for (int w = 0; w < spectra.nwave(); ++w) h(w) = spectra.wavelength[w];
    Kokkos::deep_copy(space, wave, h);
    space.fence();
  }
  auto const electrons = electrons_per_bin<mem>(spectra);
  psf::Spots<mem> spots;
  for (int f0 = 0; f0 < spectra.nspec; f0 += fibers_per_block) {
    int const nf = std::min(fibers_per_block, spectra.nspec - f0);
    {
      StageTimer<ExecSpace> t(space, "kspecter::sim::spots", times);
      psf::compute_spots(space, host_psf, dpsf, spectra.specmin + f0, nf,
                         Kokkos::View<double const*, mem>(wave), spots, false);
    }
    {
      StageTimer<ExecSpace> t(space, "kspecter::sim::project", times);
      auto const e = Kokkos::subview(electrons, Kokkos::make_pair(f0, f0 + nf), Kokkos::ALL);
      project_spots(space, spots, Kokkos::View<double const**, Kokkos::LayoutRight, mem>(e), image);
    }
  }
  return image;
}

/// The whole simulation on `space`: expected image, noise, defects (host), copied back to
/// host arrays. Stage times go to `times` when given (kspecter::sim::spots, ::project,
/// ::noise, ::defects).
template <class ExecSpace>
SimulatedImage simulate(ExecSpace const& space, psf::GaussHermitePsf const& host_psf,
                        Spectra const& spectra, SimulateOptions const& opt,
                        StageTimes* times = nullptr) {
  using mem = typename ExecSpace::memory_space;
  ScopedRegion region("kspecter::sim::simulate");
  psf::DevicePsf<mem> dpsf;
  {
    StageTimer<ExecSpace> t(space, "kspecter::sim::spots", times);
    dpsf = psf::to_device(space, host_psf);
  }
  auto const expected = expected_image(space, host_psf, dpsf, spectra, opt.fibers_per_block, times);
  int const ny = int(expected.extent(0)), nx = int(expected.extent(1));

  SimulatedImage out;
  out.nx = nx;
  out.ny = ny;
  std::size_t const n = std::size_t(nx) * ny;
  out.image.resize(n);
  out.ivar.resize(n);
  out.mask.assign(n, 0);
  {
    StageTimer<ExecSpace> t(space, "kspecter::sim::noise", times);
    using V2f = Kokkos::View<float**, Kokkos::LayoutRight, mem>;
    V2f image(Kokkos::view_alloc(std::string("kspecter::sim::image"), Kokkos::WithoutInitializing),
              ny, nx);
    V2f ivar(Kokkos::view_alloc(std::string("kspecter::sim::ivar"), Kokkos::WithoutInitializing),
             ny, nx);
    NoiseOptions no;
    no.seed = opt.seed;
    no.readnoise = opt.readnoise;
    no.noiseless = opt.noiseless;
    add_noise(space, Kokkos::View<double const**, Kokkos::LayoutRight, mem>(expected), image, ivar,
              no);
    using HostF = Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    Kokkos::deep_copy(space, HostF(out.image.data(), ny, nx), image);
    Kokkos::deep_copy(space, HostF(out.ivar.data(), ny, nx), ivar);
    if (opt.keep_expected) {
      out.expected.resize(n);
      using HostD = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
      Kokkos::deep_copy(space, HostD(out.expected.data(), ny, nx), expected);
    }
    space.fence();
  }
  if (opt.defects) {
    StageTimer<Kokkos::DefaultHostExecutionSpace> t(Kokkos::DefaultHostExecutionSpace(),
                                                    "kspecter::sim::defects", times);
    out.defects = add_defects(opt.seed, nx, ny, out.image.data(), out.ivar.data(), out.mask.data(),
                              opt.defect);
  }
  return out;
}

/// simulate() on Kokkos::DefaultHostExecutionSpace, compiled in the library without
/// floating-point contraction: the entry point whose output is the same bits in every
/// build (see the top of this file). This is what `kspecter simulate` calls.
SimulatedImage simulate_on_host(psf::GaussHermitePsf const& psf, Spectra const& spectra,
                                SimulateOptions const& options, StageTimes* times = nullptr);

}  // namespace kspecter::sim
