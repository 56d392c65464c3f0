// The C++ side of perf/bench_python_overhead.py: one frame from a preproc file and a PSF file,
// extracted with the library's extract_frame from float64 arrays in memory (as Python hands
// them over), timed call by call after a warm-up; prints the median and the fastest.
// --interleave 1: each timed call waits for a line on stdin and prints "call SECONDS" at once,
// so that bench_python_overhead.py can alternate C++ and Python calls (on a shared machine the
// load then weighs on both alike).
//
//   bench_frame_call --image F --psf F -w WMIN,WMAX,DW [-s N] [-n N] [--bundlesize N]
//                    [--nsubbundles N] [--backend NAME] [--threads N] [--repeat N]
//                    [--interleave 1]
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/extract/backend.hpp>
#include <kspecter/io/preproc_file.hpp>
#include <kspecter/io/psf_file.hpp>
#include <kspecter/parallel/environment.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace kspecter;

int usage() {
  std::fprintf(stderr,
               "usage: bench_frame_call --image F --psf F -w WMIN,WMAX,DW [-s N] [-n N] "
               "[--bundlesize N] [--nsubbundles N] [--backend NAME] [--threads N] [--repeat N] "
               "[--interleave 1]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string image, psf_path, backend = "auto";
  extract::ExtractOptions opt;
  opt.bundlesize = 25;
  opt.nsubbundles = 5;
  int threads = -1, repeat = 5;
  bool grid = false, interleave = false;
  for (int i = 1; i < argc; ++i) {
    std::string const a = argv[i];
    if (i + 1 >= argc) return usage();
    char const* v = argv[++i];
    if (a == "--image")
      image = v;
    else if (a == "--psf")
      psf_path = v;
    else if (a == "-w")
      grid = std::sscanf(v, "%lf,%lf,%lf", &opt.wmin, &opt.wmax, &opt.dw) == 3;
    else if (a == "-s")
      opt.specmin = std::atoi(v);
    else if (a == "-n")
      opt.nspec = std::atoi(v);
    else if (a == "--bundlesize")
      opt.bundlesize = std::atoi(v);
    else if (a == "--nsubbundles")
      opt.nsubbundles = std::atoi(v);
    else if (a == "--backend")
      backend = v;
    else if (a == "--threads")
      threads = std::atoi(v);
    else if (a == "--repeat")
      repeat = std::max(1, std::atoi(v));
    else if (a == "--interleave")
      interleave = std::atoi(v) != 0;
    else
      return usage();
  }
  if (image.empty() || psf_path.empty() || !grid) return usage();

  parallel::EnvironmentOptions env_opt;
  env_opt.mpi = false;
  env_opt.num_threads = threads;
  parallel::Environment env(argc, argv, env_opt);
  {
    psf::GaussHermitePsf const psf = io::read_psf(psf_path);
    io::PreprocImage const img = io::read_preproc(image);
    // float64 row-major arrays, as kspecter.read_image gives them to Python.
    std::vector<double> const pix(img.image.begin(), img.image.end());
    std::vector<double> const ivar(img.ivar.begin(), img.ivar.end());
    auto const a = extract::ImageArray::host(pix.data(), img.ny, img.nx);
    auto const b = extract::ImageArray::host(ivar.data(), img.ny, img.nx);
    opt.validate(psf.nfiber);

    std::vector<double> seconds;
    for (int r = 0; r <= repeat; ++r) {  // the first call warms up
      if (interleave && r > 0 && std::fgetc(stdin) == EOF) break;
      Kokkos::fence();
      auto const t0 = std::chrono::steady_clock::now();
      extract::FrameResult const fr = extract::extract_frame(backend, psf, a, b, opt);
      Kokkos::fence();
      double const dt =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (r > 0) seconds.push_back(dt);
      if (r == 0)
        std::printf("frame: %d spectra x %d wavelengths, backend %s (%s)\n", fr.nspec, fr.nwave,
                    backend.c_str(), extract::backend_space_name(backend).c_str());
      if (interleave && r > 0) std::printf("call %.6f\n", dt);
      if (interleave) std::fflush(stdout);
    }
    if (seconds.empty()) return 1;
    std::sort(seconds.begin(), seconds.end());
    std::printf("C++ extract_frame: median %.4f s, fastest %.4f s over %d calls\n",
                seconds[seconds.size() / 2], seconds.front(), repeat);
  }
  return 0;
}
