// The envelope of a band matrix's rows, which the band Cholesky kernels skip.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <kspecter/core/kokkos_compat.hpp>

namespace kspecter::solve::detail {

/// Absolute first nonzero column of each row of a band matrix (i if none): its envelope.
template <class Member>
KOKKOS_INLINE_FUNCTION void team_band_envelope(Member const& team, double const* ab, int n, int w,
                                               int* first) {
  int const b = w - 1;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](int i) {
    double const* row = ab + std::size_t(i) * w;
    int c = compat::imax(0, b - i);
    while (c < b && row[c] == 0.0) ++c;
    first[i] = i - b + c;
  });
  team.team_barrier();
}

}  // namespace kspecter::solve::detail
