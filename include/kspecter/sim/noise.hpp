// Detector noise for simulated images: Poisson photon noise plus Gaussian read noise, drawn
// per pixel from the counter-based generator, and the inverse variance the extraction uses.
#pragma once

#include <kspecter/core/error.hpp>
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/core/profiling.hpp>
#include <kspecter/sim/random.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>

namespace kspecter::sim {

struct NoiseOptions {
  std::uint64_t seed = 0;
  double readnoise = 3.0;  // electrons rms per pixel, >= 0
  bool noiseless = false;  // image = expected exactly (rounded to float)
};

/// From the expected electrons per pixel (double [ny][nx]) makes the pixel values and their
/// inverse variance (float [ny][nx]):
///   image = Poisson(max(expected, 0)) + readnoise * N(0, 1)   (or expected when noiseless)
///   ivar  = 1 / (max(expected, 0) + readnoise^2)              (0 where that variance is 0)
/// The variance comes from the expected (noiseless) image, as specter's `specter` simulator
/// and gpu_specter's extraction tests do, not from the noisy pixel: a variance estimated
/// from the data correlates with the noise and biases an inverse-variance-weighted fit low.
/// Pixel p = y * nx + x draws its Poisson variate from stream::poisson and its read noise
/// from stream::read_noise at index p, so each value depends only on (seed, p, expected):
/// the same on any thread count. (Transcendental functions differ between host and GPU
/// math libraries, so the simulator runs this on the host; see simulate.hpp.)
template <class ExecSpace>
void add_noise(
    ExecSpace const& space,
    Kokkos::View<double const**, Kokkos::LayoutRight, typename ExecSpace::memory_space> expected,
    Kokkos::View<float**, Kokkos::LayoutRight, typename ExecSpace::memory_space> image,
    Kokkos::View<float**, Kokkos::LayoutRight, typename ExecSpace::memory_space> ivar,
    NoiseOptions const& opt) {
  ScopedRegion region("kspecter::sim::add_noise");
  if (!(opt.readnoise >= 0.0) || !std::isfinite(opt.readnoise))
    throw ParameterError("readnoise must be finite and >= 0, got " + std::to_string(opt.readnoise));
  int const ny = static_cast<int>(expected.extent(0));
  int const nx = static_cast<int>(expected.extent(1));
  if (int(image.extent(0)) != ny || int(image.extent(1)) != nx || int(ivar.extent(0)) != ny ||
      int(ivar.extent(1)) != nx)
    throw ParameterError("add_noise: image, ivar and expected differ in shape");
  double const rn = opt.readnoise, rn2 = rn * rn;
  std::uint64_t const seed = opt.seed;
  bool const noiseless = opt.noiseless;
  Kokkos::parallel_for(
      "kspecter::sim::noise",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0,
                                                                      std::int64_t(ny) * nx),
      KOKKOS_LAMBDA(std::int64_t const p) {
        int const y = static_cast<int>(p / nx), x = static_cast<int>(p % nx);
        double const e = expected(y, x);
        double const mean = e > 0.0 ? e : 0.0;  // also maps NaN to 0
        double const var = mean + rn2;
        ivar(y, x) = var > 0.0 ? static_cast<float>(1.0 / var) : 0.0f;
        if (noiseless) {
          image(y, x) = static_cast<float>(e);
          return;
        }
        CounterRng photons(seed, stream::poisson, static_cast<std::uint64_t>(p));
        double value = photons.poisson(mean);
        if (rn > 0.0) {
          CounterRng read(seed, stream::read_noise, static_cast<std::uint64_t>(p));
          value += rn * read.normal();
        }
        image(y, x) = static_cast<float>(value);
      });
}

}  // namespace kspecter::sim
