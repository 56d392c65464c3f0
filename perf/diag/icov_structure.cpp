// The structure of real iCov patch matrices, for choosing the solve algorithms: extracts one
// bundle of a simulated DESI r frame (real r0 PSF, DESI defaults) on the host with every
// patch's intermediates kept (ExtractHooks::debug_patch = every_patch) and prints, per patch and
// over the bundle: nonzeros, the half-bandwidth and the row envelope in fiber-major order
// (the solver's unknown order, u = slot * m + bin) and in wavelength-major order
// (v = bin * nslots + slot), and the spread of the eigenvalues of the core fibers' C_ff
// blocks (from Q = C_ff^-1/2). With --dump FILE it writes every --every-th patch's iCov, y
// and fluxweight (binary, see write_dump) for the prototype benchmarks and tests.
//
//   icov_structure [--psf FILE] [--bundle B] [--dump FILE] [--every K] [--threads N]
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/io/psf_file.hpp>
#include <kspecter/sim/simulate.hpp>
#include <kspecter/sim/spectra.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace kspecter;

struct Shape {
  long nnz = 0;     // nonzeros of the lower triangle, diagonal included
  int band = 0;     // largest i - j over nonzeros (i >= j)
  double env = 0;   // mean over rows of (i - first nonzero column of row i)
  double env2 = 0;  // sum over rows of that width squared (a skyline Cholesky's cost ~ sum w^2)
};

// The lower triangle of a (n x n, fiber-major) under the unknown order idx(u) (idx: the
// new position of unknown u).
template <class Index>
Shape shape(std::vector<double> const& a, int n, Index idx) {
  Shape s;
  std::vector<int> first(std::size_t(n), n);
  for (int u = 0; u < n; ++u)
    for (int w = 0; w < n; ++w) {
      if (a[std::size_t(u) * n + w] == 0.0) continue;
      int const i = idx(u), j = idx(w);
      if (j > i) continue;
      ++s.nnz;
      s.band = std::max(s.band, i - j);
      first[std::size_t(i)] = std::min(first[std::size_t(i)], j);
    }
  for (int i = 0; i < n; ++i) {
    double const w = i - std::min(first[std::size_t(i)], i);
    s.env += w / n;
    s.env2 += w * w;
  }
  return s;
}

// Eigenvalues of the symmetric m x m matrix a (cyclic Jacobi, long double; small m only).
std::vector<double> eigenvalues(std::vector<double> a, int m) {
  using LD = long double;
  std::vector<LD> b(a.begin(), a.end());
  for (int sweep = 0; sweep < 60; ++sweep) {
    LD off = 0;
    for (int p = 0; p < m; ++p)
      for (int q = p + 1; q < m; ++q) off += b[p * m + q] * b[p * m + q];
    if (off < 1e-40L) break;
    for (int p = 0; p < m; ++p)
      for (int q = p + 1; q < m; ++q) {
        LD const apq = b[p * m + q];
        if (apq == 0) continue;
        LD const th = (b[q * m + q] - b[p * m + p]) / (2 * apq);
        LD const t = (th >= 0 ? 1 : -1) / (std::fabs(th) + std::sqrt(th * th + 1));
        LD const c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < m; ++k) {
          LD const bkp = b[k * m + p], bkq = b[k * m + q];
          b[k * m + p] = c * bkp - s * bkq;
          b[k * m + q] = s * bkp + c * bkq;
        }
        for (int k = 0; k < m; ++k) {
          LD const bpk = b[p * m + k], bqk = b[q * m + k];
          b[p * m + k] = c * bpk - s * bqk;
          b[q * m + k] = s * bpk + c * bqk;
        }
      }
  }
  std::vector<double> ev(static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i) ev[std::size_t(i)] = double(b[i * m + i]);
  std::sort(ev.begin(), ev.end());
  return ev;
}

// Dump format (native endianness): int32 count, n, nslots, m; then per patch int32 nfib,
// core_slot, ncore, followed by n*n doubles (iCov, full symmetric), n doubles y and n doubles
// fluxweight.
void write_dump(std::string const& path, std::vector<extract::PatchDebug const*> const& ps) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::fprintf(stderr, "icov_structure: cannot write %s\n", path.c_str());
    std::exit(1);
  }
  std::int32_t const hdr[4] = {std::int32_t(ps.size()), ps[0]->n, ps[0]->nslots, ps[0]->m};
  std::fwrite(hdr, sizeof hdr, 1, f);
  for (auto const* p : ps) {
    std::int32_t const h[3] = {p->patch.nfiber_pad, p->patch.core_slot, p->patch.ncore};
    std::fwrite(h, sizeof h, 1, f);
    std::fwrite(p->icov.data(), sizeof(double), p->icov.size(), f);
    std::fwrite(p->y.data(), sizeof(double), p->y.size(), f);
    std::fwrite(p->fluxweight.data(), sizeof(double), p->fluxweight.size(), f);
  }
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  std::string psf_path = KSPECTER_SHARED_DATA "/psf-r0-00067784.fits", dump;
  int bundle = 0, every = 20, threads = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string const k = argv[i], v = argv[i + 1];
    if (k == "--psf")
      psf_path = v;
    else if (k == "--bundle")
      bundle = std::atoi(v.c_str());
    else if (k == "--dump")
      dump = v;
    else if (k == "--every")
      every = std::max(1, std::atoi(v.c_str()));
    else if (k == "--threads")
      threads = std::atoi(v.c_str());
    else {
      std::fprintf(stderr,
                   "usage: icov_structure [--psf FILE] [--bundle B] [--dump FILE] [--every K] "
                   "[--threads N]\n");
      return 2;
    }
  }
  compat::initialize({threads, -1});
  {
    psf::GaussHermitePsf const p = io::read_psf(psf_path);
    extract::ExtractOptions opt;
    opt.wmin = 5760;
    opt.wmax = 7620;
    opt.dw = 0.8;
    opt.specmin = 25 * bundle;
    opt.nspec = 25;
    extract::ExtractHooks hooks;
    hooks.debug_patch = extract::ExtractHooks::every_patch;
    std::vector<double> simwave = sim::wavelength_grid(opt.wmin - 40, opt.wmax + 60, opt.dw);
    sim::Spectra const spectra = sim::make_spectra(42, opt.specmin, opt.nspec, simwave);
    sim::SimulateOptions so;
    so.seed = 42;
    sim::SimulatedImage const img = sim::simulate_on_host(p, spectra, so);
    using mem = Kokkos::DefaultHostExecutionSpace::memory_space;
    Kokkos::View<double**, Kokkos::LayoutRight, mem> dimg("image", p.npix_y, p.npix_x),
        divar("ivar", p.npix_y, p.npix_x);
    for (int y = 0; y < p.npix_y; ++y)
      for (int x = 0; x < p.npix_x; ++x) {
        dimg(y, x) = img.image[std::size_t(y) * p.npix_x + x];
        divar(y, x) = img.ivar[std::size_t(y) * p.npix_x + x];
      }
    auto const res = extract::extract_frame(Kokkos::DefaultHostExecutionSpace(), p, dimg, divar,
                                            opt, nullptr, hooks);
    std::printf("%zu patches, n = %d (%d slots x %d bins), spots %d x %d\n", res.debug.size(),
                res.stats.n, res.stats.n / res.stats.block, res.stats.block, p.spot_ny(),
                p.spot_nx());
    std::printf("%6s %5s %4s %8s | %6s %7s %9s | %6s %7s %9s | %9s %9s\n", "patch", "nfib", "core",
                "nnz", "bandF", "envF", "sumw2F", "bandW", "envW", "sumw2W", "condCmin",
                "condCmax");
    int bandw_max = 0;
    double sw_f = 0, sw_w = 0, cmax_all = 0;
    std::vector<extract::PatchDebug const*> keep;
    for (std::size_t k = 0; k < res.debug.size(); ++k) {
      auto const& d = res.debug[k];
      int const n = d.n, m = d.m, ns = d.nslots;
      Shape const f = shape(d.icov, n, [](int u) { return u; });
      Shape const w = shape(d.icov, n, [&](int u) { return (u % m) * ns + u / m; });
      bandw_max = std::max(bandw_max, w.band);
      sw_f += f.env2;
      sw_w += w.env2;
      bool const sample = k % std::size_t(every) == 0 || k + 1 == res.debug.size();
      double cmin = 0, cmax = 0;
      if (sample) {
        keep.push_back(&d);
        cmin = 1e300;
        for (int c = 0; c < d.patch.ncore; ++c) {
          // Q = C^-1/2: the eigenvalues of C are those of Q to the power -2.
          std::vector<double> q(d.q.begin() + long(c) * m * m, d.q.begin() + long(c + 1) * m * m);
          auto const ev = eigenvalues(q, m);
          double const cond = std::pow(ev.back() / ev.front(), 2.0);
          cmin = std::min(cmin, cond);
          cmax = std::max(cmax, cond);
        }
        cmax_all = std::max(cmax_all, cmax);
        std::printf("%6zu %5d %4d %8ld | %6d %7.1f %9.3g | %6d %7.1f %9.3g | %9.3g %9.3g\n", k,
                    d.patch.nfiber_pad, d.patch.core_slot, f.nnz, f.band, f.env, f.env2, w.band,
                    w.env, w.env2, cmin, cmax);
      }
    }
    double const np = double(res.debug.size());
    std::printf(
        "bundle: wavelength-major half-bandwidth max %d; skyline sum w^2 per patch: fiber-major "
        "%.3g, wavelength-major %.3g (dense n^3/3 = %.3g); largest cond(C_ff) sampled %.3g\n",
        bandw_max, sw_f / np, sw_w / np, std::pow(double(res.stats.n), 3) / 3, cmax_all);
    if (!dump.empty()) {
      write_dump(dump, keep);
      std::printf("wrote %zu patches to %s\n", keep.size(), dump.c_str());
    }
  }
  Kokkos::finalize();
  return 0;
}
