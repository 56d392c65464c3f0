// Integer min and max for device code (std::min is not a device function on every backend).
#pragma once

#include <Kokkos_Core.hpp>

namespace kspecter::detail {

KOKKOS_INLINE_FUNCTION int imin(int a, int b) { return a < b ? a : b; }
KOKKOS_INLINE_FUNCTION int imax(int a, int b) { return a > b ? a : b; }

}  // namespace kspecter::detail
