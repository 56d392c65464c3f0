# FindCFITSIO
# -----------
# Finds the CFITSIO library (pkg-config first, then a plain search) and defines the
# imported target CFITSIO::CFITSIO.  Honours CFITSIO_ROOT.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_CFITSIO QUIET cfitsio)
endif()
find_path(CFITSIO_INCLUDE_DIR fitsio.h
  HINTS ${CFITSIO_ROOT} ENV CFITSIO_ROOT ${PC_CFITSIO_INCLUDE_DIRS}
  PATH_SUFFIXES include include/cfitsio)
find_library(CFITSIO_LIBRARY NAMES cfitsio
  HINTS ${CFITSIO_ROOT} ENV CFITSIO_ROOT ${PC_CFITSIO_LIBRARY_DIRS}
  PATH_SUFFIXES lib lib64)
if(CFITSIO_INCLUDE_DIR AND EXISTS "${CFITSIO_INCLUDE_DIR}/fitsio.h")
  file(STRINGS "${CFITSIO_INCLUDE_DIR}/fitsio.h" _ver REGEX "#define CFITSIO_(MAJOR|MINOR)")
  string(REGEX REPLACE ".*CFITSIO_MAJOR +([0-9]+).*" "\\1" _maj "${_ver}")
  string(REGEX REPLACE ".*CFITSIO_MINOR +([0-9]+).*" "\\1" _min "${_ver}")
  set(CFITSIO_VERSION "${_maj}.${_min}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CFITSIO
  REQUIRED_VARS CFITSIO_LIBRARY CFITSIO_INCLUDE_DIR VERSION_VAR CFITSIO_VERSION)
if(CFITSIO_FOUND AND NOT TARGET CFITSIO::CFITSIO)
  add_library(CFITSIO::CFITSIO UNKNOWN IMPORTED)
  set_target_properties(CFITSIO::CFITSIO PROPERTIES
    IMPORTED_LOCATION "${CFITSIO_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CFITSIO_INCLUDE_DIR}")
endif()
mark_as_advanced(CFITSIO_INCLUDE_DIR CFITSIO_LIBRARY)
