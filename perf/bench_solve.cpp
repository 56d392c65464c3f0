// Benchmark of the batched solves (kspecter::solve) on extraction-sized problems: a batch
// of iCov-like SPD matrices of n = nfiber x m (7 x 74 = 518), timed per operation between
// fences: cholesky, cholesky_solve, inverse_diagonal_blocks (C_ff blocks) and inverse_sqrt
// (on the nfiber blocks of m = 74 of every matrix). Prints time, GFLOP/s and matrices/s.
//
//   bench_solve [--nmat 235] [--nfiber 7] [--m 74] [--reps 5] [--threads N] [--device D]
//
// Defaults: 235 patches (one bundle) on the host, 4700 (one frame) on a GPU.
// Flop counts are nominal dense counts: n³/3 (Cholesky), 2n² (solve), n³/3 + Σ_k 2 m² (n - k m)
// (triangular inverse + Gram products), 9 m³ + 2 m³ per block (symmetric eigensolver with
// vectors, LAPACK's usual estimate, + composing Q). The kernels skip the iCov row envelope
// (exact zeros), so for these matrices the GFLOP/s are "dense-equivalent" rates.
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/solve/batched.hpp>

#include "batch_bench.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

namespace {

struct Stat {
  double best = 1e300, median = 0;
};
Stat stats(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return {t.front(), t[t.size() / 2]};
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// Wall time between fences; adds the process's CPU time to *cpu (on a shared machine,
// CPU time / threads estimates the wall time the same work takes on idle cores).
template <class F>
double timed(Kokkos::DefaultExecutionSpace const& space, double* cpu, F&& f) {
  space.fence();
  double const c0 = process_cpu_seconds();
  auto const t0 = std::chrono::steady_clock::now();
  f();
  space.fence();
  double const t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  *cpu = process_cpu_seconds() - c0;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  using Space = Kokkos::DefaultExecutionSpace;
  using mem = Space::memory_space;
  bool const host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, mem>::accessible;
  kspecter::bench::BatchArgs args{host ? 235 : 4700, 7, 74, 5, {}};
  if (!kspecter::bench::parse_batch_args(argc, argv, "bench_solve", args)) return 2;
  int const nmat = args.nmat, nfiber = args.nfiber, m = args.m, reps = args.reps;
  kspecter::compat::initialize(args.init);
  {
    Space space;
    int const n = nfiber * m;
    std::printf("bench_solve: %s, concurrency %d, %d matrices of n = %d (%d x %d), %d reps\n",
                Space::name(), Space().concurrency(), nmat, n, nfiber, m, reps);

    auto const pristine = kspecter::bench::icov_batch<mem>(nmat, nfiber, m);
    kspecter::solve::VectorBatch<mem> y0("y0", nmat, n);
    Kokkos::deep_copy(y0, 1.0);

    kspecter::solve::MatrixBatch<mem> a("a", nmat, n, n);
    kspecter::solve::VectorBatch<mem> y("y", nmat, n);
    kspecter::solve::BlockBatch<mem> c("c", nmat, nfiber, m, m);
    kspecter::solve::MatrixBatch<mem> blocks(c.data(), std::size_t(nmat) * nfiber, m, m);
    Kokkos::View<int*, mem> info("info", nmat);

    std::vector<double> tc, ts, ti, tq, tall;
    std::vector<double> cc, cs, ci, cq, call;  // CPU seconds per thread (host backends)
    double const nthreads = host ? Space().concurrency() : 1;
    for (int r = 0; r < reps + 1; ++r) {  // the first round warms up
      Kokkos::deep_copy(space, a, pristine);
      Kokkos::deep_copy(space, y, y0);
      double c1, c2, c3, c4;
      double const t1 = timed(space, &c1, [&] { kspecter::solve::cholesky(space, a, info); });
      double const t2 = timed(space, &c2, [&] { kspecter::solve::cholesky_solve(space, a, y); });
      double const t3 =
          timed(space, &c3, [&] { kspecter::solve::inverse_diagonal_blocks(space, a, c); });
      double const t4 = timed(space, &c4, [&] { kspecter::solve::inverse_sqrt(space, blocks); });
      if (r == 0) continue;
      tc.push_back(t1);
      ts.push_back(t2);
      ti.push_back(t3);
      tq.push_back(t4);
      tall.push_back(t1 + t2 + t3 + t4);
      cc.push_back(c1 / nthreads);
      cs.push_back(c2 / nthreads);
      ci.push_back(c3 / nthreads);
      cq.push_back(c4 / nthreads);
      call.push_back((c1 + c2 + c3 + c4) / nthreads);
    }
    int failed = 0;
    {
      auto hi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
      for (int b = 0; b < nmat; ++b) failed += hi(b) != 0;
      auto hq = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), blocks);
      double qsum = 0;
      for (std::size_t k = 0; k < hq.span(); ++k) qsum += hq.data()[k];
      std::printf("check: %d failed factorisations, sum of Q = %.10e\n", failed, qsum);
    }

    double const dn = n, dm = m;
    double gram = 0;
    for (int k = 0; k < nfiber; ++k) gram += 2.0 * dm * dm * (dn - k * dm);
    double const f_chol = dn * dn * dn / 3, f_solve = 2 * dn * dn, f_inv = dn * dn * dn / 3 + gram,
                 f_sqrt = nfiber * 11.0 * dm * dm * dm;
    struct Row {
      char const* name;
      Stat s;
      Stat cpu;
      double flops;  // per matrix of the batch
      int per;       // matrices per patch
    } const rows[] = {{"cholesky", stats(tc), stats(cc), f_chol, 1},
                      {"cholesky_solve", stats(ts), stats(cs), f_solve, 1},
                      {"inverse_blocks", stats(ti), stats(ci), f_inv, 1},
                      {"inverse_sqrt", stats(tq), stats(cq), f_sqrt, nfiber},
                      {"all four", stats(tall), stats(call), f_chol + f_solve + f_inv + f_sqrt, 1}};
    std::printf("%-16s %11s %11s %10s %14s %15s\n", "operation", "best [s]", "median [s]",
                "GFLOP/s", "matrices/s", "cpu/thread [s]");
    for (auto const& row : rows)
      std::printf("%-16s %11.4f %11.4f %10.2f %14.1f %15.4f\n", row.name, row.s.best, row.s.median,
                  row.flops * nmat / row.s.best * 1e-9, double(nmat) * row.per / row.s.best,
                  row.cpu.best);
    std::printf(
        "(inverse_sqrt: matrices/s counts %dx%d blocks; GFLOP/s: nominal dense flops; cpu/thread:\n"
        " process CPU time / threads, the wall time to expect on otherwise idle cores)\n",
        m, m);
  }
  Kokkos::finalize();
  return 0;
}
