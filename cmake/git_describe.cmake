# Run at build time (cmake -DSRC=<source dir> -DOUT=<file> -P git_describe.cmake): writes OUT,
# a C++ source whose kspecter::detail::git_describe() returns `git describe --tags --always
# --dirty` of SRC with '-' made '.' (a PEP 440 local version label: 6d810f5.dirty), or "" when
# SRC is not the top of a git checkout (a release tarball, or one unpacked inside another
# repository, such as a Spack stage). OUT is rewritten only when that changes, so a build
# recompiles one small file after a commit and nothing otherwise.
set(_describe "")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SRC}" rev-parse --show-toplevel
                  OUTPUT_VARIABLE _top RESULT_VARIABLE _rc ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(_rc EQUAL 0)
    file(REAL_PATH "${_top}" _top)
    file(REAL_PATH "${SRC}" _src)
  endif()
  if(_rc EQUAL 0 AND _top STREQUAL _src)
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SRC}" describe --tags --always --dirty
                    OUTPUT_VARIABLE _describe RESULT_VARIABLE _rc ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT _rc EQUAL 0)
      set(_describe "")
    endif()
    string(REGEX REPLACE "[^A-Za-z0-9.]" "." _describe "${_describe}")
  endif()
endif()
set(_content "// Written by cmake/git_describe.cmake at build time.\nnamespace kspecter::detail {\nchar const* git_describe() { return \"${_describe}\"; }\n}  // namespace kspecter::detail\n")
set(_old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" _old)
endif()
if(NOT _old STREQUAL _content)
  file(WRITE "${OUT}" "${_content}")
endif()
