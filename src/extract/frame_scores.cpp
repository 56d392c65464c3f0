#include "median.hpp"
#include "pairwise_sum.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/extract/frame_scores.hpp>

#include <cctype>
#include <cmath>
#include <string>

namespace kspecter::extract {

namespace {

struct Tophat {
  double lo, hi;
  char const* text;  // as desispec prints it in the comments
};

Tophat tophat(char band) {
  switch (band) {
    case 'b': return {4000, 5800, "4000,5800A"};
    case 'z': return {7600, 9800, "7600,9800A"};
    default: return {5800, 7600, "5800,7600A"};
  }
}

// numpy.gradient of a 1-D array with unit spacing (edge_order 1).
std::vector<double> gradient(std::vector<double> const& w) {
  std::size_t const n = w.size();
  std::vector<double> g(n, 0.0);
  if (n < 2) return g;
  g[0] = w[1] - w[0];
  g[n - 1] = w[n - 1] - w[n - 2];
  for (std::size_t i = 1; i + 1 < n; ++i) g[i] = (w[i + 1] - w[i - 1]) / 2.0;
  return g;
}

// desispec's numpy.sum(flux[:, mask], axis=1), bit for bit. numpy lays the boolean-indexed
// copy out column-major, so with 2 or more spectra each sum runs bin by bin in order; one
// spectrum is contiguous, and numpy sums it pairwise.
double desispec_sum(std::vector<double> const& v, std::size_t nspec) {
  if (nspec == 1) return 0. + detail::numpy_sum(v.data(), v.size());
  double s = 0.;
  for (double x : v) s += x;
  return s;
}

}  // namespace

char score_band(std::vector<double> const& wave) {
  double sum = 0;
  for (double w : wave) sum += w;
  double const mean = wave.empty() ? 0 : sum / double(wave.size());
  if (mean <= 5800) return 'b';
  if (mean >= 7600) return 'z';
  return 'r';
}

bool scores_defined(std::vector<double> const& wave) {
  Tophat const t = tophat(score_band(wave));
  for (double w : wave)
    if (w >= t.lo && w < t.hi) return true;
  return false;
}

std::vector<ScoreColumn> frame_scores(std::vector<double> const& wave,
                                      std::vector<double> const& flux,
                                      std::vector<double> const& ivar, int nspec,
                                      std::string const& suffix) {
  std::size_t const nw = wave.size(), ns = std::size_t(std::max(nspec, 0));
  if (flux.size() != ns * nw || ivar.size() != ns * nw)
    throw ParameterError("frame_scores: flux and ivar must be [nspec][nwave]");
  char const band = score_band(wave);
  Tophat const t = tophat(band);
  std::vector<std::size_t> in;  // the bins in the tophat
  for (std::size_t j = 0; j < nw; ++j)
    if (wave[j] >= t.lo && wave[j] < t.hi) in.push_back(j);
  if (in.empty())
    throw ParameterError(std::string("frame_scores: no wavelength of the frame lies in the ") +
                         t.text + " tophat of camera " + band);
  std::vector<double> const dwave = gradient(wave);
  std::string const b(1, char(std::toupper(static_cast<unsigned char>(band))));
  std::string const mid = "_" + suffix + "_";
  std::vector<ScoreColumn> out = {
      {"SUM" + mid + "COUNT_" + b, std::string("sum counts in wave. range ") + t.text, {}},
      {"MEDIAN" + mid + "COUNT_" + b, std::string("median counts/A in wave. range ") + t.text, {}},
      {"MEDIAN" + mid + "SNR_" + b,
       std::string("median SNR/sqrt(A) in wave. range ") + t.text,
       {}}};
  std::vector<double> fluxes, counts, snr;
  for (std::size_t s = 0; s < ns; ++s) {
    fluxes.clear();
    counts.clear();
    snr.clear();
    for (std::size_t j : in) {
      double const f = flux[s * nw + j], v = std::max(ivar[s * nw + j], 0.0);
      fluxes.push_back(f);
      counts.push_back(f / dwave[j]);
      snr.push_back(std::sqrt(v) * f / std::sqrt(dwave[j]));
    }
    out[0].values.push_back(desispec_sum(fluxes, ns));
    out[1].values.push_back(detail::numpy_median(counts));
    out[2].values.push_back(detail::numpy_median(snr));
  }
  return out;
}

}  // namespace kspecter::extract
