// A minimal Kokkos Tools library for tests: it appends the name of every kernel (parallel_for,
// _reduce, _scan) to the file named by KSPECTER_KERNEL_NAMES, one per line. Loaded by Kokkos
// from --kokkos-tools-libs / KOKKOS_TOOLS_LIBS (4.x) or --kokkos-tools-library /
// KOKKOS_PROFILE_LIBRARY (3.x); the C interface is the same in both.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

std::FILE* out = nullptr;

void record(char const* kind, char const* name) {
  if (out) std::fprintf(out, "%s %s\n", kind, name);
}

}  // namespace

extern "C" {

void kokkosp_init_library(int, std::uint64_t, std::uint32_t, void*) {
  if (char const* path = std::getenv("KSPECTER_KERNEL_NAMES")) out = std::fopen(path, "a");
}

void kokkosp_finalize_library() {
  if (out) std::fclose(out);
  out = nullptr;
}

void kokkosp_begin_parallel_for(char const* name, std::uint32_t, std::uint64_t* id) {
  record("for", name);
  *id = 0;
}
void kokkosp_end_parallel_for(std::uint64_t) {}

void kokkosp_begin_parallel_reduce(char const* name, std::uint32_t, std::uint64_t* id) {
  record("reduce", name);
  *id = 0;
}
void kokkosp_end_parallel_reduce(std::uint64_t) {}

void kokkosp_begin_parallel_scan(char const* name, std::uint32_t, std::uint64_t* id) {
  record("scan", name);
  *id = 0;
}
void kokkosp_end_parallel_scan(std::uint64_t) {}

}  // extern "C"
