// `kspecter info`: what this build is and what it runs on.
#include "args.hpp"
#include "commands.hpp"
#include "session.hpp"

#include <kspecter/core/version.hpp>

#include <cstdio>

namespace kspecter::cli {

int run_info(int argc, char** argv) {
  ArgParser args("info",
                 "Prints kspecter's version, the Kokkos version and enabled backends, "
                 "the concurrency, the GPU (name, memory) and the MPI size.");
  add_common_options(args);
  if (!args.parse(argc, argv)) return 0;
  Session s(argc, argv, args);
  RuntimeInfo const i = runtime_info();
  if (s.env->rank() != 0) return 0;
  std::printf("kspecter          %s\n", i.kspecter_version.c_str());
  std::printf("kokkos            %s\n", i.kokkos_version.c_str());
  std::printf("backends          ");
  for (std::size_t b = 0; b < i.backends.size(); ++b)
    std::printf("%s%s", b ? ", " : "", i.backends[b].c_str());
  std::printf("\ndefault space     %s\n", i.default_space.c_str());
  std::printf("concurrency       %d (host %d)\n", i.concurrency, i.host_concurrency);
  if (i.device_id >= 0) {
    std::printf("gpu               #%d %s, %.1f GiB, compute capability %d.%d\n", i.device_id,
                i.device_name.c_str(), i.device_memory_bytes / 1073741824.0,
                i.device_compute_capability / 10, i.device_compute_capability % 10);
  } else {
    std::printf("gpu               none (host-only build)\n");
  }
  std::printf("mpi               %s, %d rank%s (%d on this node)\n",
              s.env->mpi_enabled() ? "enabled" : "disabled", s.env->size(),
              s.env->size() == 1 ? "" : "s", s.env->local_size());
  return 0;
}

}  // namespace kspecter::cli
