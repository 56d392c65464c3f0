// Dense fiber-major matrices to wavelength-major band storage (declared in band.hpp).
#pragma once

#include <Kokkos_Core.hpp>
#include <kspecter/core/error.hpp>
#include <kspecter/core/profiling.hpp>
#include <kspecter/solve/band.hpp>
#include <string>
#include "../tuning.hpp"

namespace kspecter::solve {

namespace detail {

// Unknown v = bin * nslots + slot of the band order is u = slot * m + bin of the dense one.
KOKKOS_INLINE_FUNCTION int fiber_major(int v, int nslots, int m) {
  return (v % nslots) * m + v / nslots;
}

inline void check_pack_shapes(int n, int nslots, char const* who) {
  if (nslots < 1 || n % nslots != 0)
    throw ParameterError(std::string(who) + ": " + std::to_string(n) + " unknowns are not " +
                         std::to_string(nslots) + " fiber slots of equal length");
}

// A team per matrix, a dense row per thread: the largest |v(u) - v(j)| over its nonzeros.
template <class Tune, class ExecSpace>
void band_half_width_impl(ExecSpace const& space,
                          MatrixBatch<typename ExecSpace::memory_space> dense, int nslots,
                          Kokkos::View<int*, typename ExecSpace::memory_space> hw) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  ScopedRegion region("kspecter::solve::band_half_width");
  int const nmat = int(dense.extent(0));
  int const n = int(dense.extent(1));
  check_pack_shapes(n, nslots, "solve::band_half_width_wavelength_major");
  if (int(dense.extent(2)) != n || int(hw.extent(0)) < nmat)
    throw ParameterError("solve::band_half_width_wavelength_major: shapes do not match");
  if (nmat == 0 || n == 0) return;
  int const m = n / nslots;
  auto kernel = KOKKOS_LAMBDA(Member const& team) {
    int const p = team.league_rank();
    int width = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, n),
        [&](int u, int& mx) {
          int const vu = (u % m) * nslots + u / m;
          double const* row = &dense(p, u, 0);
          for (int j = 0; j <= u; ++j) {
            if (row[j] == 0.0) continue;
            int const d = vu - ((j % m) * nslots + j / m);
            int const ad = d < 0 ? -d : d;
            if (ad > mx) mx = ad;
          }
        },
        Kokkos::Max<int>(width));
    Kokkos::single(Kokkos::PerTeam(team), [&]() { hw(p) = width; });
  };
  int const most = Policy(space, nmat, 1).team_size_max(kernel, Kokkos::ParallelForTag());
  Policy const policy(space, nmat, Tune::coalesce ? (most < 128 ? most : 128) : 1);
  Kokkos::parallel_for("kspecter::solve::band_half_width", policy, kernel);
}

// A team per matrix: a row of the band per thread, read from the dense lower triangle.
template <class Tune, class ExecSpace>
void pack_band_impl(ExecSpace const& space, MatrixBatch<typename ExecSpace::memory_space> dense,
                    int nslots, BandBatch<typename ExecSpace::memory_space> ab) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  ScopedRegion region("kspecter::solve::pack_band");
  int const nmat = int(dense.extent(0));
  int const n = int(dense.extent(1));
  int const w = int(ab.extent(2));
  check_pack_shapes(n, nslots, "solve::pack_band_wavelength_major");
  if (int(dense.extent(2)) != n || int(ab.extent(0)) < nmat || int(ab.extent(1)) != n)
    throw ParameterError(
        "solve::pack_band_wavelength_major: shapes do not match (n = " + std::to_string(n) + ")");
  if (nmat == 0 || n == 0) return;
  int const b = w - 1, m = n / nslots;
  auto kernel = KOKKOS_LAMBDA(Member const& team) {
    int const p = team.league_rank();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n * w), [&](int e) {
      int const v = e / w, c = e - v * w, col = v - b + c;
      double x = 0.0;
      if (col >= 0) {
        int const uv = fiber_major(v, nslots, m), uc = fiber_major(col, nslots, m);
        x = uv >= uc ? dense(p, uv, uc) : dense(p, uc, uv);
      }
      ab(p, v, c) = x;
    });
  };
  int const most = Policy(space, nmat, 1).team_size_max(kernel, Kokkos::ParallelForTag());
  Policy const policy(space, nmat, Tune::coalesce ? (most < 128 ? most : 128) : 1);
  Kokkos::parallel_for("kspecter::solve::pack_band", policy, kernel);
}

}  // namespace detail

template <class ExecSpace>
void band_half_width_wavelength_major(ExecSpace const& space,
                                      MatrixBatch<typename ExecSpace::memory_space> dense,
                                      int nslots,
                                      Kokkos::View<int*, typename ExecSpace::memory_space> hw) {
  detail::band_half_width_impl<BandTuning<ExecSpace>>(space, dense, nslots, hw);
}

template <class ExecSpace>
void pack_band_wavelength_major(ExecSpace const& space,
                                MatrixBatch<typename ExecSpace::memory_space> dense, int nslots,
                                BandBatch<typename ExecSpace::memory_space> ab) {
  detail::pack_band_impl<BandTuning<ExecSpace>>(space, dense, nslots, ab);
}

}  // namespace kspecter::solve
