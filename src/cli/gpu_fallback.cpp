#include "gpu_fallback.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/extract/backend.hpp>
#include <kspecter/parallel/environment.hpp>

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace kspecter::cli {

namespace {

// Set in the twin's environment: a GPU build that finds it was started as someone's CPU
// fallback stops instead of handing over again.
constexpr char const* started_as_fallback = "KSPECTER_CPU_FALLBACK_OF";

std::string this_executable() {
  char buf[PATH_MAX];
  ssize_t const n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, std::size_t(n)) : std::string();
}

bool executable(std::string const& path) {
  return !path.empty() && access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::string cpu_fallback() {
  if (char const* chosen = std::getenv("KSPECTER_CPU_FALLBACK")) {
    std::string const path = chosen;
    if (path == "none" || path.empty()) return {};
    if (!executable(path))
      throw Error("KSPECTER_CPU_FALLBACK=" + path + " is not an executable file");
    return path;
  }
  std::string const self = this_executable();
  std::string const dir = self.substr(0, self.rfind('/') + 1);
  if (dir.empty()) return {};
  for (char const* beside : {KSPECTER_TWIN_FROM_BIN, "kspecter-host"})
    if (executable(dir + beside)) return dir + beside;
  return {};
}

void hand_over_without_gpu(char** argv, std::string const& backend, bool quiet) {
  GpuProbe const& gpu = gpu_probe();
  if (!gpu.gpu_backend || gpu.usable) return;
  std::string const why = "no usable GPU: " + gpu.reason;
  if (backend != "auto" && !extract::backend_on_host(backend))
    throw ParameterError("--backend " + backend + ": " + why);
  if (char const* parent = std::getenv(started_as_fallback))
    throw Error(why + "; and this " + gpu.platform + " build was itself started as the CPU " +
                "fallback of " + parent + ": set KSPECTER_CPU_FALLBACK to a host-only kspecter");
  std::string const twin = cpu_fallback();
  if (twin.empty())
    throw Error(why + "; this " + gpu.platform + " build has no CPU fallback (build it with " +
                "-DKSPECTER_HOST_KOKKOS_DIR=<host-only Kokkos>, or set KSPECTER_CPU_FALLBACK to " +
                "a host-only kspecter)");
  if (!quiet && parallel::launcher_rank() == 0) {
    std::fprintf(stderr, "kspecter: %s; running on the CPU with %s\n", why.c_str(), twin.c_str());
    std::fflush(stderr);
  }
  setenv(started_as_fallback, this_executable().c_str(), 1);
  std::vector<char*> args;
  args.push_back(const_cast<char*>(twin.c_str()));
  for (char** a = argv + 1; *a; ++a) args.push_back(*a);
  args.push_back(nullptr);
  execv(twin.c_str(), args.data());
  throw Error("cannot run the CPU fallback " + twin + ": " + std::strerror(errno));
}

}  // namespace kspecter::cli
