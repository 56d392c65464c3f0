# Helpers for kspecter's tests.
#
# kspecter_add_backend_test(<name> HEADERS h1.hpp [h2.hpp ...] [SOURCES extra.cpp ...])
#   Builds one executable per backend of the build (KSPECTER_BACKENDS,
#   cmake/kspecter_backends.cmake): <name>_serial, <name>_openmp, <name>_cuda, ... Each header
#   is compiled in its own generated source that first defines TEST_EXECSPACE (the backend's
#   execution space) and TEST_CATEGORY (its name).
#
# kspecter_add_test(<name> SOURCES a.cpp ...)
#   A host-only test executable (readers, argument parsing, ...).
#
# kspecter_add_mpi_test(<name> SOURCES a.cpp ... RANKS 1 2 4)
#   One executable run under mpiexec at every rank count given.

set(KSPECTER_TEST_ENV "OMP_NUM_THREADS=2;OMP_PROC_BIND=false;KOKKOS_DISABLE_WARNINGS=1")

# Sanitized builds (KSPECTER_SANITIZE, top-level CMakeLists.txt): the first finding ends the
# test with a non-zero exit and a symbolized stack. Leaks are checked; the suppressions file
# names only third-party runtimes (Open MPI, hwloc, ...) and says why each entry is there.
set(KSPECTER_SANITIZER_ENV "")
if(KSPECTER_SANITIZE)
  set(KSPECTER_SANITIZER_ENV
    "ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:fast_unwind_on_malloc=0:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1"
    "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1"
    "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/cmake/sanitizers/lsan.supp:print_suppressions=0")
  list(APPEND KSPECTER_TEST_ENV ${KSPECTER_SANITIZER_ENV})
endif()

# gtest_discover_tests flattens list-valued PROPERTIES (CMake 3.25 writes each entry as its
# own argument of set_tests_properties), so only the first ENVIRONMENT entry would reach the
# tests. Discovered tests get their environment from a script ctest includes after the
# discovery script, where the list of test names (<target>_TESTS) is known.
function(_kspecter_discover_tests TARGET LABEL)
  gtest_discover_tests(${TARGET} DISCOVERY_MODE PRE_TEST PROPERTIES LABELS "${LABEL}")
  set(_script ${CMAKE_CURRENT_BINARY_DIR}/${TARGET}_environment.cmake)
  file(WRITE ${_script}
    "if(${TARGET}_TESTS)\n"
    "  set_tests_properties(\${${TARGET}_TESTS} PROPERTIES ENVIRONMENT [==[${KSPECTER_TEST_ENV}]==])\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${_script})
endfunction()

function(kspecter_add_backend_test NAME)
  cmake_parse_arguments(ARG "" "" "HEADERS;SOURCES" ${ARGN})
  foreach(_lb IN LISTS KSPECTER_BACKENDS)
    set(_srcs "")
    foreach(_h IN LISTS ARG_HEADERS)
      get_filename_component(_stem ${_h} NAME_WE)
      set(_gen ${CMAKE_CURRENT_BINARY_DIR}/generated/${_stem}_${_lb}.cpp)
      file(CONFIGURE OUTPUT ${_gen}
           CONTENT "#include <Kokkos_Core.hpp>\n#include <kspecter/core/kokkos_compat.hpp>\nusing TEST_EXECSPACE = ${KSPECTER_BACKEND_SPACE_${_lb}};\n#define TEST_CATEGORY ${_lb}\n#include \"${CMAKE_CURRENT_SOURCE_DIR}/${_h}\"\n")
      list(APPEND _srcs ${_gen})
    endforeach()
    add_executable(${NAME}_${_lb} ${_srcs} ${ARG_SOURCES})
    target_link_libraries(${NAME}_${_lb} PRIVATE kspecter_test_main kspecter_test_support)
    _kspecter_discover_tests(${NAME}_${_lb} ${_lb})
  endforeach()
endfunction()

function(kspecter_add_test NAME)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  add_executable(${NAME} ${ARG_SOURCES})
  target_link_libraries(${NAME} PRIVATE kspecter_test_main kspecter_test_support)
  _kspecter_discover_tests(${NAME} host)
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
    set(_env OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
             OMPI_MCA_rmaps_base_oversubscribe=1 KOKKOS_DISABLE_WARNINGS=1 ${KSPECTER_SANITIZER_ENV})
    set_tests_properties(${NAME}_np${_n} PROPERTIES PROCESSORS ${_n} LABELS "mpi" TIMEOUT 300
      ENVIRONMENT "${_env}")
  endforeach()
endfunction()
