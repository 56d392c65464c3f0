// Whole gzip-compressed files (DESI's preproc-*.fits.gz and frame-*.fits.gz), through ISA-L's
// igzip: read into memory, or written from memory. CFITSIO then reads and writes the FITS
// bytes in memory, so a .gz file is decompressed once, and its errors are reported as gzip
// errors, not as FITS ones. docs/architecture.md, "gzip".
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kspecter::io {

/// An allocator that leaves what it constructs uninitialised: a buffer sized for bytes that
/// are then written over (inflated, read) is not zero-filled first, and the pages of an
/// over-estimated size are never touched.
template <class T>
struct UninitialisedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitialisedAllocator<U>;
  };
  UninitialisedAllocator() = default;
  template <class U>
  UninitialisedAllocator(UninitialisedAllocator<U> const&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

/// Bytes of a file in memory (a gzip file's, decompressed).
using FileBytes = std::vector<char, UninitialisedAllocator<char>>;

/// True when the file starts with the gzip magic bytes (1f 8b).
bool is_gzip_file(std::string const& path);

/// The decompressed content of the gzip file at `path`: every member, as gzip -d gives it.
/// Bytes after the last member are ignored as gzip ignores them: silently when they are all
/// zero (padding), with a warning (kspecter::warn) otherwise. Throws InputError naming the file
/// when the stream is corrupt, truncated or fails its CRC or length check, and when its bytes
/// do not fit in memory (a gzip bomb).
FileBytes read_gzip(std::string const& path);

/// The same, from `size` compressed bytes at `data` (`path` names them in errors).
FileBytes inflate_gzip(std::string const& path, unsigned char const* data, std::size_t size);

/// The bytes of a prefetch_gzip(path) (kspecter/io/gzip_prefetch.hpp) started earlier on the
/// same, unchanged file, waiting for it to finish; nullopt when there is none. Rethrows the
/// inflation's error.
std::optional<FileBytes> take_prefetched_gzip(std::string const& path);

/// Bytes to deflate, [0, size), fetched a piece at a time: `bytes(offset, n, scratch)` returns
/// a pointer to bytes [offset, offset + n), either the source's own or `scratch` (room for n
/// bytes) filled with them. Called from several threads at once, for pieces that do not
/// overlap.
struct ByteSource {
  std::size_t size = 0;
  std::function<unsigned char const*(std::size_t offset, std::size_t n, unsigned char* scratch)>
      bytes;
};

/// `size` bytes at `data`, as a ByteSource.
ByteSource memory_source(void const* data, std::size_t size);

/// One gzip member of `source`'s bytes, deflated at the process's level on up to
/// gzip_threads() threads (kspecter/io/gzip_settings.hpp). The data are cut into pieces of a
/// fixed size, each deflated alone and ended by a sync flush, as pigz does: the bytes are
/// the same whatever the thread count, and any gzip reader reads them as one stream. No name
/// or time in the header, so the same data give the same file.
std::vector<unsigned char> deflate_gzip(ByteSource const& source);
std::vector<unsigned char> deflate_gzip(void const* data, std::size_t size);

/// Writes deflate_gzip(source) to the file open for writing on descriptor `fd`, which it
/// closes, each piece as soon as it and those before it are deflated: a few pieces a thread
/// are in memory at once, not the whole output. Returns "" or the reason for failing.
std::string write_gzip(int fd, ByteSource const& source);
std::string write_gzip(int fd, void const* data, std::size_t size);

}  // namespace kspecter::io
