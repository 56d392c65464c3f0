# The C++ standard kspecter compiles with: the one of the Kokkos found (Kokkos 5 requires C++20,
# and code built with a lower standard than its Kokkos does not link reliably against it).
#
# Kokkos 4.x and 5.x export it as Kokkos_CXX_STANDARD; Kokkos 3.x only as the INTERFACE compile
# feature cxx_std_NN of Kokkos::kokkoscore. A CMAKE_CXX_STANDARD given on the command line is
# kept when it is at least Kokkos' and refused when it is lower.
# Sets KSPECTER_CXX_STANDARD, and CMAKE_CXX_STANDARD (+ _REQUIRED) for every target after it.

set(_kokkos_std "")
if(DEFINED Kokkos_CXX_STANDARD)
  string(REGEX MATCH "[0-9]+" _kokkos_std "${Kokkos_CXX_STANDARD}")
endif()
if(NOT _kokkos_std AND TARGET Kokkos::kokkoscore)
  get_target_property(_features Kokkos::kokkoscore INTERFACE_COMPILE_FEATURES)
  if(_features MATCHES "cxx_std_([0-9]+)")
    set(_kokkos_std ${CMAKE_MATCH_1})
  endif()
endif()
if(NOT _kokkos_std)
  set(_kokkos_std 17)
  message(STATUS "kspecter: Kokkos ${Kokkos_VERSION} exports no C++ standard; using C++17")
endif()

if(DEFINED CMAKE_CXX_STANDARD AND NOT CMAKE_CXX_STANDARD STREQUAL "")
  if(CMAKE_CXX_STANDARD LESS _kokkos_std)
    message(FATAL_ERROR "kspecter: CMAKE_CXX_STANDARD=${CMAKE_CXX_STANDARD} is below the "
                        "C++${_kokkos_std} that Kokkos ${Kokkos_VERSION} was built with")
  endif()
  set(KSPECTER_CXX_STANDARD ${CMAKE_CXX_STANDARD})
else()
  set(KSPECTER_CXX_STANDARD ${_kokkos_std})
endif()
set(CMAKE_CXX_STANDARD ${KSPECTER_CXX_STANDARD})
set(CMAKE_CXX_STANDARD_REQUIRED ON)
