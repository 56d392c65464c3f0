# cmake -DINCLUDE_DIR=<repo>/include -P check_public_headers.cmake
# Fails (listing file:line) when a public header includes <immintrin.h> (the host SIMD
# kernels are private to solve/), calls getenv (run-time switches stay in the library), or
# includes a private header (an impl/ or detail/ path, or anything under src/).
file(GLOB_RECURSE _headers ${INCLUDE_DIR}/kspecter/*.hpp)
list(LENGTH _headers _n)
if(_n EQUAL 0)
  message(FATAL_ERROR "no public headers under ${INCLUDE_DIR}/kspecter")
endif()
set(_bad "")
foreach(_h IN LISTS _headers)
  file(STRINGS ${_h} _lines)
  set(_no 0)
  foreach(_line IN LISTS _lines)
    math(EXPR _no "${_no} + 1")
    if(_line MATCHES "^[ \t]*#[ \t]*include[ \t]*[<\"](immintrin\\.h|.*/impl/|.*/detail/|.*src/)"
       OR _line MATCHES "getenv")
      file(RELATIVE_PATH _rel ${INCLUDE_DIR} ${_h})
      string(APPEND _bad "  ${_rel}:${_no}: ${_line}\n")
    endif()
  endforeach()
endforeach()
if(_bad)
  message(FATAL_ERROR "public headers leak private things:\n${_bad}")
endif()
message(STATUS "${_n} public headers: no <immintrin.h>, no getenv, no private header")
