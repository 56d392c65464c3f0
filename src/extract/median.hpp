// numpy.median of a handful of values, for the frame-level quality rules that follow desispec.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace kspecter::extract::detail {

/// numpy.median of [first, last): the middle value, or the mean of the two middle values of
/// an even count; NaN for no value or when any value is NaN. Reorders the range.
inline double numpy_median(double* first, double* last) {
  if (first == last) return std::numeric_limits<double>::quiet_NaN();
  for (double const* p = first; p != last; ++p)
    if (std::isnan(*p)) return *p;
  std::size_t const n = static_cast<std::size_t>(last - first), mid = n / 2;
  std::nth_element(first, first + mid, last);
  double const hi = first[mid];
  if (n % 2 == 1) return hi;
  double const lo = *std::max_element(first, first + mid);
  return (lo + hi) / 2;
}

/// The same over a vector (reordered).
inline double numpy_median(std::vector<double>& v) {
  return numpy_median(v.data(), v.data() + v.size());
}

}  // namespace kspecter::extract::detail
