#pragma once
#include <Kokkos_Core.hpp>
using TEST_EXECSPACE = Kokkos::OpenMP;
#define TEST_CATEGORY openmp
