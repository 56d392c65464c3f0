#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/core/version.hpp>

#include <cstdio>

int main() {
  kspecter::compat::initialize({});
  auto const info = kspecter::runtime_info();
  double sum = 0;
  Kokkos::parallel_reduce(
      "consumer::sum", 100, KOKKOS_LAMBDA(int i, double& a) { a += i; }, sum);
  Kokkos::finalize();
  std::printf("consumer linked kspecter %s (Kokkos %s), sum %.0f\n", info.kspecter_version.c_str(),
              info.kokkos_version.c_str(), sum);
  return sum == 4950.0 ? 0 : 1;
}
