// The PSF's Legendre coefficients in device memory, and device evaluation of traces and
// parameters (docs/algorithm.md §1) for a block of fibers x wavelengths.
#pragma once

#include <kspecter/core/allocate.hpp>
#include <kspecter/core/error.hpp>
#include <kspecter/core/profiling.hpp>
#include <kspecter/psf/gauss_hermite_psf.hpp>
#include <kspecter/psf/legendre.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <vector>

namespace kspecter::psf {

namespace detail {

/// spot_params(f, r, k) = params(rows[r], f, k), made on the device from the params already
/// there: a second upload of the same numbers is a frame's cost for nothing. `rows` holds
/// the row numbers as doubles (exact), uploaded with the tables (to_device).
template <class ExecSpace, class V3, class Rows>
void gather_spot_params(ExecSpace const& space, V3 const& params, Rows const& rows,
                        V3 const& spot_params) {
  int const ns = int(spot_params.extent(1)), ncoef = int(spot_params.extent(2));
  long const n = long(spot_params.extent(0)) * ns * ncoef;
  Kokkos::parallel_for(
      "kspecter::psf::gather_spot_params",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long>>(space, 0, n), KOKKOS_LAMBDA(long i) {
        int const k = int(i % ncoef), r = int(i / ncoef % ns), f = int(i / (long(ncoef) * ns));
        spot_params(f, r, k) = params(int(rows(r)), f, k);
      });
}

}  // namespace detail

/// The PSF's coefficients in device memory, ready for the spot kernel.
template <class MemorySpace>
struct DevicePsf {
  using memory_space = MemorySpace;
  Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace> xtrace, ytrace;  // [nfiber][ncoef]
  Kokkos::View<double***, Kokkos::LayoutRight, MemorySpace> params;  // [nparam][nfiber][ncoef]
  /// What one spot needs, fiber-major so that a team reads one contiguous block:
  /// [nfiber][nspot_param][ncoef] with rows GHSIGX, GHSIGY, GH-i-j (i = 0..ghdegx outer,
  /// j = 0..ghdegy inner), then TAILAMP, TAILCORE, TAILXSCA, TAILYSCA, TAILINDE when
  /// `tails` is true.
  Kokkos::View<double***, Kokkos::LayoutRight, MemorySpace> spot_params;
  /// The memory the tables above are views of (one allocation, to_device): they are valid
  /// while a DevicePsf that holds it lives.
  Kokkos::View<double*, MemorySpace> tables;
  int nfiber = 0;
  int hsizex = 0, hsizey = 0, ghdegx = 0, ghdegy = 0;
  double xwavemin = 0, xwavemax = 0;  // XTRACE range
  double ywavemin = 0, ywavemax = 0;  // YTRACE range
  double wavemin = 0, wavemax = 0;    // PSF table range (every other parameter)
  bool tails = false;                 // TAILAMP present and not identically zero

  int spot_nx() const { return 2 * hsizex + 1; }
  int spot_ny() const { return 2 * hsizey + 1; }
  /// Rows of spot_params.
  int nspot_param() const { return 2 + (ghdegx + 1) * (ghdegy + 1) + (tails ? 5 : 0); }
  /// Range over which every expansion is valid.
  double valid_wavemin() const {
    double w = xwavemin > ywavemin ? xwavemin : ywavemin;
    return w > wavemin ? w : wavemin;
  }
  double valid_wavemax() const {
    double w = xwavemax < ywavemax ? xwavemax : ywavemax;
    return w < wavemax ? w : wavemax;
  }
};

/// Copies a host PSF to the device (fences `space` before returning). Throws
/// ParameterError if the PSF is inconsistent (see check_psf).
template <class ExecSpace>
DevicePsf<typename ExecSpace::memory_space> to_device(ExecSpace const& space,
                                                      GaussHermitePsf const& psf) {
  using mem = typename ExecSpace::memory_space;
  ScopedRegion region("kspecter::psf::to_device");
  std::string const problem = check_psf(psf);
  if (!problem.empty()) throw ParameterError("GaussHermite PSF: " + problem);

  DevicePsf<mem> d;
  d.nfiber = psf.nfiber;
  d.hsizex = psf.hsizex;
  d.hsizey = psf.hsizey;
  d.ghdegx = psf.ghdegx;
  d.ghdegy = psf.ghdegy;
  d.xwavemin = psf.xtrace.wavemin;
  d.xwavemax = psf.xtrace.wavemax;
  d.ywavemin = psf.ytrace.wavemin;
  d.ywavemax = psf.ytrace.wavemax;
  d.wavemin = psf.params[0].wavemin;
  d.wavemax = psf.params[0].wavemax;
  d.tails = psf.has_tails();

  // Rows of spot_params, in the kernel's order.
  std::vector<int> rows;
  rows.push_back(psf.param_index("GHSIGX"));
  rows.push_back(psf.param_index("GHSIGY"));
  for (int i = 0; i <= psf.ghdegx; ++i)
    for (int j = 0; j <= psf.ghdegy; ++j) rows.push_back(psf.gh_index(i, j));
  if (d.tails)
    for (char const* n : {"TAILAMP", "TAILCORE", "TAILXSCA", "TAILYSCA", "TAILINDE"})
      rows.push_back(psf.param_index(n));
  int const ns = static_cast<int>(rows.size());
  int const nparam = static_cast<int>(psf.params.size());
  int const ncoef = psf.params[0].ncoef;

  // Every table in one allocation and one upload, straight from a host vector in the block's
  // order: each device allocation has a price per call whatever its size
  // (perf/device/alloc_cost.cu), and a host mirror would be zeroed first by a parallel_for,
  // which took several ms on a busy node's OpenMP pool (perf/gpu_runs.md, session 17).
  // Block: xtrace, ytrace [nfiber][ncoef]; params [nparam][nfiber][ncoef]; the rows of
  // spot_params (as doubles); spot_params [nfiber][ns][ncoef] (made on the device).
  std::size_t const nx = psf.xtrace.coeff.size(), ny = psf.ytrace.coeff.size();
  std::size_t const np = std::size_t(nparam) * psf.nfiber * ncoef;
  std::size_t const nsp = std::size_t(psf.nfiber) * ns * ncoef;
  std::vector<double> host;
  host.reserve(nx + ny + np + rows.size());
  host.insert(host.end(), psf.xtrace.coeff.begin(), psf.xtrace.coeff.end());
  host.insert(host.end(), psf.ytrace.coeff.begin(), psf.ytrace.coeff.end());
  for (int p = 0; p < nparam; ++p)
    host.insert(host.end(), psf.params[p].coeff.begin(),
                psf.params[p].coeff.begin() + long(psf.nfiber) * ncoef);
  host.insert(host.end(), rows.begin(), rows.end());
  d.tables =
      allocate<Kokkos::View<double*, mem>>(space, "kspecter::psf::tables", host.size() + nsp);
  double* at = d.tables.data();
  using V2 = Kokkos::View<double**, Kokkos::LayoutRight, mem>;
  using V3 = Kokkos::View<double***, Kokkos::LayoutRight, mem>;
  d.xtrace = V2(at, psf.xtrace.nfiber, psf.xtrace.ncoef);
  d.ytrace = V2(at + nx, psf.ytrace.nfiber, psf.ytrace.ncoef);
  d.params = V3(at + nx + ny, nparam, psf.nfiber, ncoef);
  Kokkos::View<double const*, mem> const drows(at + nx + ny + np, rows.size());
  d.spot_params = V3(at + host.size(), psf.nfiber, ns, ncoef);
  using Host =
      Kokkos::View<double const*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::deep_copy(space, Kokkos::subview(d.tables, std::make_pair(std::size_t(0), host.size())),
                    Host(host.data(), host.size()));
  detail::gather_spot_params(space, d.params, drows, d.spot_params);
  space.fence();  // before the host vector goes
  return d;
}

namespace detail {

/// ParameterError unless [fiber_begin, fiber_begin + nfiber) lies in the PSF.
inline void check_fiber_range(int psf_nfiber, int fiber_begin, int nfiber) {
  if (nfiber < 0 || fiber_begin < 0 || fiber_begin + nfiber > psf_nfiber)
    throw ParameterError("PSF fibers [" + std::to_string(fiber_begin) + ", " +
                         std::to_string(fiber_begin + nfiber) + ") are outside the PSF's " +
                         std::to_string(psf_nfiber) + " fibers");
}

}  // namespace detail

/// Trace positions x(w), y(w) in CCD pixels of fibers [fiber_begin, fiber_begin + nfiber)
/// (rows of the PSF) at `wavelengths`, into x and y [nfiber][nwave] (allocated or resized
/// here). No range check: the caller decides whether extrapolation is acceptable.
template <class ExecSpace>
void evaluate_traces(
    ExecSpace const& space, DevicePsf<typename ExecSpace::memory_space> const& psf, int fiber_begin,
    int nfiber, Kokkos::View<double const*, typename ExecSpace::memory_space> wavelengths,
    Kokkos::View<double**, Kokkos::LayoutRight, typename ExecSpace::memory_space>& x,
    Kokkos::View<double**, Kokkos::LayoutRight, typename ExecSpace::memory_space>& y) {
  detail::check_fiber_range(psf.nfiber, fiber_begin, nfiber);
  int const nwave = static_cast<int>(wavelengths.extent(0));
  using V2 = Kokkos::View<double**, Kokkos::LayoutRight, typename ExecSpace::memory_space>;
  if (int(x.extent(0)) != nfiber || int(x.extent(1)) != nwave)
    x = allocate<V2>(space, "kspecter::psf::trace_x", nfiber, nwave);
  if (int(y.extent(0)) != nfiber || int(y.extent(1)) != nwave)
    y = allocate<V2>(space, "kspecter::psf::trace_y", nfiber, nwave);
  auto const xt = psf.xtrace;
  auto const yt = psf.ytrace;
  double const xw0 = psf.xwavemin, xw1 = psf.xwavemax, yw0 = psf.ywavemin, yw1 = psf.ywavemax;
  int const nxc = int(xt.extent(1)), nyc = int(yt.extent(1));
  auto xo = x;
  auto yo = y;
  Kokkos::parallel_for(
      "kspecter::psf::evaluate_traces",
      Kokkos::RangePolicy<ExecSpace>(space, 0, std::size_t(nfiber) * nwave),
      KOKKOS_LAMBDA(std::size_t const idx) {
        int const f = int(idx / nwave), w = int(idx % nwave);
        double const lam = wavelengths(w);
        xo(f, w) = legendre_sum(&xt(fiber_begin + f, 0), nxc, legendre_u(lam, xw0, xw1));
        yo(f, w) = legendre_sum(&yt(fiber_begin + f, 0), nyc, legendre_u(lam, yw0, yw1));
      });
}

/// Parameter `param` (an index into GaussHermitePsf::param_names) of fibers
/// [fiber_begin, fiber_begin + nfiber) at `wavelengths`, into out [nfiber][nwave].
template <class ExecSpace>
void evaluate_param(
    ExecSpace const& space, DevicePsf<typename ExecSpace::memory_space> const& psf, int param,
    int fiber_begin, int nfiber,
    Kokkos::View<double const*, typename ExecSpace::memory_space> wavelengths,
    Kokkos::View<double**, Kokkos::LayoutRight, typename ExecSpace::memory_space>& out) {
  detail::check_fiber_range(psf.nfiber, fiber_begin, nfiber);
  if (param < 0 || param >= int(psf.params.extent(0)))
    throw ParameterError("PSF parameter index " + std::to_string(param) + " is out of range");
  int const nwave = static_cast<int>(wavelengths.extent(0));
  if (int(out.extent(0)) != nfiber || int(out.extent(1)) != nwave)
    out = allocate<Kokkos::View<double**, Kokkos::LayoutRight, typename ExecSpace::memory_space>>(
        space, "kspecter::psf::param", nfiber, nwave);
  auto const c = psf.params;
  double const w0 = psf.wavemin, w1 = psf.wavemax;
  int const ncoef = int(c.extent(2));
  auto o = out;
  Kokkos::parallel_for(
      "kspecter::psf::evaluate_param",
      Kokkos::RangePolicy<ExecSpace>(space, 0, std::size_t(nfiber) * nwave),
      KOKKOS_LAMBDA(std::size_t const idx) {
        int const f = int(idx / nwave), w = int(idx % nwave);
        o(f, w) =
            legendre_sum(&c(param, fiber_begin + f, 0), ncoef, legendre_u(wavelengths(w), w0, w1));
      });
}

#ifdef KOKKOS_ENABLE_CUDA
// Compiled once, without fused multiply-adds, with the spots (src/psf/spots_backend.cpp.in): every
// CUDA evaluation of the PSF then rounds the same way, and as the host does within 1e-14.
extern template void evaluate_traces<Kokkos::Cuda>(
    Kokkos::Cuda const&, DevicePsf<Kokkos::CudaSpace> const&, int, int,
    Kokkos::View<double const*, Kokkos::CudaSpace>,
    Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::CudaSpace>&,
    Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::CudaSpace>&);
extern template void evaluate_param<Kokkos::Cuda>(
    Kokkos::Cuda const&, DevicePsf<Kokkos::CudaSpace> const&, int, int, int,
    Kokkos::View<double const*, Kokkos::CudaSpace>,
    Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::CudaSpace>&);
#endif

}  // namespace kspecter::psf
