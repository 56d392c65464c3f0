// Launch shapes of the batched inverse square root (solve::inverse_sqrt, the decorrelation's
// kernels) on covariance-like blocks: the backend's tuning against one kernel or the staged
// kernels under other round sizes, row slices and chain teams, each timed between fences
// (best and median of --reps) with its largest difference from the backend's own result. The blocks
// are the fiber blocks of inverse_diagonal_blocks on --nmat iCov-like patches (--nfiber x --m), as
// in bench_solve.
//
//   bench_inverse_sqrt [--nmat 840] [--nfiber 7] [--m 74] [--reps 5] [--threads N] [--device D]
//
// Defaults: 840 patches (5880 blocks, one extraction batch of a frame) on a GPU, 168 on the
// host.
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/solve/batched.hpp>

#include "batch_bench.hpp"
#include "solve/impl/eigen/inverse_sqrt.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

namespace {

namespace ks = kspecter::solve;
using Space = Kokkos::DefaultExecutionSpace;
using Mem = Space::memory_space;
using Base = ks::Tuning<Space>;

/// The backend's tuning, one kernel or staged (inverse_sqrt_staged.hpp) with other round
/// sizes (rotations a matrix records, in units of m), slices of Z's rows for the rotations and
/// matrices a team of the QL chains.
template <bool Staged, int Round = Base::eig_round, int Cols = Base::eig_apply_cols,
          int Chains = Base::eig_chain_team>
struct Shape : Base {
  static constexpr bool eig_staged = Staged;
  static constexpr int eig_round = Round, eig_apply_cols = Cols, eig_chain_team = Chains;
};

struct Result {
  double best, median, maxdiff;
};

template <class Tune>
Result measure(Space const& space, ks::MatrixBatch<Mem> pristine, ks::MatrixBatch<Mem> work,
               std::vector<double> const* ref, std::vector<double>* out, int reps) {
  std::vector<double> t;
  ks::InverseSqrtWorkspace<Mem> ws;     // kept between rounds, as the extraction keeps it
  for (int r = 0; r < reps + 1; ++r) {  // the first round warms up
    Kokkos::deep_copy(space, work, pristine);
    space.fence();
    auto const t0 = std::chrono::steady_clock::now();
    ks::detail::inverse_sqrt_impl<Tune>(space, work, 1e-14, ws);
    space.fence();
    if (r > 0)
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  auto const h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), work);
  out->assign(h.data(), h.data() + h.span());
  double diff = 0.0;
  if (ref) {
    double scale = 0.0;
    for (double v : *ref) scale = std::max(scale, std::fabs(v));
    for (std::size_t k = 0; k < out->size(); ++k)
      diff = std::max(diff, std::fabs((*out)[k] - (*ref)[k]) / scale);
  }
  return {t.front(), t[t.size() / 2], diff};
}

template <class Tune>
void row(char const* name, Space const& space, ks::MatrixBatch<Mem> pristine,
         ks::MatrixBatch<Mem> work, std::vector<double> const& ref, int reps) {
  std::vector<double> q;
  Result const r = measure<Tune>(space, pristine, work, &ref, &q, reps);
  std::printf("%-28s %6s %5d %5d %6d %11.4f %11.4f %12.2e\n", name, Tune::eig_staged ? "yes" : "no",
              Tune::eig_round, Tune::eig_apply_cols, Tune::eig_chain_team, r.best, r.median,
              r.maxdiff);
}

}  // namespace

int main(int argc, char** argv) {
  bool const host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, Mem>::accessible;
  kspecter::bench::BatchArgs args{host ? 168 : 840, 7, 74, 5, {}};
  if (!kspecter::bench::parse_batch_args(argc, argv, "bench_inverse_sqrt", args)) return 2;
  kspecter::compat::initialize(args.init);
  {
    Space space;
    int const nmat = args.nmat, nfiber = args.nfiber, m = args.m;
    auto a = kspecter::bench::icov_batch<Mem>(nmat, nfiber, m);
    Kokkos::View<int*, Mem> info("info", nmat);
    ks::BlockBatch<Mem> c("c", nmat, nfiber, m, m);
    ks::cholesky(space, a, info);
    ks::inverse_diagonal_blocks(space, a, c);
    ks::MatrixBatch<Mem> blocks(c.data(), std::size_t(nmat) * nfiber, m, m);
    ks::MatrixBatch<Mem> work("work", std::size_t(nmat) * nfiber, m, m);
    std::printf("bench_inverse_sqrt: %s, concurrency %d, %d blocks of %d x %d, %d reps\n",
                Space::name(), Space().concurrency(), nmat * nfiber, m, m, args.reps);
    std::printf("%-28s %6s %5s %5s %6s %11s %11s %12s\n", "shape", "staged", "round", "rows",
                "chains", "best [s]", "median [s]", "max rel diff");
    std::vector<double> ref;
    Result const r0 = measure<Base>(space, blocks, work, nullptr, &ref, args.reps);
    std::printf("%-28s %6s %5d %5d %6d %11.4f %11.4f %12s\n", "backend tuning",
                Base::eig_staged ? "yes" : "no", Base::eig_round, Base::eig_apply_cols,
                Base::eig_chain_team, r0.best, r0.median, "reference");
    if (host) {
      row<Shape<true>>("staged", space, blocks, work, ref, args.reps);
    } else {
      row<Shape<false>>("one kernel", space, blocks, work, ref, args.reps);
      row<Shape<true, 16>>("rounds of 16 m", space, blocks, work, ref, args.reps);
      row<Shape<true, 64>>("rounds of 64 m", space, blocks, work, ref, args.reps);
      row<Shape<true, 32, 16>>("slices of 16 rows", space, blocks, work, ref, args.reps);
      row<Shape<true, 32, 64>>("slices of 64 rows", space, blocks, work, ref, args.reps);
      row<Shape<true, 32, 32, 64>>("chains 64 a team", space, blocks, work, ref, args.reps);
      row<Shape<true, 32, 32, 16>>("chains 16 a team", space, blocks, work, ref, args.reps);
      row<Shape<true, 32, 32, 8>>("chains 8 a team", space, blocks, work, ref, args.reps);
      row<Shape<true, 32, 32, 4>>("chains 4 a team", space, blocks, work, ref, args.reps);
      row<Shape<true, 32, 32, 2>>("chains 2 a team", space, blocks, work, ref, args.reps);
    }
  }
  Kokkos::finalize();
  return 0;
}
