#include <kspecter/psf/gauss_hermite_psf.hpp>
#include <kspecter/psf/legendre.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

namespace kspecter::psf {

double LegendreSet::value(int fiber, double wavelength) const {
  return legendre_sum(coeff.data() + std::size_t(fiber) * ncoef, ncoef,
                      legendre_u(wavelength, wavemin, wavemax));
}

int GaussHermitePsf::param_index(std::string const& name) const {
  for (std::size_t i = 0; i < param_names.size(); ++i)
    if (param_names[i] == name) return static_cast<int>(i);
  return -1;
}

int GaussHermitePsf::gh_index(int i, int j) const {
  return param_index("GH-" + std::to_string(i) + "-" + std::to_string(j));
}

double GaussHermitePsf::wavemin() const {
  double w = std::max(xtrace.wavemin, ytrace.wavemin);
  for (auto const& p : params) w = std::max(w, p.wavemin);
  return w;
}

double GaussHermitePsf::wavemax() const {
  double w = std::min(xtrace.wavemax, ytrace.wavemax);
  for (auto const& p : params) w = std::min(w, p.wavemax);
  return w;
}

bool GaussHermitePsf::has_tails() const {
  int const i = param_index("TAILAMP");
  if (i < 0) return false;
  for (double c : params[i].coeff)
    if (c != 0.0) return true;
  return false;
}

namespace {

std::string check_set(LegendreSet const& s, std::string const& what, int nfiber) {
  std::ostringstream o;
  if (s.nfiber != nfiber)
    o << what << " has " << s.nfiber << " fibers, expected " << nfiber;
  else if (s.ncoef < 1)
    o << what << " has no Legendre coefficients";
  else if (s.coeff.size() != std::size_t(s.nfiber) * s.ncoef)
    o << what << " holds " << s.coeff.size() << " coefficients, expected " << s.nfiber << " x "
      << s.ncoef;
  else if (!(std::isfinite(s.wavemin) && std::isfinite(s.wavemax) && s.wavemin < s.wavemax))
    o << what << " has an invalid wavelength range [" << s.wavemin << ", " << s.wavemax << "]";
  else {
    for (std::size_t i = 0; i < s.coeff.size(); ++i)
      if (!std::isfinite(s.coeff[i])) {
        o << what << " coefficient " << i % s.ncoef << " of fiber " << i / s.ncoef
          << " is not finite";
        break;
      }
  }
  return o.str();
}

}  // namespace

std::string check_psf(GaussHermitePsf const& psf) {
  std::ostringstream o;
  if (psf.nfiber < 1) return "no fibers";
  if (psf.hsizex < 0 || psf.hsizey < 0 || psf.hsizex > max_half_size ||
      psf.hsizey > max_half_size) {
    o << "spot half sizes HSIZEX " << psf.hsizex << ", HSIZEY " << psf.hsizey << " are outside [0, "
      << max_half_size << "]";
    return o.str();
  }
  if (psf.ghdegx < 0 || psf.ghdegy < 0 || psf.ghdegx > max_gh_degree ||
      psf.ghdegy > max_gh_degree) {
    o << "Gauss-Hermite degrees GHDEGX " << psf.ghdegx << ", GHDEGY " << psf.ghdegy
      << " are outside [0, " << max_gh_degree << "]";
    return o.str();
  }
  if (auto e = check_set(psf.xtrace, "XTRACE", psf.nfiber); !e.empty()) return e;
  if (auto e = check_set(psf.ytrace, "YTRACE", psf.nfiber); !e.empty()) return e;
  if (psf.params.empty() || psf.params.size() != psf.param_names.size())
    return "the PSF table has " + std::to_string(psf.params.size()) + " parameters and " +
           std::to_string(psf.param_names.size()) + " names";
  std::set<std::string> seen;
  for (std::size_t i = 0; i < psf.params.size(); ++i) {
    auto const& name = psf.param_names[i];
    if (!seen.insert(name).second) return "parameter " + name + " appears twice";
    if (auto e = check_set(psf.params[i], "parameter " + name, psf.nfiber); !e.empty()) return e;
    if (psf.params[i].ncoef != psf.params[0].ncoef ||
        psf.params[i].wavemin != psf.params[0].wavemin ||
        psf.params[i].wavemax != psf.params[0].wavemax)
      return "parameter " + name + " has a Legendre degree or range unlike " + psf.param_names[0] +
             "'s";
    // GH-i-j beyond the declared degrees: the file contradicts itself.
    int gi = 0, gj = 0;
    char tail = 0;
    if (name.rfind("GH-", 0) == 0) {
      if (std::sscanf(name.c_str(), "GH-%d-%d%c", &gi, &gj, &tail) != 2 || gi < 0 || gj < 0)
        return "parameter name " + name + " is not of the form GH-i-j";
      if (gi > psf.ghdegx || gj > psf.ghdegy) {
        o << "parameter " << name << " exceeds the Gauss-Hermite degrees GHDEGX " << psf.ghdegx
          << ", GHDEGY " << psf.ghdegy;
        return o.str();
      }
    }
  }
  for (char const* n : {"GHSIGX", "GHSIGY"})
    if (psf.param_index(n) < 0) return std::string("parameter ") + n + " is missing";
  for (int i = 0; i <= psf.ghdegx; ++i)
    for (int j = 0; j <= psf.ghdegy; ++j)
      if (psf.gh_index(i, j) < 0) {
        o << "parameter GH-" << i << "-" << j << " is missing (GHDEGX " << psf.ghdegx << ", GHDEGY "
          << psf.ghdegy << ")";
        return o.str();
      }
  if (!(psf.wavemin() < psf.wavemax())) {
    o << "the XTRACE, YTRACE and PSF wavelength ranges do not overlap";
    return o.str();
  }
  // Spot widths must be positive over the whole range (a sampled check: 33 points).
  double const w0 = psf.wavemin(), w1 = psf.wavemax();
  for (char const* n : {"GHSIGX", "GHSIGY"}) {
    auto const& s = psf.params[psf.param_index(n)];
    for (int f = 0; f < psf.nfiber; ++f)
      for (int k = 0; k <= 32; ++k) {
        double const w = w0 + (w1 - w0) * k / 32.0;
        double const v = s.value(f, w);
        if (!(v > 0.0)) {
          o << "parameter " << n << " is " << v << " (not positive) for fiber " << f << " at " << w
            << " A";
          return o.str();
        }
      }
  }
  if (psf.param_index("TAILAMP") >= 0)
    for (char const* n : {"TAILCORE", "TAILXSCA", "TAILYSCA", "TAILINDE"})
      if (psf.param_index(n) < 0)
        return std::string("TAILAMP is present but parameter ") + n + " is missing";
  return {};
}

}  // namespace kspecter::psf
