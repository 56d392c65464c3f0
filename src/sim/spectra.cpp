// Default input spectra of the simulator (see spectra.hpp for what they contain).
#include <kspecter/core/error.hpp>
#include <kspecter/sim/random.hpp>
#include <kspecter/sim/spectra.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace kspecter::sim {

std::vector<double> bin_widths(std::vector<double> const& w) {
  std::size_t const n = w.size();
  std::vector<double> d(n, 1.0);
  if (n < 2) return d;
  d[0] = w[1] - w[0];
  d[n - 1] = w[n - 1] - w[n - 2];
  for (std::size_t i = 1; i + 1 < n; ++i) d[i] = 0.5 * (w[i + 1] - w[i - 1]);
  return d;
}

namespace {

constexpr double c_kms = 299792.458;

// Bin edges: midpoints between centres, the ends mirrored (consistent with bin_widths).
std::vector<double> bin_edges(std::vector<double> const& w) {
  std::size_t const n = w.size();
  std::vector<double> e(n + 1);
  if (n == 1) {
    e[0] = w[0] - 0.5;
    e[1] = w[0] + 0.5;
    return e;
  }
  for (std::size_t i = 1; i < n; ++i) e[i] = 0.5 * (w[i - 1] + w[i]);
  e[0] = w[0] - 0.5 * (w[1] - w[0]);
  e[n] = w[n - 1] + 0.5 * (w[n - 1] - w[n - 2]);
  return e;
}

struct Line {
  double wave, sigma, electrons;
};

// Adds a Gaussian line of `electrons` in total, integrated over each bin, as e/A.
void add_line(std::vector<double> const& edges, std::vector<double> const& widths, Line const& l,
              double scale, double* flux) {
  double const lo = l.wave - 8.0 * l.sigma, hi = l.wave + 8.0 * l.sigma;
  if (hi <= edges.front() || lo >= edges.back()) return;
  std::size_t const nbin = widths.size();
  std::size_t i = std::upper_bound(edges.begin(), edges.end(), lo) - edges.begin();
  i = i > 0 ? i - 1 : 0;
  double const s = 1.0 / (std::sqrt(2.0) * l.sigma);
  for (; i < nbin && edges[i] < hi; ++i) {
    double const frac =
        0.5 * (std::erf((edges[i + 1] - l.wave) * s) - std::erf((edges[i] - l.wave) * s));
    flux[i] += scale * l.electrons * frac / widths[i];
  }
}

// The night-sky emission lines, the same for every fiber of a seed, whatever the grid.
std::vector<Line> sky_lines(std::uint64_t seed, double line_scale) {
  double const sigma = 0.3;
  std::vector<Line> lines = {
      {5577.34, sigma, 12000.0}, {5889.95, sigma, 1500.0}, {5895.92, sigma, 1200.0},
      {6300.30, sigma, 4000.0},  {6363.78, sigma, 1300.0},
  };
  // OH Meinel bands: (centre, half width, strength); each band is a forest of Lambda doublets.
  struct Band {
    double centre, half_width, strength;
  };
  Band const bands[] = {{5270, 60, 0.10},  {5920, 90, 0.15},  {6290, 70, 0.45},  {6530, 100, 0.55},
                        {6890, 110, 0.75}, {7320, 120, 1.00}, {7640, 110, 0.80}, {7900, 130, 1.10},
                        {8400, 160, 1.40}, {8860, 170, 1.40}, {9400, 220, 0.90}, {9800, 160, 0.70}};
  CounterRng rng(seed, stream::spectra, ~std::uint64_t(0));
  for (Band const& b : bands) {
    for (int k = 0; k < 16; ++k) {
      double const centre = b.centre + b.half_width * (2.0 * rng.uniform() - 1.0);
      double const e = b.strength * 30.0 * std::pow(10.0, 2.4 * rng.uniform());  // 30..7500
      double const split = 1.0 + 2.5 * rng.uniform();                            // doublet, A
      lines.push_back({centre, sigma, e});
      lines.push_back({centre + split, sigma, e * (0.6 + 0.4 * rng.uniform())});
    }
  }
  for (auto& l : lines) l.electrons *= line_scale;
  return lines;
}

// Rest wavelengths (air, A) and strengths relative to the [O II] doublet.
struct RestLine {
  double wave, strength;
};
RestLine const emission_lines[] = {
    {3726.03, 0.45}, {3728.82, 0.55}, {4861.33, 0.35}, {4958.91, 0.20}, {5006.84, 0.60},
    {6548.05, 0.12}, {6562.80, 1.20}, {6583.45, 0.35}, {6716.44, 0.20}, {6730.82, 0.15},
};

}  // namespace

Spectra make_spectra(std::uint64_t seed, int specmin, int nspec,
                     std::vector<double> const& wavelength, SpectraOptions const& opt) {
  if (specmin < 0 || nspec <= 0)
    throw ParameterError("make_spectra: need specmin >= 0 and nspec > 0");
  if (wavelength.empty()) throw ParameterError("make_spectra: empty wavelength grid");
  for (std::size_t i = 0; i < wavelength.size(); ++i)
    if (!(wavelength[i] > 0) || !std::isfinite(wavelength[i]) ||
        (i > 0 && !(wavelength[i] > wavelength[i - 1])))
      throw ParameterError("make_spectra: wavelengths must be positive and increasing");

  Spectra s;
  s.specmin = specmin;
  s.nspec = nspec;
  s.wavelength = wavelength;
  std::size_t const nw = wavelength.size();
  s.flux.assign(std::size_t(nspec) * nw, 0.0);
  s.objtype.resize(nspec);

  std::vector<double> const widths = bin_widths(wavelength), edges = bin_edges(wavelength);
  // The sky, once: continuum plus lines.
  std::vector<double> sky(nw, 0.0);
  for (std::size_t i = 0; i < nw; ++i)
    sky[i] = opt.sky_continuum * std::pow(wavelength[i] / 6500.0, 0.5);
  for (Line const& l : sky_lines(seed, opt.sky_line_scale))
    add_line(edges, widths, l, 1.0, sky.data());

  std::vector<double> obj(nw);
  for (int f = 0; f < nspec; ++f) {
    int const fiber = specmin + f;
    // Every draw of this fiber, in a fixed order, from its own sequence.
    CounterRng rng(seed, stream::spectra, static_cast<std::uint64_t>(fiber));
    bool const is_sky = rng.uniform() < opt.sky_fraction;
    double const throughput = 1.0 + opt.throughput_scatter * (2.0 * rng.uniform() - 1.0);
    double const u_level = rng.uniform();
    double const level = opt.object_scale * 0.1 * std::pow(10.0, 3.3 * u_level * u_level);
    double const slope = -1.5 + 3.0 * rng.uniform();
    bool const has_lines = rng.uniform() < 0.5;
    double const z = 0.05 + 1.55 * rng.uniform();
    double const oii = opt.object_scale * std::pow(10.0, 1.7 + 1.6 * rng.uniform());  // 50..2000 e
    double const sigma_v = 50.0 + 100.0 * rng.uniform();
    double const oiii_boost = 0.2 + 1.8 * rng.uniform();

    std::fill(obj.begin(), obj.end(), 0.0);
    if (!is_sky) {
      for (std::size_t i = 0; i < nw; ++i) obj[i] = level * std::pow(wavelength[i] / 6500.0, slope);
      if (has_lines) {
        for (RestLine const& r : emission_lines) {
          double const w = r.wave * (1.0 + z);
          double const strength =
              (r.wave > 4950 && r.wave < 5010) ? r.strength * oiii_boost : r.strength;
          add_line(edges, widths, {w, w * sigma_v / c_kms, oii * strength}, 1.0, obj.data());
        }
      }
    }
    double* out = s.flux.data() + std::size_t(f) * nw;
    for (std::size_t i = 0; i < nw; ++i) out[i] = throughput * (sky[i] + obj[i]);
    s.objtype[f] = is_sky ? "SKY" : "TGT";
  }
  return s;
}

}  // namespace kspecter::sim
