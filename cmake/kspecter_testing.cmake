# Helpers for kspecter's tests.
#
# kspecter_add_backend_test(<name> HEADERS h1.hpp [h2.hpp ...] [SOURCES extra.cpp ...])
#   Builds one executable per enabled Kokkos backend (<name>_serial, <name>_openmp,
#   <name>_cuda, ...). Each header is compiled in its own generated source after
#   backend_<backend>.hpp, which defines TEST_EXECSPACE and TEST_CATEGORY.
#
# kspecter_add_test(<name> SOURCES a.cpp ...)
#   A host-only test executable (readers, argument parsing, ...).
#
# kspecter_add_mpi_test(<name> SOURCES a.cpp ... RANKS 1 2 4)
#   One executable run under mpiexec at every rank count given.

set(KSPECTER_TEST_ENV "OMP_NUM_THREADS=2;OMP_PROC_BIND=false;KOKKOS_DISABLE_WARNINGS=1")

function(kspecter_add_backend_test NAME)
  cmake_parse_arguments(ARG "" "" "HEADERS;SOURCES" ${ARGN})
  foreach(_b IN LISTS KSPECTER_BACKENDS)
    string(TOLOWER ${_b} _lb)
    set(_srcs "")
    foreach(_h IN LISTS ARG_HEADERS)
      get_filename_component(_stem ${_h} NAME_WE)
      set(_gen ${CMAKE_CURRENT_BINARY_DIR}/generated/${_stem}_${_lb}.cpp)
      file(CONFIGURE OUTPUT ${_gen}
           CONTENT "#include <backend_${_lb}.hpp>\n#include \"${CMAKE_CURRENT_SOURCE_DIR}/${_h}\"\n")
      list(APPEND _srcs ${_gen})
    endforeach()
    add_executable(${NAME}_${_lb} ${_srcs} ${ARG_SOURCES})
    target_link_libraries(${NAME}_${_lb} PRIVATE kspecter_test_main kspecter_test_support)
    gtest_discover_tests(${NAME}_${_lb} DISCOVERY_MODE PRE_TEST
      PROPERTIES ENVIRONMENT "${KSPECTER_TEST_ENV}" LABELS "${_lb}")
  endforeach()
endfunction()

function(kspecter_add_test NAME)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  add_executable(${NAME} ${ARG_SOURCES})
  target_link_libraries(${NAME} PRIVATE kspecter_test_main kspecter_test_support)
  gtest_discover_tests(${NAME} DISCOVERY_MODE PRE_TEST
    PROPERTIES ENVIRONMENT "${KSPECTER_TEST_ENV}" LABELS "host")
endfunction()

function(kspecter_add_mpi_test NAME)
  cmake_parse_arguments(ARG "" "" "SOURCES;RANKS" ${ARGN})
  if(NOT KSPECTER_ENABLE_MPI)
    return()
  endif()
  add_executable(${NAME} ${ARG_SOURCES} ${PROJECT_SOURCE_DIR}/tests/support/mpi_test_main.cpp)
  target_link_libraries(${NAME} PRIVATE kspecter_test_support)
  foreach(_n IN LISTS ARG_RANKS)
    add_test(NAME ${NAME}_np${_n}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${_n} --oversubscribe
              ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${NAME}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${NAME}_np${_n} PROPERTIES PROCESSORS ${_n} LABELS "mpi" TIMEOUT 300
      ENVIRONMENT "OMP_NUM_THREADS=1;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;KOKKOS_DISABLE_WARNINGS=1")
  endforeach()
endfunction()
