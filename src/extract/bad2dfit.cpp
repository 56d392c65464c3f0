#include "median.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/extract/bad2dfit.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/extract/mask_bits.hpp>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>

namespace kspecter::extract {

std::vector<std::uint8_t> chi2pix_bad2dfit(std::vector<double> const& chi2pix, int nspec, int nwave,
                                           double scale) {
  std::size_t const ns = std::size_t(std::max(nspec, 0)), nw = std::size_t(std::max(nwave, 0));
  if (chi2pix.size() != ns * nw)
    throw ParameterError("chi2pix_bad2dfit: " + std::to_string(chi2pix.size()) + " values for " +
                         std::to_string(ns) + " x " + std::to_string(nw));
  // numpy.median(chi2pix, axis=0) and (axis=1): a selection per wavelength and per fiber,
  // shared by a few threads, since a single frame's write waits for them (their cost is in
  // perf/gpu_runs.md, issue 35).
  std::vector<double> per_wave(nw), per_fiber(ns);
  std::size_t const tasks = nw + ns;
  auto median_of = [&](std::size_t k, std::vector<double>& tmp) {
    if (k < nw) {
      tmp.resize(ns);
      for (std::size_t s = 0; s < ns; ++s) tmp[s] = chi2pix[s * nw + k];
      per_wave[k] = detail::numpy_median(tmp);
    } else {
      std::size_t const s = k - nw;
      tmp.assign(chi2pix.begin() + long(s * nw), chi2pix.begin() + long((s + 1) * nw));
      per_fiber[s] = detail::numpy_median(tmp);
    }
  };
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    std::vector<double> tmp;
    for (std::size_t k; (k = next.fetch_add(1)) < tasks;) median_of(k, tmp);
  };
  std::size_t const nthreads =
      tasks < 1000 ? 1 : std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 4);
  std::vector<std::thread> helpers;
  for (std::size_t t = 1; t < nthreads; ++t) helpers.emplace_back(work);
  work();
  for (auto& t : helpers) t.join();
  std::vector<std::uint8_t> bad(ns * nw, 0);
  for (std::size_t s = 0; s < ns; ++s)
    for (std::size_t w = 0; w < nw; ++w) {
      double const c = chi2pix[s * nw + w];
      bad[s * nw + w] = c > scale * per_wave[w] && c > scale * per_fiber[s];
    }
  return bad;
}

long long apply_bad2dfit(FrameResult& frame, double scale) {
  auto const bad = chi2pix_bad2dfit(frame.chi2pix, frame.nspec, frame.nwave, scale);
  if (frame.mask.size() != bad.size())
    throw ParameterError("apply_bad2dfit: the mask has " + std::to_string(frame.mask.size()) +
                         " bins, chi2pix " + std::to_string(bad.size()));
  long long n = 0;
  for (std::size_t i = 0; i < bad.size(); ++i)
    if (bad[i]) {
      frame.mask[i] |= specmask::BAD2DFIT;
      ++n;
    }
  return n;
}

}  // namespace kspecter::extract
