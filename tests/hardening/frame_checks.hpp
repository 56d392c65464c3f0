// What the hardening tests assert about the files kspecter leaves behind: frames without a
// single NaN or Inf, the data HDUs of two frames bit for bit, a file unchanged byte for byte,
// and the temporary files of interrupted writes.
#pragma once

#include <kspecter/extract/mask_bits.hpp>
#include <kspecter/io/frame_file.hpp>

#include <test_data.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace kspecter::test {

template <class T>
bool same_bits(std::vector<T> const& a, std::vector<T> const& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

/// The data of FLUX, IVAR, MASK, RESOLUTION, WAVELENGTH and CHI2PIX are bitwise identical
/// (headers, which hold dates and checksums, are not compared).
inline ::testing::AssertionResult same_frame_data(io::FrameData const& a, io::FrameData const& b) {
  auto fail = [](char const* what) { return ::testing::AssertionFailure() << what << " differs"; };
  if (a.nspec != b.nspec || a.nwave != b.nwave || a.ndiag != b.ndiag || a.specmin != b.specmin)
    return fail("shape");
  if (!same_bits(a.flux, b.flux)) return fail("FLUX");
  if (!same_bits(a.ivar, b.ivar)) return fail("IVAR");
  if (!same_bits(a.mask, b.mask)) return fail("MASK");
  if (!same_bits(a.resolution, b.resolution)) return fail("RESOLUTION");
  if (!same_bits(a.wavelength, b.wavelength)) return fail("WAVELENGTH");
  if (!same_bits(a.chi2pix, b.chi2pix)) return fail("CHI2PIX");
  return ::testing::AssertionSuccess();
}

/// Every value of FLUX, IVAR, RESOLUTION and CHI2PIX is finite, IVAR >= 0, and a bin with
/// IVAR = 0 carries a mask bit.
inline ::testing::AssertionResult clean_frame(io::FrameData const& fr) {
  std::size_t const n = std::size_t(fr.nspec) * fr.nwave;
  if (n == 0 || fr.flux.size() != n || fr.ivar.size() != n || fr.mask.size() != n)
    return ::testing::AssertionFailure() << "frame of " << fr.nspec << " x " << fr.nwave << " has "
                                         << fr.flux.size() << " FLUX values";
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(fr.flux[i]) || !std::isfinite(fr.ivar[i]) || !std::isfinite(fr.chi2pix[i]))
      return ::testing::AssertionFailure() << "bin " << i << ": flux " << fr.flux[i] << ", ivar "
                                           << fr.ivar[i] << ", chi2pix " << fr.chi2pix[i];
    if (fr.ivar[i] < 0) return ::testing::AssertionFailure() << "bin " << i << ": ivar < 0";
    if (fr.ivar[i] == 0 && fr.mask[i] == 0)
      return ::testing::AssertionFailure() << "bin " << i << ": ivar = 0 without a mask bit";
  }
  for (std::size_t i = 0; i < fr.resolution.size(); ++i)
    if (!std::isfinite(fr.resolution[i]))
      return ::testing::AssertionFailure()
             << "RESOLUTION value " << i << " is " << fr.resolution[i];
  return ::testing::AssertionSuccess();
}

}  // namespace kspecter::test
