#pragma once
#include <Kokkos_Core.hpp>
using TEST_EXECSPACE = Kokkos::Serial;
#define TEST_CATEGORY serial
