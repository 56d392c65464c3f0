// numpy.sum of doubles along a contiguous axis, for the frame scores that follow desispec.
#pragma once

#include <cstddef>

namespace kspecter::extract::detail {

/// numpy's pairwise summation of a[0..n) (its add.reduce over a contiguous axis): below 8
/// values a plain sum; up to 128, eight running sums combined as ((0+1)+(2+3))+((4+5)+(6+7))
/// and then the remainder; above, the two halves (the first a multiple of 8) summed apart.
/// desispec's SCORES come from numpy.sum, so the same order gives the same bits.
inline double numpy_sum(double const* a, std::size_t n) {
  if (n < 8) {
    double s = 0.;
    for (std::size_t i = 0; i < n; ++i) s += a[i];
    return s;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    std::size_t i = 8;
    for (; i < n - n % 8; i += 8)
      for (int j = 0; j < 8; ++j) r[j] += a[i + std::size_t(j)];
    double s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) s += a[i];
    return s;
  }
  std::size_t n2 = n / 2;
  n2 -= n2 % 8;
  return numpy_sum(a, n2) + numpy_sum(a + n2, n - n2);
}

}  // namespace kspecter::extract::detail
