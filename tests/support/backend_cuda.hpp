#pragma once
#include <Kokkos_Core.hpp>
using TEST_EXECSPACE = Kokkos::Cuda;
#define TEST_CATEGORY cuda
