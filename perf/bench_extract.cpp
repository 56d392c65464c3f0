// Extraction of a DESI r frame (500 fibers x 2326 bins of 5760-7620 A by 0.8 A, DESI defaults:
// bundles of 25 in 5 subbundles, 50-bin patches with 12 bins of padding) from the real r0 PSF
// when ../shared/data has it, else from the synthetic PSF. The image is simulated in memory
// (sim::simulate_on_host, Poisson + read noise); extraction runs on the chosen backend and
// prints per-stage times, flop counts and GFLOP/s, the peak device memory extract_frame held
// and spectra per second, next to the gpu_specter reference numbers of issue 4.
//
//   bench_extract [--nbundles N] [--psf FILE|synthetic] [--backend NAME] [--threads N]
//                 [--repeat N] [--warmup 0|1] [--budget GiB] [--device D] [--kernels]
//                 [--solver band|dense] [--keep-buffers 0|1] [--allocations]
//                 [--stage-times 0|1] [--model 0|1] [--reuse 0|1] [--device-outputs 0|1]
//
// --model 1: the model image too (ExtractOptions::model, as -m and the Extractor make it).
// --reuse 1: the frames keep their buffers and solve for the next (ExtractHooks::reuse_factor,
// as the Extractor's repeats): after the first, each frame takes the kept factor's path (with
// the budget big enough for one batch: --budget 64).
// --device-outputs 1: the frame's arrays stay in the backend's memory (ExtractHooks::outputs,
// as the Extractor's results from cupy images): no copy to the host; the digest below reads
// them back after the timed runs.
// --kernels: one more extraction with every kernel fenced and timed (perf/kernel_timer.hpp).
// --stage-times 0: the timed frames without per-stage times (extract_frame then fences only
// where the host needs the device's numbers, not around every stage; the wall time alone).
// --allocations: one more extraction with every device allocation and free listed, with the
// stage it fell in and the time since the event before (perf/alloc_trace.hpp).
// --keep-buffers 1: the frames share one extract::KeptBuffers, as the frames of
// `kspecter extract --batch` do (each frame takes the device buffers the one before left);
// 0 (the default): each frame allocates and frees its own.
// Defaults: every bundle on a GPU backend, 1 bundle on a host backend (--nbundles 20 for the
// full frame). Targets: <= 10 s per bundle on 2 CPU cores, <= 1 s per frame on an H200.
// Flop counts: spots 2 ngx (ngy ny + ny nx) per spot (separable Gauss-Hermite sum);
// assembly 3 per pixel product of iCov (a w b + acc) and of y, fluxweight (counted by the
// kernels); factorisation n^3/3 + 2 n^2 per patch (Cholesky + solve); covariance n^3/3 +
// sum_k 2 m^2 (n - k m) (triangular inverse + Gram products); decorrelation 9 m^3 + 2 m^3 per
// core block (eigensolver with vectors + composing Q, nominal) + 2 m^2 per core bin; quality
// 2 per pixel product of the model / chi2pix / pixmask sums (counted).
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/core/profiling.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/io/psf_file.hpp>
#include <kspecter/psf/synthetic_psf.hpp>
#include <kspecter/sim/simulate.hpp>
#include <kspecter/sim/spectra.hpp>

#include <Kokkos_Core.hpp>

#include "alloc_trace.hpp"
#include "kernel_timer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <time.h>
#include <unistd.h>

namespace {

using namespace kspecter;

struct Args {
  std::string psf;  // "": the real r0 PSF when present, else synthetic
  int nbundles = -1;
  std::string backend;  // "": Kokkos::DefaultExecutionSpace
  int threads = -1;
  int device = -1;
  int repeat = 1;
  int warmup = -1;  // -1: on for GPUs, off for host backends
  double budget_gib = 4;
  bool kernels = false;         // one more run, each kernel fenced and timed (kernel_timer.hpp)
  std::string solver = "band";  // ExtractOptions::band_solve
  bool keep_buffers = false;    // ExtractHooks::buffers
  bool model = false;           // ExtractOptions::model
  bool allocations = false;     // --allocations
  bool stage_times = true;      // --stage-times
  bool reuse = false;           // --reuse: ExtractHooks::reuse_factor, buffers kept
  bool device_outputs = false;  // --device-outputs: ExtractHooks::outputs
};

// The frame's arrays in the backend's memory (ExtractHooks::outputs).
template <class Mem>
struct OutputViews {
  using D = Kokkos::View<double*, Mem>;
  D flux, ivar, resolution, chi2pix, pixmask, deconvolved, model;
  Kokkos::View<std::uint32_t*, Mem> mask;
  OutputViews(std::size_t spectra, int ndiag, std::size_t pixels)
      : flux("bench::flux", spectra),
        ivar("bench::ivar", spectra),
        resolution("bench::resolution", spectra * std::size_t(2 * ndiag + 1)),
        chi2pix("bench::chi2pix", spectra),
        pixmask("bench::pixmask", spectra),
        deconvolved("bench::deconvolved", spectra),
        model("bench::model", pixels),
        mask("bench::mask", spectra) {}
  kspecter::extract::FrameOutputs outputs() const {
    kspecter::extract::FrameOutputs o;
    o.flux = flux.data(), o.ivar = ivar.data(), o.resolution = resolution.data();
    o.chi2pix = chi2pix.data(), o.pixmask_fraction = pixmask.data();
    o.deconvolved_flux = deconvolved.data(), o.model = model.data(), o.mask = mask.data();
    return o;
  }
  // Their values into the result's vectors (for the digest).
  void to(kspecter::extract::FrameResult& r) const {
    auto get = [](auto const& v, auto& dst) {
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
      dst.assign(h.data(), h.data() + h.size());
    };
    get(flux, r.flux), get(ivar, r.ivar), get(resolution, r.resolution), get(chi2pix, r.chi2pix);
    get(pixmask, r.pixmask_fraction), get(deconvolved, r.deconvolved_flux), get(mask, r.mask);
    if (model.size() > 0) get(model, r.model);
  }
};

int usage() {
  std::fprintf(
      stderr,
      "usage: bench_extract [--nbundles N] [--psf FILE|synthetic] [--backend serial|openmp|cuda] "
      "[--threads N] [--device D] [--repeat N] [--warmup 0|1] [--budget GiB] [--kernels] [--solver "
      "band|dense] [--keep-buffers 0|1] [--allocations] [--stage-times 0|1] [--model 0|1] "
      "[--reuse 0|1] [--device-outputs 0|1]\n");
  return 2;
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// `perf record --control fd:CTL,ACK -D -1` with KSPECTER_PERF_CTL_FD=CTL (and
// KSPECTER_PERF_ACK_FD=ACK) samples the timed extractions only, not the simulation.
void perf_control(char const* what) {
  static int const ctl = [] {
    char const* e = std::getenv("KSPECTER_PERF_CTL_FD");
    return e ? std::atoi(e) : -1;
  }();
  static int const ack = [] {
    char const* e = std::getenv("KSPECTER_PERF_ACK_FD");
    return e ? std::atoi(e) : -1;
  }();
  if (ctl < 0) return;
  std::string const msg = std::string(what) + "\n";
  if (write(ctl, msg.data(), msg.size()) < 0) return;
  char buf[8];
  if (ack >= 0 && read(ack, buf, sizeof buf) < 0) return;
}

struct Work {
  double spots = 0, assembly = 0, factorisation = 0, covariance = 0, decorrelation = 0, quality = 0;
};

Work flop_model(psf::GaussHermitePsf const& p, extract::FrameResult const& r,
                extract::ExtractOptions const& o) {
  Work w;
  double const n = r.stats.n, m = r.stats.block;
  double const npatch = r.stats.npatch;
  int const ncore = o.bundlesize / o.nsubbundles;
  double const nslots = n / m;
  double const ngx = p.ghdegx + 1, ngy = p.ghdegy + 1, ny = p.spot_ny(), nx = p.spot_nx();
  w.spots = double(r.stats.nspots) * 2 * ngx * (ngy * ny + ny * nx);
  w.assembly = 3.0 * double(r.stats.assembly_macs);
  w.factorisation = npatch * (n * n * n / 3 + 2 * n * n);
  double gram = 0;
  for (int k = 0; k < int(nslots); ++k) gram += 2 * m * m * (n - k * m);
  w.covariance = npatch * (n * n * n / 3 + gram);
  w.decorrelation = npatch * ncore * (11 * m * m * m + 2 * m * m * o.nwavestep);
  w.quality = 2.0 * double(r.stats.quality_macs);
  return w;
}

template <class Space>
void run(char const* name, psf::GaussHermitePsf const& p, std::vector<float> const& image,
         std::vector<float> const& ivar, extract::ExtractOptions const& opt, Args const& a,
         bool real_psf) {
  using mem = typename Space::memory_space;
  constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, mem>::accessible;
  Space space;
  int const ny = p.npix_y, nx = p.npix_x;
  Kokkos::View<double**, Kokkos::LayoutRight, mem> dimg("bench::image", ny, nx),
      divar("bench::ivar", ny, nx);
  {
    auto hi = Kokkos::create_mirror_view(dimg);
    auto hv = Kokkos::create_mirror_view(divar);
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        hi(y, x) = image[std::size_t(y) * nx + x];
        hv(y, x) = ivar[std::size_t(y) * nx + x];
      }
    Kokkos::deep_copy(dimg, hi);
    Kokkos::deep_copy(divar, hv);
  }
  int const warmup = a.warmup >= 0 ? a.warmup : (host ? 0 : 1);
  extract::KeptBuffers kept;
  extract::ExtractHooks hooks;
  if (a.keep_buffers || a.reuse) hooks.buffers = &kept;
  hooks.reuse_factor = a.reuse;
  std::optional<OutputViews<mem>> device_out;
  kspecter::extract::FrameOutputs outputs;
  if (a.device_outputs) {
    std::size_t const nwave = sim::wavelength_grid(opt.wmin, opt.wmax, opt.dw).size();
    device_out.emplace(std::size_t(opt.nspec) * nwave, p.hsizey, std::size_t(ny) * nx);
    outputs = device_out->outputs();
    hooks.outputs = &outputs;
  }
  for (int i = 0; i < warmup; ++i)
    extract::extract_frame(space, p, dimg, divar, opt, nullptr, hooks);

  std::vector<double> totals, cpus;
  StageTimes best_times;
  extract::FrameResult res;
  double best = 1e300;
  for (int r = 0; r < std::max(1, a.repeat); ++r) {
    StageTimes times;
    space.fence();
    perf_control("enable");
    double const c0 = process_cpu_seconds();
    double const t0 = now();
    res =
        extract::extract_frame(space, p, dimg, divar, opt, a.stage_times ? &times : nullptr, hooks);
    space.fence();
    double const t = now() - t0;
    perf_control("disable");
    totals.push_back(t);
    cpus.push_back(process_cpu_seconds() - c0);
    if (t < best) {
      best = t;
      best_times = times;
    }
  }

  if (device_out) device_out->to(res);
  if (a.kernels) {  // after the timed runs, so that its fences do not touch their times
    bench::KernelTimer kt;
    space.fence();
    kt.start();
    extract::extract_frame(space, p, dimg, divar, opt, nullptr, hooks);
    space.fence();
    kt.stop();
    kt.print(1, host ? space.concurrency() : 1);
  }
  if (a.allocations) {  // also after the timed runs: the callbacks cost host time
    bench::AllocTrace at;
    space.fence();
    at.start();
    extract::extract_frame(space, p, dimg, divar, opt, nullptr, hooks);
    space.fence();
    at.stop();
    at.print(host);
  }

  Work const w = flop_model(p, res, opt);
  std::map<std::string, double> flops = {{"kspecter::extract::spots", w.spots},
                                         {"kspecter::extract::assembly", w.assembly},
                                         {"kspecter::extract::factorisation", w.factorisation},
                                         {"kspecter::extract::covariance", w.covariance},
                                         {"kspecter::extract::decorrelation", w.decorrelation},
                                         {"kspecter::extract::quality", w.quality}};
  int const nbund = (res.nspec + opt.bundlesize - 1) / opt.bundlesize;
  std::printf(
      "\n== %s (concurrency %d), %s PSF, %d spectra x %d bins (%d bundles), %d patches of n = %d "
      "in %d batch(es), %s solver, device buffers %s%s%s\n",
      name, space.concurrency(), real_psf ? "real r0" : "synthetic", res.nspec, res.nwave, nbund,
      res.stats.npatch, res.stats.n, res.stats.nbatch, opt.band_solve ? "band" : "dense",
      a.keep_buffers || a.reuse ? "kept from frame to frame" : "a frame's own",
      res.stats.reused_factor ? ", the kept factor reused (a repeat)" : "",
      a.stage_times ? "" : ", no stage times (no fences between stages)");
  std::printf("%-34s %10s %12s %10s\n", "stage", "time [s]", "GFLOP", "GFLOP/s");
  double sum = 0, fsum = 0;
  for (auto const& e : best_times.entries()) {
    auto it = flops.find(e.stage);
    double const f = it == flops.end() ? 0 : it->second;
    sum += e.seconds;
    fsum += f;
    if (f > 0)
      std::printf("%-34s %10.4f %12.2f %10.1f\n", e.stage.c_str(), e.seconds, f * 1e-9,
                  f * 1e-9 / e.seconds);
    else
      std::printf("%-34s %10.4f %12s %10s\n", e.stage.c_str(), e.seconds, "-", "-");
  }
  if (sum > 0)
    std::printf("%-34s %10.4f %12.2f %10.1f\n", "sum of stages", sum, fsum * 1e-9,
                fsum * 1e-9 / sum);
  std::printf("%-34s %10.4f   (best of %d; all:", "extract_frame wall", best, int(totals.size()));
  for (double t : totals) std::printf(" %.4f", t);
  std::printf(")\n");
  if (host) {  // on a shared machine, CPU time / threads estimates the wall time on idle cores
    std::printf("%-34s %10.4f   (process CPU time / %d threads; all:", "extract_frame cpu/threads",
                *std::min_element(cpus.begin(), cpus.end()) / space.concurrency(),
                space.concurrency());
    for (double c : cpus) std::printf(" %.4f", c / space.concurrency());
    std::printf(")\n");
  }
  double const img_bytes = 2.0 * double(ny) * nx * sizeof(double);
  std::printf(
      "peak device memory: %.1f MiB held by extract_frame, the inverse square root's workspace "
      "included (+ %.1f MiB input image/ivar; the PSF's tables not counted)\n",
      double(res.stats.peak_device_bytes) / (1 << 20), img_bytes / (1 << 20));
  std::printf(
      "throughput: %.1f spectra/s, %.3f s per bundle, %.3f s per 500-fiber frame (extrapolated)\n",
      res.nspec / best, best / nbund, best / res.nspec * 500);
  std::printf(
      "failed patches: %d; work: %lld spots, %.3g assembly and %.3g quality pixel products\n",
      res.stats.nfailed, res.stats.nspots, double(res.stats.assembly_macs),
      double(res.stats.quality_macs));
  // A sanity figure: median chi2pix and the fraction of bins with ivar > 0.
  std::vector<double> c2;
  long good = 0;
  for (std::size_t i = 0; i < res.ivar.size(); ++i)
    if (res.ivar[i] > 0) {
      ++good;
      c2.push_back(res.chi2pix[i]);
    }
  std::nth_element(c2.begin(), c2.begin() + long(c2.size() / 2), c2.end());
  std::printf("bins with ivar > 0: %.2f %%, median chi2pix %.3f\n",
              100.0 * good / double(res.ivar.size()), c2.empty() ? 0.0 : c2[c2.size() / 2]);
  // The frame's bytes in one number (FNV-1a), to see two runs give the same frame.
  std::uint64_t digest = 1469598103934665603ull;
  auto mix = [&](auto const& v) {
    auto const* b = reinterpret_cast<unsigned char const*>(v.data());
    for (std::size_t i = 0; i < v.size() * sizeof(v[0]); ++i)
      digest = (digest ^ b[i]) * 1099511628211ull;
  };
  mix(res.flux), mix(res.ivar), mix(res.resolution), mix(res.deconvolved_flux);
  mix(res.chi2pix), mix(res.pixmask_fraction), mix(res.mask);
  std::printf(
      "frame digest (FNV-1a of flux, ivar, resolution, deconvolved, chi2pix, pixmask, "
      "mask): %016llx\n",
      static_cast<unsigned long long>(digest));
  if (!res.model.empty()) {  // the model image's bytes apart, so that the frame's stay comparable
    digest = 1469598103934665603ull;
    mix(res.model);
    std::printf("model digest (FNV-1a of the model image): %016llx\n",
                static_cast<unsigned long long>(digest));
  }
  std::printf(
      "reference (issue 4): gpu_specter 24.2 s/frame on one H200 (11.2 s with 10 MPS ranks); "
      "128-166 s per bundle on 2 CPU cores; specter 98-123 s per bundle\n");
  std::printf("targets: %s\n",
              host ? "<= 10 s per bundle on 2 CPU cores" : "<= 1 s per frame on an H200");
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string const s = argv[i];
    auto next = [&]() -> char const* { return i + 1 < argc ? argv[++i] : nullptr; };
    char const* v = nullptr;
    if (s == "--psf" && (v = next()))
      a.psf = v;
    else if (s == "--nbundles" && (v = next()))
      a.nbundles = std::atoi(v);
    else if (s == "--backend" && (v = next()))
      a.backend = v;
    else if (s == "--threads" && (v = next()))
      a.threads = std::atoi(v);
    else if (s == "--device" && (v = next()))
      a.device = std::atoi(v);
    else if (s == "--repeat" && (v = next()))
      a.repeat = std::atoi(v);
    else if (s == "--warmup" && (v = next()))
      a.warmup = std::atoi(v);
    else if (s == "--budget" && (v = next()))
      a.budget_gib = std::atof(v);
    else if (s == "--kernels")
      a.kernels = true;
    else if (s == "--allocations")
      a.allocations = true;
    else if (s == "--stage-times" && (v = next()))
      a.stage_times = std::atoi(v) != 0;
    else if (s == "--keep-buffers" && (v = next()))
      a.keep_buffers = std::atoi(v) != 0;
    else if (s == "--model" && (v = next()))
      a.model = std::atoi(v) != 0;
    else if (s == "--reuse" && (v = next()))
      a.reuse = std::atoi(v) != 0;
    else if (s == "--device-outputs" && (v = next()))
      a.device_outputs = std::atoi(v) != 0;
    else if (s == "--solver" && (v = next()) &&
             (std::string(v) == "band" || std::string(v) == "dense"))
      a.solver = v;
    else
      return usage();
  }
  compat::initialize({a.threads, a.device});
  int rc = 0;
  {
    bool real = false;
    psf::GaussHermitePsf p;
    std::string const shared = KSPECTER_SHARED_DATA "/psf-r0-00067784.fits";
    if (a.psf.empty() && std::filesystem::exists(shared)) {
      p = io::read_psf(shared);
      real = true;
    } else if (!a.psf.empty() && a.psf != "synthetic") {
      p = io::read_psf(a.psf);
      real = true;
    } else {
      p = psf::make_synthetic_psf();
    }
    std::string backend = a.backend;
    if (backend.empty()) {
#if defined(KOKKOS_ENABLE_CUDA)
      backend = "cuda";
#elif defined(KOKKOS_ENABLE_OPENMP)
      backend = "openmp";
#else
      backend = "serial";
#endif
    }
    bool const gpu = backend == "cuda";
    int const nb_all = (p.nfiber + 24) / 25;
    int const nbundles = std::min(nb_all, a.nbundles > 0 ? a.nbundles : (gpu ? nb_all : 1));

    extract::ExtractOptions opt;
    opt.wmin = 5760;
    opt.wmax = 7620;
    opt.dw = 0.8;
    opt.specmin = 0;
    opt.nspec = std::min(p.nfiber, 25 * nbundles);
    opt.memory_budget = std::size_t(a.budget_gib * double(std::size_t(1) << 30));
    opt.band_solve = a.solver == "band";
    opt.model = a.model;

    // The image: default spectra through the PSF, Poisson + 3 e- read noise, on the host.
    double const ts = now();
    std::vector<double> wave = sim::wavelength_grid(opt.wmin, opt.wmax, opt.dw);
    // Simulate a little beyond the extracted range so that the patches' padding sees light.
    std::vector<double> simwave = sim::wavelength_grid(opt.wmin - 40, opt.wmax + 60, opt.dw);
    sim::Spectra const spectra = sim::make_spectra(42, 0, opt.nspec, simwave);
    sim::SimulateOptions so;
    so.seed = 42;
    sim::SimulatedImage const img = sim::simulate_on_host(p, spectra, so);
    std::printf("simulated %d fibers x %zu bins on the host in %.2f s (%s PSF, CCD %d x %d)\n",
                opt.nspec, simwave.size(), now() - ts, real ? "real r0" : "synthetic", p.npix_x,
                p.npix_y);
    (void)wave;

    try {
      if (backend == "serial") {
#if defined(KOKKOS_ENABLE_SERIAL)
        run<Kokkos::Serial>("Serial", p, img.image, img.ivar, opt, a, real);
#endif
      } else if (backend == "openmp") {
#if defined(KOKKOS_ENABLE_OPENMP)
        run<Kokkos::OpenMP>("OpenMP", p, img.image, img.ivar, opt, a, real);
#endif
      } else if (backend == "cuda") {
#if defined(KOKKOS_ENABLE_CUDA)
        run<Kokkos::Cuda>("Cuda", p, img.image, img.ivar, opt, a, real);
#endif
      } else {
        rc = usage();
      }
    } catch (std::exception const& e) {
      std::fprintf(stderr, "bench_extract: %s\n", e.what());
      rc = 1;
    }
  }
  Kokkos::finalize();
  return rc;
}
