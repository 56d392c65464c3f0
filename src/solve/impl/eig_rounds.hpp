// The state that the staged inverse square root's kernels (inverse_sqrt_staged.hpp) pass to one
// another through device memory: the bases, the tridiagonals, where each QL iteration stands,
// and the two alternating records of a round's rotations.
#pragma once

#include <Kokkos_Core.hpp>
#include <string>

namespace kspecter::solve::detail {

/// One round's rotations of every matrix, as the chains record them for the rotations.
template <class Mem>
struct EigRecord {
  using Rows = Kokkos::View<double**, Kokkos::LayoutRight, Mem>;
  using IRows = Kokkos::View<int**, Kokkos::LayoutRight, Mem>;
  Kokkos::View<int*, Mem> nsweep;  // [nmat] sweeps recorded
  IRows sweeps;                    // [nmat][2 max_sweep] lo, hi of each recorded sweep
  Rows cs, sn;                     // [nmat][max_rot] the rotations in the order they apply
};

/// A batch's eigen-decompositions between the staged kernels.
template <class Mem>
struct EigRounds {
  using Mat = Kokkos::View<double***, Kokkos::LayoutRight, Mem>;
  using Rows = Kokkos::View<double**, Kokkos::LayoutRight, Mem>;
  using IRows = Kokkos::View<int**, Kokkos::LayoutRight, Mem>;
  /// Where each matrix's QL iteration stands: QlChain's l, iter and status.
  enum Field { l_field, iter_field, status_field, nfield };

  int m = 0;
  int max_rot = 0;        // rotations a matrix records per round
  int max_sweep = 0;      // sweeps a matrix records per round
  Mat zt;                 // [nmat][m][m] the basis Zᵀ, its rows rotated into eigenvectors
  Rows vec;               // [nmat][2 m] d, e
  IRows state;            // [nmat][nfield]
  EigRecord<Mem> rec[2];  // rounds 0, 2, 4, ... and 1, 3, 5, ...

  EigRounds(int nmat, int m_, int round) : m(m_), max_rot(round * m_), max_sweep(round * m_ / 4) {
    auto const alloc = [](char const* label) {
      return Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label));
    };
    zt = Mat(alloc("kspecter::solve::inverse_sqrt::zt"), nmat, m, m);
    vec = Rows(alloc("kspecter::solve::inverse_sqrt::vec"), nmat, 2 * m);
    state = IRows(alloc("kspecter::solve::inverse_sqrt::state"), nmat, int(nfield));
    for (EigRecord<Mem>& x : rec) {
      x.nsweep = Kokkos::View<int*, Mem>(alloc("kspecter::solve::inverse_sqrt::nsweep"), nmat);
      x.sweeps = IRows(alloc("kspecter::solve::inverse_sqrt::sweeps"), nmat, 2 * max_sweep);
      x.cs = Rows(alloc("kspecter::solve::inverse_sqrt::cs"), nmat, max_rot);
      x.sn = Rows(alloc("kspecter::solve::inverse_sqrt::sn"), nmat, max_rot);
    }
  }
};

}  // namespace kspecter::solve::detail
