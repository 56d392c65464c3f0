// Full-frame `kspecter simulate`, timed per stage (spectra, spots, projection, noise, write)
// on every enabled backend. Prints a table; asserts nothing.
//
//   bench_simulate [PSF|synthetic] [--nspec N] [--repeat N] [--backends serial,openmp,device]
//
// PSF defaults to ../shared/data/psf-r0-00067784.fits (the real DESI r0 PSF) when present,
// else the built-in synthetic PSF. The r-camera grid 5760-7620 A, dw 0.8 (2326 bins).
// Only the host backends give the bits `kspecter simulate` writes (see sim/simulate.hpp);
// the device row is there to show what the kernels cost on a GPU.
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/core/profiling.hpp>
#include <kspecter/io/preproc_file.hpp>
#include <kspecter/io/psf_file.hpp>
#include <kspecter/psf/synthetic_psf.hpp>
#include <kspecter/sim/simulate.hpp>

#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Row {
  std::string backend;
  int concurrency;
  double spectra, spots, project, noise, write, total;
};

template <class Space>
Row run_backend(char const* name, kspecter::psf::GaussHermitePsf const& psf,
                kspecter::sim::Spectra const& spectra, double spectra_seconds, int repeat,
                std::string const& out_path) {
  Row best{name, Space().concurrency(), spectra_seconds, 1e30, 1e30, 1e30, 1e30, 1e30};
  for (int r = 0; r < repeat; ++r) {
    kspecter::StageTimes times;
    kspecter::sim::SimulateOptions o;
    o.seed = 1;
    auto const t0 = Clock::now();
    kspecter::sim::SimulatedImage s = kspecter::sim::simulate(Space(), psf, spectra, o, &times);
    double write = 0;
    if (!out_path.empty()) {
      auto const tw = Clock::now();
      kspecter::io::PreprocImage img;
      img.nx = s.nx;
      img.ny = s.ny;
      img.image = std::move(s.image);
      img.ivar = std::move(s.ivar);
      img.mask = std::move(s.mask);
      kspecter::io::TruthSpectra t;
      t.specmin = spectra.specmin;
      t.nspec = spectra.nspec;
      t.wavelength = spectra.wavelength;
      t.flux = spectra.flux;
      t.objtype = spectra.objtype;
      img.header.set_integer("SIMSEED", 1);
      kspecter::io::write_preproc(out_path, img, &t);
      write = since(tw);
    }
    double const total = since(t0) + spectra_seconds;
    double spots = 0, project = 0, noise = 0;
    for (auto const& e : times.entries()) {
      if (e.stage == "kspecter::sim::spots") spots = e.seconds;
      if (e.stage == "kspecter::sim::project") project = e.seconds;
      if (e.stage == "kspecter::sim::noise") noise = e.seconds;
    }
    if (total < best.total)
      best = {name, Space().concurrency(), spectra_seconds, spots, project, noise, write, total};
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::string psf_path = std::string(KSPECTER_SOURCE_DIR) + "/../shared/data/psf-r0-00067784.fits";
  if (!std::filesystem::exists(psf_path)) psf_path = "synthetic";
  int nspec = -1, repeat = 2;
  std::string backends = "serial,openmp,device";
  for (int i = 1; i < argc; ++i) {
    std::string const a = argv[i];
    if (a == "--nspec" && i + 1 < argc)
      nspec = std::atoi(argv[++i]);
    else if (a == "--repeat" && i + 1 < argc)
      repeat = std::atoi(argv[++i]);
    else if (a == "--backends" && i + 1 < argc)
      backends = argv[++i];
    else if (a == "-h" || a == "--help") {
      std::printf(
          "usage: bench_simulate [PSF|synthetic] [--nspec N] [--repeat N] "
          "[--backends serial,openmp,device]\n");
      return 0;
    } else
      psf_path = a;
  }
  kspecter::compat::initialize({});
  int rc = 0;
  {
    auto const psf = psf_path == "synthetic" ? kspecter::psf::make_synthetic_psf()
                                             : kspecter::io::read_psf(psf_path);
    if (nspec <= 0 || nspec > psf.nfiber) nspec = psf.nfiber;
    auto const grid = kspecter::sim::wavelength_grid(5760, 7620, 0.8);
    auto const ts = Clock::now();
    auto const spectra = kspecter::sim::make_spectra(1, 0, nspec, grid);
    double const spectra_seconds = since(ts);
    std::string const out = (std::filesystem::temp_directory_path() /
                             ("bench_simulate." + std::to_string(::getpid()) + ".fits"))
                                .string();

    std::printf(
        "bench_simulate: PSF %s, %d fibers x %zu wavelengths (r camera), CCD %d x %d, "
        "spots %d x %d, best of %d\n",
        psf_path.c_str(), nspec, grid.size(), psf.npix_y, psf.npix_x, psf.spot_ny(), psf.spot_nx(),
        repeat);
    std::vector<Row> rows;
    auto wants = [&](char const* b) { return backends.find(b) != std::string::npos; };
#ifdef KOKKOS_ENABLE_SERIAL
    if (wants("serial"))
      rows.push_back(
          run_backend<Kokkos::Serial>("Serial", psf, spectra, spectra_seconds, repeat, out));
#endif
#ifdef KOKKOS_ENABLE_OPENMP
    if (wants("openmp"))
      rows.push_back(
          run_backend<Kokkos::OpenMP>("OpenMP", psf, spectra, spectra_seconds, repeat, out));
#endif
    if (wants("device") &&
        !std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>::value)
      rows.push_back(run_backend<Kokkos::DefaultExecutionSpace>(
          Kokkos::DefaultExecutionSpace::name(), psf, spectra, spectra_seconds, repeat, out));
    std::filesystem::remove(out);

    double const nspot = double(nspec) * grid.size();
    double const npix = double(psf.npix_x) * psf.npix_y;
    std::printf("\n%-8s %7s %9s %9s %9s %9s %9s %9s %12s %12s\n", "backend", "threads", "spectra",
                "spots", "project", "noise", "write", "total", "Mspots/s", "Mpix/s noise");
    for (auto const& r : rows)
      std::printf("%-8s %7d %8.3fs %8.3fs %8.3fs %8.3fs %8.3fs %8.3fs %12.2f %12.1f\n",
                  r.backend.c_str(), r.concurrency, r.spectra, r.spots, r.project, r.noise, r.write,
                  r.total, nspot / r.spots / 1e6, npix / r.noise / 1e6);
    std::printf(
        "\n(spots includes copying the PSF to the backend; total = all stages, the write "
        "of a %.0f MB file included; target: total <= 10 s on 2 CPU cores)\n",
        npix * 12 / 1e6);
    if (rows.empty()) rc = 1;
  }
  Kokkos::finalize();
  return rc;
}
