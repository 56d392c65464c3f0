#pragma once
#include <Kokkos_Core.hpp>
using TEST_EXECSPACE = Kokkos::Experimental::HIP;
#define TEST_CATEGORY hip
