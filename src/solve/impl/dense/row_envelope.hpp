// The row envelope of a lower-triangular matrix, which the Cholesky and the triangular inverse
// exploit: rows of extraction's iCov start far right of column 0 (fibers more than two apart
// do not couple), and L and L⁻¹ keep those zeros.
#pragma once

#include <Kokkos_Core.hpp>

namespace kspecter::solve::detail {

/// f[r] = the first column j <= r with a[r][j] != 0 (r if none): the row envelope.
template <class Member>
KOKKOS_INLINE_FUNCTION void team_row_envelope(Member const& team, double const* a, int n, int* f) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](int r) {
    double const* ar = a + r * n;
    int j = 0;
    while (j < r && ar[j] == 0.0) ++j;
    f[r] = j;
  });
  team.team_barrier();
}

/// min f[r0 .. r0 + rows), the same on every thread.
KOKKOS_INLINE_FUNCTION int envelope_min(int const* f, int r0, int rows) {
  int m = f[r0];
  for (int r = r0 + 1; r < r0 + rows; ++r) m = f[r] < m ? f[r] : m;
  return m;
}

}  // namespace kspecter::solve::detail
