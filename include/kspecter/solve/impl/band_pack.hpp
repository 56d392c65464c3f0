// Dense fiber-major matrices to wavelength-major band storage (declared in band.hpp).
#pragma once

#include <Kokkos_Core.hpp>
#include <kspecter/core/error.hpp>
#include <kspecter/core/profiling.hpp>
#include <kspecter/solve/impl/band.hpp>
#include <string>

namespace kspecter::solve {

namespace detail {

// Unknown v = bin * nslots + slot of the band order is u = slot * m + bin of the dense one.
// A team per matrix: a row of the band per thread, its entries along the vector lanes; the
// entries beyond the band are counted from the dense row's lower part.
template <class Tune, class ExecSpace>
void pack_band_impl(ExecSpace const& space, MatrixBatch<typename ExecSpace::memory_space> dense,
                    int nslots, BandBatch<typename ExecSpace::memory_space> ab,
                    Kokkos::View<int*, typename ExecSpace::memory_space> outside) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  ScopedRegion region("kspecter::solve::pack_band");
  int const nmat = int(dense.extent(0));
  int const n = int(dense.extent(1));
  int const w = int(ab.extent(2));
  if (int(dense.extent(2)) != n || int(ab.extent(0)) < nmat || int(ab.extent(1)) != n ||
      int(outside.extent(0)) < nmat || nslots < 1 || n % nslots != 0)
    throw ParameterError("solve::pack_band_wavelength_major: shapes do not match (n = " +
                         std::to_string(n) + ", nslots = " + std::to_string(nslots) + ")");
  if (nmat == 0 || n == 0) return;
  int const b = w - 1, m = n / nslots;
  auto kernel = KOKKOS_LAMBDA(Member const& team) {
    int const p = team.league_rank();
    auto u = [&](int v) { return (v % nslots) * m + v / nslots; };
    int lost = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, n),
        [&](int v, int& cnt) {
          int const uv = u(v);
          for (int c = 0; c < w; ++c) {
            int const col = v - b + c;
            double x = 0.0;
            if (col >= 0) {
              int const uc = u(col);
              x = uv >= uc ? dense(p, uv, uc) : dense(p, uc, uv);
            }
            ab(p, v, c) = x;
          }
          for (int col = 0; col < v - b; ++col) {
            int const uc = u(col);
            double const x = uv >= uc ? dense(p, uv, uc) : dense(p, uc, uv);
            cnt += x != 0.0 ? 1 : 0;
          }
        },
        lost);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { outside(p) = lost; });
  };
  int const most = Policy(space, nmat, 1).team_size_max(kernel, Kokkos::ParallelForTag());
  Policy const policy(space, nmat, Tune::coalesce ? (most < 128 ? most : 128) : 1);
  Kokkos::parallel_for("kspecter::solve::pack_band", policy, kernel);
}

}  // namespace detail

template <class ExecSpace>
void pack_band_wavelength_major(ExecSpace const& space,
                                MatrixBatch<typename ExecSpace::memory_space> dense, int nslots,
                                BandBatch<typename ExecSpace::memory_space> ab,
                                Kokkos::View<int*, typename ExecSpace::memory_space> outside) {
  detail::pack_band_impl<BandTuning<ExecSpace>>(space, dense, nslots, ab, outside);
}

}  // namespace kspecter::solve
