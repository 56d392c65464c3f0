// What a frame's device memory costs to get and give back, without Kokkos: `bytes` (default
// 2 GiB, about a full frame's) taken as one cudaMalloc or as `pieces` equal ones, each
// followed by the small synchronous copy that Kokkos 3.4 makes of a View's header, then freed;
// best of 5 rounds. Answers whether a frame's ~40 allocations cost by their number or by their
// bytes. Built by nvcc alone: nvcc -O2 -arch=sm_90 -o alloc_cost alloc_cost.cu
//
//   alloc_cost [GiB] [pieces...]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void check(cudaError_t e, char const* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}

// Times `pieces` allocations of bytes / pieces (with a header copy each) and their frees.
void round(std::size_t bytes, int pieces, double* t_alloc, double* t_free) {
  std::vector<void*> p(pieces);
  char header[128] = {};
  std::size_t const each = bytes / pieces;
  double const t0 = now();
  for (int i = 0; i < pieces; ++i) {
    check(cudaMalloc(&p[i], each), "cudaMalloc");
    check(cudaMemcpy(p[i], header, sizeof header, cudaMemcpyDefault), "cudaMemcpy");
  }
  double const t1 = now();
  for (int i = 0; i < pieces; ++i) check(cudaFree(p[i]), "cudaFree");
  double const t2 = now();
  *t_alloc = t1 - t0;
  *t_free = t2 - t1;
}

}  // namespace

int main(int argc, char** argv) {
  double const gib = argc > 1 ? std::atof(argv[1]) : 2.0;
  std::vector<int> pieces;
  for (int i = 2; i < argc; ++i) pieces.push_back(std::atoi(argv[i]));
  if (pieces.empty()) pieces = {1, 4, 10, 20, 40};
  std::size_t const bytes = std::size_t(gib * double(1 << 30));
  check(cudaFree(nullptr), "context");
  double a = 0, f = 0;
  round(bytes, 1, &a, &f);  // warm-up
  std::printf("%8s %12s %12s %12s\n", "pieces", "alloc [ms]", "free [ms]", "sum [ms]");
  for (int n : pieces) {
    double best_a = 1e30, best_f = 1e30;
    for (int r = 0; r < 5; ++r) {
      round(bytes, n, &a, &f);
      best_a = std::min(best_a, a);
      best_f = std::min(best_f, f);
    }
    std::printf("%8d %12.3f %12.3f %12.3f\n", n, 1e3 * best_a, 1e3 * best_f,
                1e3 * (best_a + best_f));
  }
  return 0;
}
