// desispec's spectral pixel mask bits (desispec.maskbits.specmask), as written in a frame's
// MASK HDU.
#pragma once

#include <cstdint>

namespace kspecter::extract::specmask {

inline constexpr std::uint32_t SOMEBADPIX = 1u << 0;    // some input pixels masked or ivar = 0
inline constexpr std::uint32_t ALLBADPIX = 1u << 1;     // all input pixels masked or ivar = 0
inline constexpr std::uint32_t COSMIC = 1u << 2;        // input pixels included a masked cosmic
inline constexpr std::uint32_t LOWFLAT = 1u << 3;       // fiber flat < 0.5
inline constexpr std::uint32_t BADFIBERFLAT = 1u << 4;  // bad fiber flat solution
inline constexpr std::uint32_t BRIGHTSKY = 1u << 5;     // bright sky level
inline constexpr std::uint32_t BADSKY = 1u << 6;        // bad sky model
inline constexpr std::uint32_t BAD2DFIT = 1u << 7;      // bad fit of the 2D model to the pixels
inline constexpr std::uint32_t NODATA = 1u << 8;        // no data exists
inline constexpr std::uint32_t BADFIBER = 1u << 9;      // fibermask has a non-zero bit

}  // namespace kspecter::extract::specmask
