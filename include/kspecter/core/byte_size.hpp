// Byte counts as people read them in messages ("6.02 MiB", "4 GiB").
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace kspecter {

inline std::string byte_size(std::size_t bytes) {
  char const* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  char b[48];
  std::snprintf(b, sizeof b, "%.4g %s", v, units[u]);
  return b;
}

}  // namespace kspecter
