#pragma once
#include <kspecter/core/kokkos_compat.hpp>
using TEST_EXECSPACE = kspecter::compat::HIP;
#define TEST_CATEGORY hip
