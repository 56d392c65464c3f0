// The state that the staged inverse square root's kernels (inverse_sqrt_staged.hpp) pass to one
// another through device memory: the bases, the tridiagonals, where each QL iteration stands,
// and the two alternating records of a round's rotations.
#pragma once

#include <kspecter/core/allocate.hpp>
#include <kspecter/solve/batched.hpp>

#include <Kokkos_Core.hpp>
#include <cstddef>

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

  /// The workspace that `nmat` matrices of m x m take at `round` rotations a row a round.
  static InverseSqrtWorkspaceSize size(int nmat, int m, int round) {
    std::size_t const nm = std::size_t(nmat), mm = std::size_t(m);
    std::size_t const rot = std::size_t(round) * mm, sweep = std::size_t(round) * mm / 4;
    return {pad(nm * mm * mm) + pad(nm * 2 * mm) + 4 * pad(nm * rot),
            pad(nm * nfield) + 2 * (pad(nm) + pad(nm * 2 * sweep))};
  }

  /// Views into `work`, grown on `space` (not initialised) when it holds too little for this
  /// batch; a failure to grow it is a kspecter::OutOfMemory (core/allocate.hpp).
  template <class ExecSpace>
  EigRounds(ExecSpace const& space, int nmat, int m_, int round, InverseSqrtWorkspace<Mem>& work)
      : m(m_), max_rot(round * m_), max_sweep(round * m_ / 4) {
    std::size_t const nm = std::size_t(nmat);
    InverseSqrtWorkspaceSize const need = size(nmat, m_, round);
    grow(space, work.doubles, need.doubles, "kspecter::solve::inverse_sqrt::doubles");
    grow(space, work.ints, need.ints, "kspecter::solve::inverse_sqrt::ints");
    double* d = work.doubles.data();
    int* i = work.ints.data();
    zt = Mat(take(d, nm * m * m), nmat, m, m);
    vec = Rows(take(d, nm * 2 * m), nmat, 2 * m);
    state = IRows(take(i, nm * nfield), nmat, int(nfield));
    for (EigRecord<Mem>& x : rec) {
      x.nsweep = Kokkos::View<int*, Mem>(take(i, nm), nmat);
      x.sweeps = IRows(take(i, nm * 2 * max_sweep), nmat, 2 * max_sweep);
      x.cs = Rows(take(d, nm * max_rot), nmat, max_rot);
      x.sn = Rows(take(d, nm * max_rot), nmat, max_rot);
    }
  }

 private:
  // Each array starts 32 entries or a multiple of them into the workspace (128-byte aligned).
  static std::size_t pad(std::size_t n) { return (n + 31) / 32 * 32; }
  template <class U>
  static U* take(U*& at, std::size_t n) {
    U* const p = at;
    at += pad(n);
    return p;
  }
  template <class ExecSpace, class V>
  static void grow(ExecSpace const& space, V& v, std::size_t n, char const* label) {
    if (v.extent(0) >= n) return;
    v = V();  // the old memory goes before the new comes
    v = allocate<V>(space, label, n);
  }
};

}  // namespace kspecter::solve::detail
