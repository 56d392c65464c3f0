# FindISAL
# --------
# Finds Intel's ISA-L (libisal: igzip, its gzip inflate and deflate; pkg-config first, then a
# plain search) and defines the imported target ISAL::ISAL.  Honours ISAL_ROOT.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_ISAL QUIET libisal)
endif()
find_path(ISAL_INCLUDE_DIR isa-l/igzip_lib.h
  HINTS ${ISAL_ROOT} ENV ISAL_ROOT ${PC_ISAL_INCLUDE_DIRS}
  PATH_SUFFIXES include)
find_library(ISAL_LIBRARY NAMES isal
  HINTS ${ISAL_ROOT} ENV ISAL_ROOT ${PC_ISAL_LIBRARY_DIRS}
  PATH_SUFFIXES lib lib64)
set(ISAL_VERSION "${PC_ISAL_VERSION}")
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(ISAL
  REQUIRED_VARS ISAL_LIBRARY ISAL_INCLUDE_DIR VERSION_VAR ISAL_VERSION)
if(ISAL_FOUND AND NOT TARGET ISAL::ISAL)
  add_library(ISAL::ISAL UNKNOWN IMPORTED)
  set_target_properties(ISAL::ISAL PROPERTIES
    IMPORTED_LOCATION "${ISAL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ISAL_INCLUDE_DIR}")
endif()
mark_as_advanced(ISAL_INCLUDE_DIR ISAL_LIBRARY)
