// The synthetic DESI-r-like PSF. Every number is written directly as a Legendre coefficient
// over [wavemin, wavemax] (u = -1 .. 1), modelled on the real r0 PSF of 2020-12-14:
//   x(u) = x0 - xn (5.5 u + 1.5 P2(u)) + 0.3 xn^3 P3(u)          (pincushion, ~11 px at the edges)
//   y(u) = s (1964 + 117 xn^2 + 2098 u + 57 P2 + 10 P3 + 1.2 P4 - 2 P5)  (smile; s = NPIX_Y/4128)
// with xn the fiber's distance from the CCD centre in units of 1930 px; the widths grow
// towards the edges of the CCD and with wavelength; the GH terms are the even-even shape of
// the real PSF plus small odd terms, varying from bundle to bundle.
#include <kspecter/core/error.hpp>
#include <kspecter/psf/synthetic_psf.hpp>

#include <cmath>
#include <initializer_list>
#include <string>
#include <vector>

namespace kspecter::psf {
namespace {

/// splitmix64: a tiny, portable, well-mixed stream.
class Stream {
 public:
  explicit Stream(std::uint64_t seed) : s_(seed ^ 0x9E3779B97F4A7C15ull) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [-1, 1).
  double sym() { return double(next() >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0; }

 private:
  std::uint64_t s_;
};

/// Typical amplitude of GH-i-j (x degree i, y degree j) at the centre of the range: the
/// even-even core shape of the real r0 PSF (rounded), 0 for odd terms (added at random).
double gh_base(int i, int j) {
  static double const t[7][7] = {
      // j = 0      1       2       3       4       5       6
      {1.0, 0.0, 0.028, 0.0, 0.0115, 0.0, 0.0072},        // i = 0
      {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},                // i = 1
      {0.0085, 0.0, -0.0046, 0.0, 0.0179, 0.0, 0.00027},  // i = 2
      {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},                // i = 3
      {-0.0032, 0.0, 0.0164, 0.0, 0.0035, 0.0, 0.00066},  // i = 4
      {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},                // i = 5
      {0.0049, 0.0, 0.00025, 0.0, 0.00065, 0.0, 0.0001},  // i = 6
  };
  return (i < 7 && j < 7) ? t[i][j] : 0.0;
}

void need(bool ok, std::string const& what) {
  if (!ok) throw ParameterError("synthetic PSF: " + what);
}

}  // namespace

GaussHermitePsf make_synthetic_psf(SyntheticPsfOptions const& o) {
  need(o.nfiber >= 1 && o.nfiber <= 100000, "nfiber must be in [1, 100000]");
  need(o.fibermin >= 0, "fibermin must be >= 0");
  need(o.bundlesize >= 1, "bundlesize must be >= 1");
  need(o.pitch > 0 && o.bundle_gap > 0, "pitch and bundle gap must be positive");
  need(std::isfinite(o.wavemin) && std::isfinite(o.wavemax) && o.wavemin < o.wavemax,
       "the wavelength range is empty");
  need(o.npix_x >= 1 && o.npix_y >= 1, "the CCD size must be positive");
  need(o.hsizex >= 1 && o.hsizey >= 1 && o.hsizex <= max_half_size && o.hsizey <= max_half_size,
       "HSIZEX, HSIZEY must be in [1, " + std::to_string(max_half_size) + "]");
  need(o.ghdegx >= 0 && o.ghdegy >= 0 && o.ghdegx <= max_gh_degree && o.ghdegy <= max_gh_degree,
       "GH degrees must be in [0, " + std::to_string(max_gh_degree) + "]");
  need(o.legdeg >= 0 && o.legdeg <= 20, "LEGDEG must be in [0, 20]");
  need(o.trace_ncoef >= 2 && o.trace_ncoef <= 20, "trace_ncoef must be in [2, 20]");
  need(std::isfinite(o.tailamp) && o.tailamp >= 0, "TAILAMP must be >= 0");
  need(std::isfinite(o.psferr) && o.psferr >= 0, "PSFERR must be >= 0");

  int const nf = o.nfiber;
  int const nb = (nf + o.bundlesize - 1) / o.bundlesize;
  // Fiber centres at the centre of the range, centred on the CCD.
  std::vector<double> x0(nf);
  for (int f = 0; f < nf; ++f) {
    int const b = f / o.bundlesize, k = f % o.bundlesize;
    x0[f] = b * ((o.bundlesize - 1) * o.pitch + o.bundle_gap) + k * o.pitch;
  }
  double const shift = 0.5 * (o.npix_x - 1) - 0.5 * (x0.front() + x0.back());
  for (double& x : x0) x += shift;
  need(x0.front() - 20 >= 0 && x0.back() + 20 <= o.npix_x - 1,
       "the " + std::to_string(nf) + " fibers do not fit on a CCD of " + std::to_string(o.npix_x) +
           " columns");

  Stream rng(o.seed);
  // Per-bundle and per-fiber scatter, drawn in a fixed order.
  std::vector<double> bundle_dy(nb), fiber_dx(nf), fiber_ds(nf);
  for (int b = 0; b < nb; ++b) bundle_dy[b] = 0.5 * rng.sym();
  for (int f = 0; f < nf; ++f) {
    fiber_dx[f] = 0.15 * rng.sym();
    fiber_ds[f] = rng.sym();
  }

  GaussHermitePsf psf;
  psf.nfiber = nf;
  psf.fibermin = o.fibermin;
  psf.npix_x = o.npix_x;
  psf.npix_y = o.npix_y;
  psf.hsizex = o.hsizex;
  psf.hsizey = o.hsizey;
  psf.ghdegx = o.ghdegx;
  psf.ghdegy = o.ghdegy;
  psf.psferr = o.psferr;

  auto make_set = [&](int ncoef) {
    LegendreSet s;
    s.wavemin = o.wavemin;
    s.wavemax = o.wavemax;
    s.nfiber = nf;
    s.ncoef = ncoef;
    s.coeff.assign(std::size_t(nf) * ncoef, 0.0);
    return s;
  };
  auto set = [](LegendreSet& s, int f, std::initializer_list<double> c) {
    int k = 0;
    for (double v : c) {
      if (k < s.ncoef) s.coeff[std::size_t(f) * s.ncoef + k] = v;
      ++k;
    }
  };
  double const xmid = 0.5 * (o.npix_x - 1);
  double const sy = o.npix_y / 4128.0;
  psf.xtrace = make_set(o.trace_ncoef);
  psf.ytrace = make_set(o.trace_ncoef);
  for (int f = 0; f < nf; ++f) {
    double const xn = (x0[f] - xmid) / 1930.0;
    set(psf.xtrace, f, {x0[f] + fiber_dx[f], -5.5 * xn, -1.5 * xn, 0.3 * xn * xn * xn});
    set(psf.ytrace, f,
        {sy * (1964.0 + 117.0 * xn * xn) + bundle_dy[f / o.bundlesize],
         sy * (2098.0 + 8.0 * xn * xn), sy * 57.0, sy * 10.0, sy * 1.2, sy * -2.0});
  }

  int const npc = o.legdeg + 1;
  // Adds a parameter row and returns its index (references would not survive later rows).
  auto add = [&](std::string const& name) {
    psf.param_names.push_back(name);
    psf.params.push_back(make_set(npc));
    return psf.params.size() - 1;
  };
  std::size_t const isx = add("GHSIGX"), isy = add("GHSIGY");
  for (int f = 0; f < nf; ++f) {
    double const xn = (x0[f] - xmid) / 1930.0;
    set(psf.params[isx], f, {1.03 + 0.04 * xn * xn + 0.01 * fiber_ds[f], 0.03, 0.01, -0.003});
    set(psf.params[isy], f, {1.11 + 0.05 * xn * xn + 0.01 * fiber_ds[f], 0.07, 0.015, -0.005});
  }
  // GH-i-j in the real file's order (x degree fastest), varying from bundle to bundle.
  std::vector<double> b0(nb), b1(nb), b2(nb);
  for (int j = 0; j <= o.ghdegy; ++j)
    for (int i = 0; i <= o.ghdegx; ++i) {
      std::size_t const ip = add("GH-" + std::to_string(i) + "-" + std::to_string(j));
      if (i == 0 && j == 0) {
        for (int f = 0; f < nf; ++f) set(psf.params[ip], f, {1.0});
        continue;
      }
      double const base = gh_base(i, j);
      // Odd terms shift and skew the spot a little; odd-odd ones (GH-1-1, ...) tilt it.
      double const odd = ((i + j) % 2 == 1) ? 0.004 / (i + j) : (i % 2 == 1 ? 0.02 / (i + j) : 0.0);
      for (int b = 0; b < nb; ++b) {
        // One draw per statement: the order of evaluation within an expression is unspecified.
        double const r0 = rng.sym();
        double const r1 = rng.sym();
        double const r2 = rng.sym();
        double const r3 = rng.sym();
        double const r4 = rng.sym();
        b0[b] = base * (1.0 + 0.1 * r0) + odd * r1;
        b1[b] = 0.2 * base * r2 + 0.002 * r3 / (i + j);
        b2[b] = 0.001 * r4 / (i + j);
      }
      for (int f = 0; f < nf; ++f) {
        int const b = f / o.bundlesize;
        set(psf.params[ip], f, {b0[b], b1[b], b2[b]});
      }
    }
  // Tails (TAILAMP 0 by default, as in DESI r PSFs) and the bookkeeping rows specex writes.
  auto constant = [&](char const* name, auto value) {
    std::size_t const ip = add(name);
    for (int f = 0; f < nf; ++f) set(psf.params[ip], f, {value(f)});
  };
  constant("TAILAMP", [&](int) { return o.tailamp; });
  constant("TAILCORE", [](int) { return 1.0; });
  constant("TAILXSCA", [](int) { return 1.0; });
  constant("TAILYSCA", [](int) { return 1.0; });
  constant("TAILINDE", [](int) { return 2.0; });
  constant("BUNDLE", [&](int f) { return double((o.fibermin + f) / o.bundlesize); });
  constant("STATUS", [](int) { return 0.0; });
  constant("CONT", [](int) { return 0.0; });
  return psf;
}

}  // namespace kspecter::psf
