// Partial reassembly for a repeat (docs/architecture.md, "The warm extractor"): when a frame's
// weights differ from the kept solve's in the windows of a few patches (rejected pixels, a
// masked column), those patches alone are assembled, factorised and given their Q again, as
// one compact batch, with the full path's kernels on the same inputs. Their factor, Q, prior
// and status then replace the kept ones, and the repeat goes on as if the weights had not
// changed. A patch's numbers depend only on its own window, spots and band width (the kept
// band's), so the frame is the one a full extraction gives, bit for bit.
#pragma once

#include "assembly.hpp"
#include "band_solve.hpp"
#include "context.hpp"
#include "workspace.hpp"

#include <kspecter/core/allocate.hpp>
#include <kspecter/solve/band.hpp>
#include <kspecter/solve/batched.hpp>

#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace kspecter::extract::detail {

/// A repeat reworks at most half its batch's patches: beyond, the rework and the repeat
/// together cost about what the full path does, and the rework's buffers would pass half the
/// batch's.
constexpr int kReworkShare = 2;

// Per row of the strip, how many weights differ from the kept ones.
template <class ExecSpace>
struct ChangedRows {
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Strip = Kokkos::View<const double**, Kokkos::LayoutRight, typename ExecSpace::memory_space>;
  Strip now, kept;
  Kokkos::View<int*, typename ExecSpace::memory_space> rows;
  int ncol;
  KOKKOS_INLINE_FUNCTION void operator()(Member const& t) const {
    int const y = t.league_rank();
    int n = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(t, ncol), [&](int x, int& c) { c += now(y, x) != kept(y, x); }, n);
    Kokkos::single(Kokkos::PerTeam(t), [&]() { rows(y) = n; });
  }
};

// 1 for a patch whose window [x0, x1) x [y0, y1) holds a weight that differs: the pixels its
// assembly reads (windows_stage.hpp). Rows with no change are passed over.
template <class ExecSpace>
struct ChangedPatches {
  typename Types<ExecSpace>::CTable ptab;
  typename ChangedRows<ExecSpace>::Strip now, kept;
  Kokkos::View<const int*, typename ExecSpace::memory_space> rows;
  Kokkos::View<int*, typename ExecSpace::memory_space> changed;
  int x0, ncol;
  KOKKOS_INLINE_FUNCTION void operator()(int p) const {
    int const c0 = imax(ptab(p).x0 - x0, 0), c1 = imin(ptab(p).x1 - x0, ncol);
    int hit = 0;
    for (int y = ptab(p).y0; y < ptab(p).y1 && !hit; ++y)
      if (rows(y) > 0)
        for (int c = c0; c < c1 && !hit; ++c) hit = now(y, c) != kept(y, c);
    changed(p) = hit;
  }
};

/// The patches of the kept solve's batch (P of them) whose windows hold a weight that differs
/// from the kept strip, in order; none when the strip's columns differ or more than a
/// half of the patches changed (kReworkShare; then the full path runs).
template <class ExecSpace>
std::optional<std::vector<int>> patches_to_rework(FrameContext<ExecSpace> const& fc,
                                                  Workspace<ExecSpace> const& ws,
                                                  KeptSolve<typename ExecSpace::memory_space>& k,
                                                  int P) {
  if (k.x0 != ws.weights_x0 || k.ncol != ws.weights_ncol) return std::nullopt;
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::windows", fc.times);
  auto const now = Kokkos::subview(ws.weights, Kokkos::ALL, std::make_pair(0, k.ncol));
  Kokkos::parallel_for("kspecter::extract::changed_rows",
                       Kokkos::TeamPolicy<ExecSpace>(fc.space, fc.shape.npy, Kokkos::AUTO),
                       ChangedRows<ExecSpace>{now, k.weights, k.rows, k.ncol});
  Kokkos::parallel_for(
      "kspecter::extract::changed_patches",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>(fc.space, 0, P),
      ChangedPatches<ExecSpace>{ws.ptab_all, now, k.weights, k.rows, k.changed, k.x0, k.ncol});
  auto const changed = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), Kokkos::subview(k.changed, std::make_pair(0, P)));
  std::vector<int> ids;
  for (int p = 0; p < P; ++p)
    if (changed(p)) ids.push_back(p);
  if (ids.size() * kReworkShare > std::size_t(P)) return std::nullopt;
  return ids;
}

/// Room in `k.rework` for `count` patches (grown with a quarter's headroom, metered).
template <class ExecSpace>
void reserve_rework(FrameContext<ExecSpace> const& fc, Workspace<ExecSpace>& ws,
                    KeptSolve<typename ExecSpace::memory_space>& k, int count) {
  using mem = typename ExecSpace::memory_space;
  ReworkBuffers<mem>& r = k.rework;
  FrameShape const& s = fc.shape;
  std::size_t const nband = std::size_t(s.n) * std::size_t(k.band.half_width + 1);
  if (r.cap >= count && r.band.extent(0) >= std::size_t(r.cap) * nband) return;
  int const cap = Workspace<ExecSpace>::with_headroom(count);
  ws.meter.release(r.bytes);
  r = ReworkBuffers<mem>();  // the old memory goes before the new comes
  auto take = [&](auto& v, char const* label, auto... extents) {
    v = allocate<std::remove_reference_t<decltype(v)>>(fc.space, label, extents...);
    r.bytes += bytes_of(v);
  };
  take(r.ids, "kspecter::extract::rework::ids", cap);
  take(r.info, "kspecter::extract::rework::info", cap);
  take(r.ptab, "kspecter::extract::rework::patches", cap);
  take(r.band, "kspecter::extract::rework::band", std::size_t(cap) * nband);
  take(r.minw, "kspecter::extract::rework::minweight", cap);
  take(r.rhs, "kspecter::extract::rework::rhs", cap, s.n);
  take(r.fw, "kspecter::extract::rework::fluxweight", cap, s.n);
  take(r.qb, "kspecter::extract::rework::q_blocks", std::size_t(cap) * s.ncs, s.m, s.m);
  take(r.core_slots, "kspecter::extract::rework::core_slots", cap, s.ncs);
  r.cap = cap;
  ws.meter.hold(r.bytes);
}

/// The compact batch of `count` patches in `r`, with the workspace's spots. It is assembled,
/// factorised and given Q, never solved: it has no band-ordered right-hand side.
template <class ExecSpace>
BatchViews<ExecSpace> rework_batch(Workspace<ExecSpace> const& ws,
                                   ReworkBuffers<typename ExecSpace::memory_space> const& r,
                                   int count, int n, int ncs, BandSolve band) {
  using mem = typename ExecSpace::memory_space;
  auto const pr = std::make_pair(0, count);
  BatchViews<ExecSpace> b;
  b.P = count;
  b.spots = ws.spots.values;
  b.xc = ws.spots.xc;
  b.yc = ws.spots.yc;
  b.ptab = r.ptab;
  b.band = solve::BandBatch<mem>(r.band.data(), count, n, band.half_width + 1);
  b.rhs = Kokkos::subview(r.rhs, pr, Kokkos::ALL);
  b.fw = Kokkos::subview(r.fw, pr, Kokkos::ALL);
  b.minw = Kokkos::subview(r.minw, pr);
  b.info = Kokkos::subview(r.info, pr);
  b.qb = Kokkos::subview(r.qb, std::make_pair(std::size_t(0), std::size_t(count) * ncs),
                         Kokkos::ALL, Kokkos::ALL);
  b.core_slots = Kokkos::subview(r.core_slots, pr, Kokkos::ALL);
  return b;
}

// The reworked patches' factor, Q, prior and status into the kept batch's: element e of
// patch i's band (nband of them) and Q (nq) goes to patch ids(i).
template <class Mem>
struct ScatterRework {
  using Flat = Kokkos::View<double*, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::View<const int*, Mem> ids;
  Flat band_from, band_to, q_from, q_to;
  long nband, nq;
  KOKKOS_INLINE_FUNCTION void operator()(long e) const {
    long const per = nband + nq, i = e / per, r = e % per, p = ids(int(i));
    if (r < nband)
      band_to(p * nband + r) = band_from(i * nband + r);
    else
      q_to(p * nq + r - nband) = q_from(i * nq + r - nband);
  }
};

/// Assembles, factorises and forms Q again for the patches `ids` of the kept solve's batch,
/// and puts the results in its place: the band factor and Q in the batch buffers, the prior's
/// minweight and the fluxweight, the status in the kept one; the kept strip becomes this frame's.
/// Adds the assembly's products to `res`.
template <class ExecSpace>
void rework_patches(FrameContext<ExecSpace> const& fc, Workspace<ExecSpace>& ws,
                    KeptSolve<typename ExecSpace::memory_space>& k, std::vector<int> const& ids,
                    FrameResult& res) {
  using mem = typename ExecSpace::memory_space;
  using Range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>;
  FrameShape const& s = fc.shape;
  int const count = int(ids.size());
  reserve_rework(fc, ws, k, count);
  ReworkBuffers<mem> const& r = k.rework;
  Kokkos::View<int const*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> const host(
      ids.data(), ids.size());
  Kokkos::deep_copy(fc.space, Kokkos::subview(r.ids, std::make_pair(0, count)), host);
  auto const from = ws.ptab_all;
  auto const to = r.ptab;
  auto const which = r.ids;
  Kokkos::parallel_for(
      "kspecter::extract::rework::gather_patches", Range(fc.space, 0, count),
      KOKKOS_LAMBDA(int i) { to(i) = from(which(i)); });

  BatchViews<ExecSpace> const b = rework_batch(ws, r, count, s.n, s.ncs, k.band);
  res.stats.assembly_macs += assemble(fc, b, ws, k.band);
  {
    StageTimer<ExecSpace> st(fc.space, "kspecter::extract::factorisation", fc.times);
    solve::band_cholesky(fc.space, b.band, b.info);
  }
  covariance_blocks(fc, b, k.band);
  // Q formed, then stored with the factor in the kept batch's place.
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::decorrelation", fc.times);
  solve::inverse_sqrt(fc.space, b.qb, fc.opt.eig_rel_clip, ws.inverse_sqrt);
  ws.meter_inverse_sqrt();

  using Flat = typename ScatterRework<mem>::Flat;
  long const nband = long(s.n) * (k.band.half_width + 1), nq = long(s.ncs) * s.m * s.m;
  long const P = long(k.info.extent(0));
  Kokkos::parallel_for(
      "kspecter::extract::rework::scatter",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long>>(fc.space, 0,
                                                              long(count) * (nband + nq)),
      ScatterRework<mem>{r.ids, Flat(r.band.data(), count * nband),
                         Flat(ws.cblk_all.data(), P * nband), Flat(r.qb.data(), count * nq),
                         Flat(ws.q_all.data(), P * nq), nband, nq});
  // Their fluxweight too: a repeat's y leaves the kept one (assemble_rhs).
  auto const fw_from = r.fw, fw_to = ws.fw_all;
  int const n = s.n;
  Kokkos::parallel_for(
      "kspecter::extract::rework::scatter_fluxweight", Range(fc.space, 0, count * n),
      KOKKOS_LAMBDA(int e) { fw_to(which(e / n), e % n) = fw_from(e / n, e % n); });
  auto const minw_from = r.minw, minw_to = ws.minw_all;
  auto const info_from = r.info, info_to = k.info;
  Kokkos::parallel_for(
      "kspecter::extract::rework::scatter_status", Range(fc.space, 0, count), KOKKOS_LAMBDA(int i) {
        minw_to(which(i)) = minw_from(i);
        info_to(which(i)) = info_from(i);
      });
  Kokkos::deep_copy(fc.space, k.weights,
                    Kokkos::subview(ws.weights, Kokkos::ALL, std::make_pair(0, k.ncol)));
}

}  // namespace kspecter::extract::detail
