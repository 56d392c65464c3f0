// Kokkos Kernels' batched dense kernels against kspecter's own (kspecter::solve) on the same
// batch of extraction-sized iCov-like matrices (n = nfiber x m = 7 x 74 = 518): the measurement
// behind kspecter not using Kokkos Kernels (README, "Kokkos Kernels"). Each operation is done
// both ways on the default execution space, timed between fences, and the results compared.
//
//   bench_kernels [--nmat 64] [--nfiber 7] [--m 74] [--reps 3] [--threads N] [--device D]
//
// Kokkos Kernels (3.4 to 4.7) has no batched dense Cholesky, so each kspecter operation is set
// against the Kokkos Kernels composition a user would write:
//   cholesky         TeamLU (no pivoting: L U with U = D Lᵀ, twice the flops of a Cholesky),
//                    and SerialPbtrf (banded Cholesky, Kokkos Kernels >= 4.3) on the band
//   cholesky_solve   TeamTrsv with L, then with Lᵀ (Unblocked: the Blocked Lower/Transpose
//                    TeamTrsv of Kokkos Kernels 4.6.02 does not compile)
//   inverse_blocks   TeamTrsm (X = L⁻¹) then TeamGemm (C_k = X_kᵀ X_k over rows >= k m)
// inverse_sqrt has no counterpart (Kokkos Kernels has no batched symmetric eigensolver).
// Self-contained on purpose: it uses only batched.hpp's public functions.
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/solve/batched.hpp>

#include "batch_bench.hpp"

#include <KokkosBatched_Gemm_Decl.hpp>
#include <KokkosBatched_Gemm_Team_Impl.hpp>
#include <KokkosBatched_LU_Decl.hpp>
#include <KokkosBatched_LU_Team_Impl.hpp>
#include <KokkosBatched_Trsm_Decl.hpp>
#include <KokkosBatched_Trsm_Team_Impl.hpp>
#include <KokkosBatched_Trsv_Decl.hpp>
#include <KokkosBatched_Trsv_Team_Impl.hpp>
#if __has_include(<KokkosBatched_Pbtrf.hpp>)
#include <KokkosBatched_Pbtrf.hpp>
#define KSPECTER_BENCH_PBTRF 1
#endif
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

namespace kb = KokkosBatched;
using Space = Kokkos::DefaultExecutionSpace;
using mem = Space::memory_space;
using Mats = kspecter::solve::MatrixBatch<mem>;
using Vecs = kspecter::solve::VectorBatch<mem>;
using Blocks = kspecter::solve::BlockBatch<mem>;
using Team = Kokkos::TeamPolicy<Space>;
using Member = Team::member_type;

// Best wall time over reps of f() between fences; prep() runs untimed before each.
template <class Prep, class F>
double best_time(int reps, Prep&& prep, F&& f) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    prep();
    Kokkos::fence();
    auto const t0 = std::chrono::steady_clock::now();
    f();
    Kokkos::fence();
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

// max |x - y| / max |y| over two arrays of the same shape (compared on the host).
template <class V>
double rel_diff(V const& x, V const& y) {
  auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  double d = 0, s = 0;
  for (std::size_t k = 0; k < hx.span(); ++k) {
    d = std::max(d, std::fabs(hx.data()[k] - hy.data()[k]));
    s = std::max(s, std::fabs(hy.data()[k]));
  }
  return s > 0 ? d / s : d;
}

// The lower triangle of every matrix (upper set to zero), for comparing factors.
void keep_lower(Mats a) {
  int const n = int(a.extent(1));
  Kokkos::parallel_for(
      "kspecter::bench::keep_lower", Kokkos::RangePolicy<Space>(0, a.extent(0)),
      KOKKOS_LAMBDA(int b) {
        for (int i = 0; i < n; ++i)
          for (int j = i + 1; j < n; ++j) a(b, i, j) = 0;
      });
}

// The Cholesky factor from TeamLU's unit-lower L and upper U: L_chol(i, j) = L(i, j) sqrt(U(j, j)).
void lu_to_cholesky(Mats a) {
  int const n = int(a.extent(1));
  Kokkos::parallel_for(
      "kspecter::bench::lu_to_cholesky", Kokkos::RangePolicy<Space>(0, a.extent(0)),
      KOKKOS_LAMBDA(int b) {
        for (int j = 0; j < n; ++j) {
          double const d = kspecter::compat::sqrt(a(b, j, j));
          a(b, j, j) = d;
          for (int i = j + 1; i < n; ++i) a(b, i, j) *= d;
        }
      });
  keep_lower(a);
}

struct Timing {
  char const* op;
  char const* how;
  double seconds;
  double diff;  // against kspecter's result; < 0 where kspecter's is the reference itself
};

}  // namespace

int main(int argc, char** argv) {
  kspecter::bench::BatchArgs args{64, 7, 74, 3, {}};
  if (!kspecter::bench::parse_batch_args(argc, argv, "bench_kernels", args)) return 2;
  int const nmat = args.nmat, nfiber = args.nfiber, m = args.m, reps = args.reps;
  kspecter::compat::initialize(args.init);
  {
    Space space;
    int const n = nfiber * m;
    std::printf("bench_kernels: Kokkos %d, %s, concurrency %d, %d matrices of n = %d (%d x %d)\n",
                KOKKOS_VERSION, Space::name(), Space().concurrency(), nmat, n, nfiber, m);
    Mats const pristine = kspecter::bench::icov_batch<mem>(nmat, nfiber, m);
    Mats a("a", nmat, n, n), l("l", nmat, n, n), w("w", nmat, n, n);
    Vecs y0("y0", nmat, n), y("y", nmat, n), yk("yk", nmat, n);
    Blocks c("c", nmat, nfiber, m, m), ck("ck", nmat, nfiber, m, m);
    Kokkos::View<int*, mem> info("info", nmat);
    Kokkos::deep_copy(y0, 1.0);
    std::vector<Timing> rows;

    // ---------------------------------------------------------------- factorisation
    double const t_chol = best_time(
        reps, [&] { Kokkos::deep_copy(a, pristine); },
        [&] { kspecter::solve::cholesky(space, a, info); });
    Kokkos::deep_copy(l, a);  // kspecter's factor: the reference for every comparison below
    keep_lower(l);
    rows.push_back({"cholesky", "kspecter::solve::cholesky", t_chol, -1});
    double const t_lu = best_time(
        reps, [&] { Kokkos::deep_copy(w, pristine); },
        [&] {
          Kokkos::parallel_for(
              "kspecter::bench::kk_team_lu", Team(nmat, Kokkos::AUTO),
              KOKKOS_LAMBDA(Member const& team) {
                auto ab = Kokkos::subview(w, team.league_rank(), Kokkos::ALL, Kokkos::ALL);
                kb::TeamLU<Member, kb::Algo::LU::Blocked>::invoke(team, ab);
              });
        });
    lu_to_cholesky(w);
    rows.push_back({"cholesky", "KokkosBatched::TeamLU", t_lu, rel_diff(w, l)});
#ifdef KSPECTER_BENCH_PBTRF
    {
      // Band storage of the lower triangle, column-major as in LAPACK: band(d, j, b) =
      // A_b(j + d, j), d <= kd (SerialPbtrf scales columns with unit stride: it needs as0 = 1).
      int kd = 0;
      {
        auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pristine);
        for (int b = 0; b < nmat; ++b)
          for (int i = 0; i < n; ++i)
            for (int j = 0; j < i; ++j)
              if (h(b, i, j) != 0) kd = std::max(kd, i - j);
      }
      Kokkos::View<double***, Kokkos::LayoutLeft, mem> band("band", kd + 1, n, nmat);
      auto to_band = [&] {
        Kokkos::parallel_for(
            "kspecter::bench::to_band", Kokkos::RangePolicy<Space>(0, nmat), KOKKOS_LAMBDA(int b) {
              for (int d = 0; d <= kd; ++d)
                for (int j = 0; j < n; ++j) band(d, j, b) = j + d < n ? pristine(b, j + d, j) : 0.0;
            });
      };
      double const t_pb = best_time(reps, to_band, [&] {
        Kokkos::parallel_for(
            "kspecter::bench::kk_serial_pbtrf", Kokkos::RangePolicy<Space>(0, nmat),
            KOKKOS_LAMBDA(int b) {
              auto ab = Kokkos::subview(band, Kokkos::ALL, Kokkos::ALL, b);
              kb::SerialPbtrf<kb::Uplo::Lower, kb::Algo::Pbtrf::Unblocked>::invoke(ab);
            });
      });
      Kokkos::deep_copy(w, 0.0);
      Kokkos::parallel_for(
          "kspecter::bench::from_band", Kokkos::RangePolicy<Space>(0, nmat), KOKKOS_LAMBDA(int b) {
            for (int d = 0; d <= kd; ++d)
              for (int j = 0; j + d < n; ++j) w(b, j + d, j) = band(d, j, b);
          });
      std::printf("(band of the iCov: kd = %d)\n", kd);
      rows.push_back({"cholesky", "KokkosBatched::SerialPbtrf", t_pb, rel_diff(w, l)});
    }
#endif

    // ---------------------------------------------------------------- solve L Lᵀ x = y
    double const t_solve = best_time(
        reps, [&] { Kokkos::deep_copy(y, y0); },
        [&] { kspecter::solve::cholesky_solve(space, l, y); });
    rows.push_back({"cholesky_solve", "kspecter::solve::cholesky_solve", t_solve, -1});
    double const t_trsv = best_time(
        reps, [&] { Kokkos::deep_copy(yk, y0); },
        [&] {
          Kokkos::parallel_for(
              "kspecter::bench::kk_team_trsv", Team(nmat, Kokkos::AUTO),
              KOKKOS_LAMBDA(Member const& team) {
                int const b = team.league_rank();
                auto lb = Kokkos::subview(l, b, Kokkos::ALL, Kokkos::ALL);
                auto xb = Kokkos::subview(yk, b, Kokkos::ALL);
                kb::TeamTrsv<Member, kb::Uplo::Lower, kb::Trans::NoTranspose, kb::Diag::NonUnit,
                             kb::Algo::Trsv::Unblocked>::invoke(team, 1.0, lb, xb);
                team.team_barrier();
                kb::TeamTrsv<Member, kb::Uplo::Lower, kb::Trans::Transpose, kb::Diag::NonUnit,
                             kb::Algo::Trsv::Unblocked>::invoke(team, 1.0, lb, xb);
              });
        });
    rows.push_back({"cholesky_solve", "KokkosBatched::TeamTrsv x 2", t_trsv, rel_diff(yk, y)});

    // ---------------------------------------------------------------- diagonal blocks of A⁻¹
    double const t_inv = best_time(
        reps, [&] { Kokkos::deep_copy(a, l); },
        [&] { kspecter::solve::inverse_diagonal_blocks(space, a, c); });
    rows.push_back({"inverse_blocks", "kspecter::solve::inverse_diagonal_blocks", t_inv, -1});
    auto identity = [&] {
      Kokkos::deep_copy(w, 0.0);
      Kokkos::parallel_for(
          "kspecter::bench::identity", Kokkos::RangePolicy<Space>(0, nmat), KOKKOS_LAMBDA(int b) {
            for (int i = 0; i < n; ++i) w(b, i, i) = 1.0;
          });
    };
    double const t_kkinv = best_time(reps, identity, [&] {
      Kokkos::parallel_for(
          "kspecter::bench::kk_team_trsm_gemm", Team(nmat, Kokkos::AUTO),
          KOKKOS_LAMBDA(Member const& team) {
            int const b = team.league_rank();
            auto lb = Kokkos::subview(l, b, Kokkos::ALL, Kokkos::ALL);
            auto xb = Kokkos::subview(w, b, Kokkos::ALL, Kokkos::ALL);
            kb::TeamTrsm<Member, kb::Side::Left, kb::Uplo::Lower, kb::Trans::NoTranspose,
                         kb::Diag::NonUnit, kb::Algo::Trsm::Blocked>::invoke(team, 1.0, lb, xb);
            team.team_barrier();
            for (int k = 0; k < nfiber; ++k) {
              auto xk = Kokkos::subview(xb, Kokkos::make_pair(k * m, n),
                                        Kokkos::make_pair(k * m, (k + 1) * m));
              auto cb = Kokkos::subview(ck, b, k, Kokkos::ALL, Kokkos::ALL);
              kb::TeamGemm<Member, kb::Trans::Transpose, kb::Trans::NoTranspose,
                           kb::Algo::Gemm::Blocked>::invoke(team, 1.0, xk, xk, 0.0, cb);
            }
          });
    });
    rows.push_back(
        {"inverse_blocks", "KokkosBatched::TeamTrsm + TeamGemm", t_kkinv, rel_diff(ck, c)});

    std::printf("%-16s %-42s %11s %12s %14s\n", "operation", "implementation", "best [s]",
                "matrices/s", "rel. diff");
    for (auto const& r : rows) {
      char diff[32] = "(reference)";
      if (r.diff >= 0) std::snprintf(diff, sizeof diff, "%.2e", r.diff);
      std::printf("%-16s %-42s %11.4f %12.1f %14s\n", r.op, r.how, r.seconds, nmat / r.seconds,
                  diff);
    }
    std::printf("(best of %d; rel. diff: max |difference| / max |kspecter's result|)\n", reps);
  }
  Kokkos::finalize();
  return 0;
}
