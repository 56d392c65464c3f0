# The CPU twin of a GPU build: the same kspecter library and CLI built against a host-only
# Kokkos, which a GPU `kspecter` runs instead of itself on a node without a usable GPU
# (src/cli/gpu_fallback.hpp; README, "CPU fallback").
#
# A CUDA or HIP Kokkos starts its GPU backend in Kokkos::initialize and aborts there when it
# finds no device, whatever backend the program would then use: no setting turns a backend off
# at run time. So the fallback is a second executable. In a build whose Kokkos has a GPU
# backend, KSPECTER_HOST_KOKKOS_DIR (a host-only Kokkos install, e.g. bootstrap-deps.sh's
# default openmp entry) builds this source tree again, library and CLI only, as an
# ExternalProject in <build>/host-twin. Its executable is copied beside `kspecter` as
# `kspecter-host` and installed as <prefix>/libexec/kspecter/kspecter-host.
#
# Sets KSPECTER_HOST_TWIN (the twin's copy in the build tree) when the twin is built.

set(KSPECTER_HOST_KOKKOS_DIR "" CACHE PATH
    "Host-only Kokkos install to build the CPU fallback of a GPU build against (empty: none)")
set(KSPECTER_HOST_CXX_COMPILER "" CACHE FILEPATH
    "C++ compiler of the CPU fallback (default: the one the host-only Kokkos was built with)")
option(KSPECTER_IS_HOST_TWIN "Internal: this build is the CPU fallback of a GPU build" OFF)
mark_as_advanced(KSPECTER_IS_HOST_TWIN KSPECTER_HOST_CXX_COMPILER)
set(KSPECTER_HOST_TWIN "")

if(KSPECTER_IS_HOST_TWIN)
  if(Kokkos_ENABLE_CUDA OR Kokkos_ENABLE_HIP)
    message(FATAL_ERROR "kspecter: KSPECTER_HOST_KOKKOS_DIR must be a host-only Kokkos; "
                        "${Kokkos_DIR} has the backends ${Kokkos_DEVICES}")
  endif()
  return()
endif()
if(NOT KSPECTER_HOST_KOKKOS_DIR)
  return()
endif()
if(NOT (Kokkos_ENABLE_CUDA OR Kokkos_ENABLE_HIP))
  message(STATUS "kspecter: KSPECTER_HOST_KOKKOS_DIR not used: this build runs on the CPU itself")
  return()
endif()

file(GLOB _host_kokkos_common "${KSPECTER_HOST_KOKKOS_DIR}/lib*/cmake/Kokkos/KokkosConfigCommon.cmake")
if(NOT _host_kokkos_common)
  message(FATAL_ERROR "kspecter: KSPECTER_HOST_KOKKOS_DIR=${KSPECTER_HOST_KOKKOS_DIR} holds no "
                      "Kokkos install (no lib*/cmake/Kokkos/KokkosConfigCommon.cmake)")
endif()
list(GET _host_kokkos_common 0 _host_kokkos_common)
file(STRINGS "${_host_kokkos_common}" _line REGEX "^[Ss][Ee][Tt]\\(Kokkos_DEVICES ")
if(_line MATCHES "CUDA|HIP|SYCL|OPENMPTARGET")
  message(FATAL_ERROR "kspecter: KSPECTER_HOST_KOKKOS_DIR=${KSPECTER_HOST_KOKKOS_DIR} must be a "
                      "host-only Kokkos, not one with a GPU backend (${_line})")
endif()
set(_host_cxx "${KSPECTER_HOST_CXX_COMPILER}")
if(NOT _host_cxx)
  file(STRINGS "${_host_kokkos_common}" _line REGEX "^[Ss][Ee][Tt]\\(Kokkos_CXX_COMPILER ")
  if(_line MATCHES "\"([^\"]+)\"")
    set(_host_cxx "${CMAKE_MATCH_1}")
  else()
    find_program(_host_cxx NAMES c++ g++ clang++ REQUIRED)
  endif()
endif()

include(ExternalProject)
set(_twin_build ${CMAKE_BINARY_DIR}/host-twin)
# Beside `kspecter` (src/cli's binary folder), named as a path rather than through
# $<TARGET_FILE_DIR:kspecter_cli>, which would make the twin wait for the GPU build's CLI
# instead of building alongside it.
set(KSPECTER_HOST_TWIN ${CMAKE_BINARY_DIR}/src/cli/kspecter-host)
# Lists travel through ExternalProject with another separator.
string(REPLACE ";" "|" _prefix_path "${KSPECTER_HOST_KOKKOS_DIR};${CMAKE_PREFIX_PATH}")
string(REPLACE ";" "|" _sanitize "${KSPECTER_SANITIZE}")
set(_launcher "")
if(CMAKE_CXX_COMPILER_LAUNCHER)  # else the environment's CMAKE_CXX_COMPILER_LAUNCHER, if any
  set(_launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER})
endif()
ExternalProject_Add(kspecter_host_twin
  SOURCE_DIR ${PROJECT_SOURCE_DIR}
  BINARY_DIR ${_twin_build}
  PREFIX ${_twin_build}-ep
  LIST_SEPARATOR |
  CMAKE_GENERATOR ${CMAKE_GENERATOR}
  CMAKE_ARGS
    -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE}
    -DCMAKE_CXX_COMPILER=${_host_cxx}
    -DCMAKE_C_COMPILER=${CMAKE_C_COMPILER}
    -DCMAKE_PREFIX_PATH=${_prefix_path}
    -DKokkos_ROOT=${KSPECTER_HOST_KOKKOS_DIR}
    -DBUILD_SHARED_LIBS=${BUILD_SHARED_LIBS}
    -DCMAKE_EXE_LINKER_FLAGS=${CMAKE_EXE_LINKER_FLAGS}
    -DKSPECTER_IS_HOST_TWIN=ON
    -DKSPECTER_ENABLE_TESTS=OFF
    -DKSPECTER_ENABLE_BENCHMARKS=OFF
    -DKSPECTER_ENABLE_MPI=${KSPECTER_ENABLE_MPI}
    -DKSPECTER_ENABLE_HDF5=${KSPECTER_ENABLE_HDF5}
    -DKSPECTER_SANITIZE=${_sanitize}
    ${_launcher}
  # Every build of the parent builds the twin's CLI again (its own build tool decides what is
  # out of date), so that the twin never lags behind the sources.
  BUILD_COMMAND ${CMAKE_COMMAND} --build <BINARY_DIR> --target kspecter_cli
  BUILD_ALWAYS ON
  INSTALL_COMMAND ${CMAKE_COMMAND} -E copy <BINARY_DIR>/src/cli/kspecter ${KSPECTER_HOST_TWIN})
install(PROGRAMS ${_twin_build}/src/cli/kspecter
        DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/kspecter RENAME kspecter-host)
message(STATUS "kspecter: CPU fallback built against the host-only Kokkos in "
               "${KSPECTER_HOST_KOKKOS_DIR} with ${_host_cxx}")
