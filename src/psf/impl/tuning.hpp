// Launch shapes of the psf room's spot kernel (spot_kernel.hpp), by driver: the host driver
// (a team of one thread per block of wavelengths, which its loops vectorise) and the team
// driver of GPUs (a thread of vector lanes per wavelength of the block). SpotOptions may
// override each (psf/spots.hpp); these are the defaults. The room's one tuning home.
#pragma once

namespace kspecter::psf::detail {

template <bool HostLoops>
struct SpotTuning {
  static constexpr int waves_per_team = 32;  // wavelengths a team, in turn
  static constexpr int vector_length = 1;
};

template <>
struct SpotTuning<false> {
  // A team's block of wavelengths is capped by the team scratch it needs (compute_spots).
  static constexpr int waves_per_team = 8;
  static constexpr int vector_length = 32;  // a warp per wavelength
};

}  // namespace kspecter::psf::detail
