# The Kokkos backends kspecter runs on, in one list. Everything per backend is generated from
# it: the instantiations of the kernels (kspecter_backend_sources), the header
# kspecter_backend_list.hpp (the names that `--backend` accepts, and for each its execution
# space: the run-time dispatch, `kspecter info`), and the per-backend tests
# (kspecter_add_backend_test, cmake/kspecter_testing.cmake). The solve and extract tunings
# follow from whether a backend runs on the host (solve/impl/tuning.hpp,
# extract/impl/tuning.hpp), so a backend in this list has them too.
#
# Each entry: the name kspecter uses (file names, test names, --backend), the Kokkos option
# that enables it (Kokkos_ENABLE_<option>) and its execution space (kokkos_compat.hpp
# bridges spaces whose name changed between Kokkos versions).
set(KSPECTER_BACKEND_TABLE
  "serial SERIAL Kokkos::Serial"
  "openmp OPENMP Kokkos::OpenMP"
  "cuda CUDA Kokkos::Cuda"
  "hip HIP kspecter::compat::HIP")

# KSPECTER_BACKENDS: the names of the backends this Kokkos enables, in the table's order;
# KSPECTER_BACKEND_SPACE_<name>: the execution space of each.
set(KSPECTER_BACKENDS "")
foreach(_entry IN LISTS KSPECTER_BACKEND_TABLE)
  string(REPLACE " " ";" _entry "${_entry}")
  list(GET _entry 0 _name)
  list(GET _entry 1 _option)
  list(GET _entry 2 _space)
  if(Kokkos_ENABLE_${_option})
    list(APPEND KSPECTER_BACKENDS ${_name})
    set(KSPECTER_BACKEND_SPACE_${_name} "${_space}")
  endif()
endforeach()
if(NOT KSPECTER_BACKENDS)
  message(FATAL_ERROR "kspecter: Kokkos enables none of the backends of KSPECTER_BACKEND_TABLE")
endif()

# kspecter_backend_sources(<var> <template>)
#   Configures <template> (<stem>_backend.cpp.in, with @KSPECTER_BACKEND@, the name, and
#   @KSPECTER_EXEC_SPACE@, the execution space) once per backend into
#   <binary dir>/generated/<stem>_<backend>.cpp and sets <var> to the files.
function(kspecter_backend_sources VAR TEMPLATE)
  get_filename_component(_stem ${TEMPLATE} NAME)
  string(REGEX REPLACE "_backend\\.cpp\\.in$" "" _stem ${_stem})
  set(_files "")
  foreach(KSPECTER_BACKEND IN LISTS KSPECTER_BACKENDS)
    set(KSPECTER_EXEC_SPACE ${KSPECTER_BACKEND_SPACE_${KSPECTER_BACKEND}})
    set(_out ${CMAKE_CURRENT_BINARY_DIR}/generated/${_stem}_${KSPECTER_BACKEND}.cpp)
    configure_file(${TEMPLATE} ${_out} @ONLY)
    list(APPEND _files ${_out})
  endforeach()
  set(${VAR} ${_files} PARENT_SCOPE)
endfunction()

# The list for C++: kspecter::detail::for_each_backend (src/core/backend_list.hpp.in).
set(KSPECTER_BACKEND_CALLS "")
foreach(_name IN LISTS KSPECTER_BACKENDS)
  string(APPEND KSPECTER_BACKEND_CALLS
         "  f(\"${_name}\", BackendTag<${KSPECTER_BACKEND_SPACE_${_name}}>{});\n")
endforeach()
set(KSPECTER_GENERATED_INCLUDE_DIR ${PROJECT_BINARY_DIR}/generated)
configure_file(${PROJECT_SOURCE_DIR}/src/core/backend_list.hpp.in
               ${KSPECTER_GENERATED_INCLUDE_DIR}/kspecter_backend_list.hpp @ONLY)
