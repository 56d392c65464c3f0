// `kspecter info`: what this build is and what it runs on.
#include "args.hpp"
#include "commands.hpp"
#include "gpu_fallback.hpp"
#include "session.hpp"

#include <kspecter/core/version.hpp>

#include <cstdio>

namespace kspecter::cli {

namespace {

void print_build(RuntimeInfo const& i) {
  std::printf("kspecter          %s\n", i.kspecter_version.c_str());
  std::printf("kokkos            %s\n", i.kokkos_version.c_str());
  std::printf("backends          ");
  for (std::size_t b = 0; b < i.backends.size(); ++b)
    std::printf("%s%s", b ? ", " : "", i.backends[b].c_str());
  std::printf("\n");
}

#ifdef KSPECTER_HAVE_MPI
char const* const mpi_off_reason = "not started (no launcher)";
#else
char const* const mpi_off_reason = "disabled (built without MPI)";
#endif

std::string fallback_or_none() {
  std::string const twin = cpu_fallback();
  return twin.empty() ? "none" : twin;
}

}  // namespace

int run_info(int argc, char** argv) {
  ArgParser args("info",
                 "Prints kspecter's version, the Kokkos version and enabled backends, "
                 "the concurrency, the GPU (name, memory) and the MPI size. A GPU build on a node "
                 "without a usable GPU says why, and which CPU build it falls back to.");
  add_common_options(args);
  if (!args.parse(argc, argv)) return 0;
  GpuProbe const& gpu = gpu_probe();
  if (gpu.gpu_backend && !gpu.usable) {
    // Kokkos would start the GPU backend and abort: report the build without starting it.
    if (parallel::launcher_rank() != 0) return 0;
    print_build(build_info());
    std::printf("gpu               no usable GPU: %s; CPU fallback: %s\n", gpu.reason.c_str(),
                fallback_or_none().c_str());
    std::printf("mpi               not started\n");
    return 0;
  }
  Session s(argc, argv, args);
  RuntimeInfo const i = runtime_info();
  if (s.env->rank() != 0) return 0;
  print_build(i);
  std::printf("default space     %s\n", i.default_space.c_str());
  std::printf("concurrency       %d (host %d)\n", i.concurrency, i.host_concurrency);
  if (i.device_id >= 0) {
    std::printf("gpu               #%d %s, %.1f GiB, compute capability %d.%d\n", i.device_id,
                i.device_name.c_str(), i.device_memory_bytes / 1073741824.0,
                i.device_compute_capability / 10, i.device_compute_capability % 10);
  } else {
    std::printf("gpu               none (host-only build)\n");
  }
  if (gpu.gpu_backend) std::printf("cpu fallback      %s\n", fallback_or_none().c_str());
  std::printf("mpi               %s, %d rank%s (%d on this node)\n",
              s.env->mpi_enabled() ? "enabled" : mpi_off_reason, s.env->size(),
              s.env->size() == 1 ? "" : "s", s.env->local_size());
  return 0;
}

}  // namespace kspecter::cli
