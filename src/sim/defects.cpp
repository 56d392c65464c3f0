// CCD defects (see defects.hpp). Sequential on the host: a few thousand short tracks.
#include <kspecter/core/error.hpp>
#include <kspecter/sim/defects.hpp>
#include <kspecter/sim/random.hpp>

#include <cmath>
#include <vector>

namespace kspecter::sim {

DefectSummary add_defects(std::uint64_t seed, int nx, int ny, float* image, float* ivar, int* mask,
                          DefectOptions const& opt) {
  if (nx <= 0 || ny <= 0) throw ParameterError("add_defects: empty image");
  if (opt.bad_columns < 0 || !(opt.cosmics_per_megapixel >= 0))
    throw ParameterError("add_defects: negative defect counts");
  DefectSummary sum;
  // Two sequences: columns and cosmics, so changing one count does not move the other.
  CounterRng cols(seed, stream::defects, 0);
  CounterRng rays(seed, stream::defects, 1);
  auto const at = [nx](int x, int y) { return std::size_t(y) * nx + x; };

  int ncol = 0;
  if (opt.bad_columns > 0) {
    ncol = static_cast<int>(std::lround(opt.bad_columns * nx / 4096.0));
    if (ncol < 1) ncol = 1;
  }
  std::vector<char> is_bad_col(nx, 0);
  for (int c = 0; c < ncol; ++c) {
    int const x = static_cast<int>(cols.uniform() * nx);
    bool const full = cols.uniform() < 0.5;
    int const ystart = full ? 0 : static_cast<int>(cols.uniform() * ny);
    double const offset = 200.0 + 1800.0 * cols.uniform();
    if (is_bad_col[x]) continue;
    is_bad_col[x] = 1;
    ++sum.bad_columns;
    for (int y = ystart; y < ny; ++y) {
      std::size_t const i = at(x, y);
      image[i] = static_cast<float>(image[i] + offset);
      ivar[i] = 0.0f;
      mask[i] |= maskbit::bad;
      ++sum.bad_pixels;
    }
  }

  std::vector<char> hit;
  long const nray = std::lround(opt.cosmics_per_megapixel * (double(nx) * ny) / 1e6);
  for (long r = 0; r < nray; ++r) {
    double const x0 = rays.uniform() * nx, y0 = rays.uniform() * ny;
    double const angle = rays.uniform() * 3.141592653589793;
    double const u = rays.uniform();
    int const length = 1 + static_cast<int>(29.0 * u * u);  // mostly short
    double const dx = std::cos(angle), dy = std::sin(angle);
    ++sum.cosmic_rays;
    int lastx = -1, lasty = -1;
    // Step half a pixel along the track; each pixel entered gets one deposit.
    for (int s = 0; s < 2 * length; ++s) {
      int const x = static_cast<int>(std::floor(x0 + 0.5 * s * dx));
      int const y = static_cast<int>(std::floor(y0 + 0.5 * s * dy));
      double const deposit = 500.0 + 4500.0 * rays.uniform();
      if (x == lastx && y == lasty) continue;
      lastx = x;
      lasty = y;
      if (x < 0 || x >= nx || y < 0 || y >= ny) continue;
      std::size_t const i = at(x, y);
      image[i] = static_cast<float>(image[i] + deposit);
      if (hit.empty()) hit.assign(std::size_t(nx) * ny, 0);
      if (!hit[i]) ++sum.cosmic_pixels;
      hit[i] = 1;
      if (opt.mask_cosmics) {
        mask[i] |= maskbit::cosmic;
        ivar[i] = 0.0f;
      }
    }
  }
  return sum;
}

}  // namespace kspecter::sim
