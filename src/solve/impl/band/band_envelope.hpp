// Steps the band Cholesky kernels share: the envelope of the rows, which they skip, and the
// identity a failed factorisation leaves.
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

/// A factorisation that failed at pivot fail - 1 (fail > 0) leaves L = I, so that the solves
/// after it run on harmless numbers; `info` = fail either way.
template <class Member>
KOKKOS_INLINE_FUNCTION void team_band_failed(Member const& team, double* ab, int n, int w, int fail,
                                             int& info) {
  if (fail != 0) {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n * w),
                         [&](int e) { ab[e] = (e % w == w - 1) ? 1.0 : 0.0; });
  }
  Kokkos::single(Kokkos::PerTeam(team), [&]() { info = fail; });
}

}  // namespace kspecter::solve::detail
