// Writing a full-size frame (io::write_frame, FITS as desispec reads it) from memory: a
// 500 x 2326 frame of random values with 11 resolution diagonals, written --reps times into
// a folder (default: the system's temporary folder), best and median wall time, and the file
// size. The CLI's last step on one frame.
//
//   bench_write_frame [--nspec 500] [--nwave 2326] [--reps 5] [--dir DIR] [--gz]
#include <kspecter/io/frame_file.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  int nspec = 500, nwave = 2326, reps = 5;
  std::string dir = std::filesystem::temp_directory_path().string();
  bool gz = false;
  for (int i = 1; i < argc; ++i) {
    std::string const k = argv[i];
    if (k == "--gz") {
      gz = true;
    } else if (i + 1 < argc && (k == "--nspec" || k == "--nwave" || k == "--reps")) {
      int const v = std::atoi(argv[++i]);
      (k == "--nspec" ? nspec : k == "--nwave" ? nwave : reps) = v;
    } else if (i + 1 < argc && k == "--dir") {
      dir = argv[++i];
    } else {
      std::fprintf(
          stderr, "usage: bench_write_frame [--nspec N] [--nwave N] [--reps N] [--dir D] [--gz]\n");
      return 2;
    }
  }
  kspecter::io::FrameData f;
  f.nspec = nspec;
  f.nwave = nwave;
  f.ndiag = 5;
  std::size_t const n = std::size_t(nspec) * nwave;
  std::mt19937 rng(1);
  std::normal_distribution<float> g(100.f, 10.f);
  for (int w = 0; w < nwave; ++w) f.wavelength.push_back(5760.0 + 0.8 * w);
  f.flux.resize(n);
  f.ivar.resize(n);
  f.chi2pix.resize(n);
  f.mask.assign(n, 0u);
  f.resolution.resize(n * 11);
  for (auto* v : {&f.flux, &f.ivar, &f.chi2pix, &f.resolution})
    for (float& x : *v) x = g(rng);
  std::string const path = dir + "/bench-write-frame.fits" + (gz ? ".gz" : "");
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto const t0 = std::chrono::steady_clock::now();
    kspecter::io::write_frame(path, f);
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  auto const size = std::filesystem::file_size(path);
  std::filesystem::remove(path);
  std::vector<double> s = t;
  std::sort(s.begin(), s.end());
  std::printf(
      "bench_write_frame: %d x %d (%.1f MiB written%s): best %.4f s, median %.4f s; all:", nspec,
      nwave, double(size) / (1 << 20), gz ? ", gzip" : "", s.front(), s[s.size() / 2]);
  for (double x : t) std::printf(" %.4f", x);
  std::printf("\n");
  return 0;
}
