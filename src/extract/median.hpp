// numpy.median of a handful of values, for the frame-level quality rules that follow desispec.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace kspecter::extract::detail {

/// numpy.median: the middle value, or the mean of the two middle values of an even count;
/// NaN for no value or when any value is NaN. Reorders `v`.
inline double numpy_median(std::vector<double>& v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  for (double x : v)
    if (std::isnan(x)) return x;
  std::size_t const mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + long(mid), v.end());
  double const hi = v[mid];
  if (v.size() % 2 == 1) return hi;
  double const lo = *std::max_element(v.begin(), v.begin() + long(mid));
  return (lo + hi) / 2;
}

}  // namespace kspecter::extract::detail
