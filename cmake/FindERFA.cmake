# FindERFA
# --------
# Finds ERFA, the Essential Routines for Fundamental Astronomy (liberfa; pkg-config first,
# then a plain search) and defines the imported target ERFA::ERFA.  Honours ERFA_ROOT.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_ERFA QUIET erfa)
endif()
find_path(ERFA_INCLUDE_DIR erfa.h
  HINTS ${ERFA_ROOT} ENV ERFA_ROOT ${PC_ERFA_INCLUDE_DIRS}
  PATH_SUFFIXES include)
find_library(ERFA_LIBRARY NAMES erfa
  HINTS ${ERFA_ROOT} ENV ERFA_ROOT ${PC_ERFA_LIBRARY_DIRS}
  PATH_SUFFIXES lib lib64)
set(ERFA_VERSION "${PC_ERFA_VERSION}")
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(ERFA
  REQUIRED_VARS ERFA_LIBRARY ERFA_INCLUDE_DIR VERSION_VAR ERFA_VERSION)
if(ERFA_FOUND AND NOT TARGET ERFA::ERFA)
  add_library(ERFA::ERFA UNKNOWN IMPORTED)
  set_target_properties(ERFA::ERFA PROPERTIES
    IMPORTED_LOCATION "${ERFA_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ERFA_INCLUDE_DIR}")
endif()
mark_as_advanced(ERFA_INCLUDE_DIR ERFA_LIBRARY)
