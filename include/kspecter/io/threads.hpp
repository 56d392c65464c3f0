// Whether io's readers and writers may run on several threads at once.
#pragma once

namespace kspecter::io {

/// True when two threads may each read or write a file of their own at the same time: the
/// FITS library was built thread-safe (CFITSIO's --enable-reentrant, as Debian and Spack
/// build it). HDF5 frames are written by one thread at a time whatever this says.
bool files_on_several_threads();

}  // namespace kspecter::io
