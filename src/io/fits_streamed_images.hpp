// The large images of a .gz FITS output, streamed from the caller's arrays into the deflater
// instead of through CFITSIO's memory file. FitsWriter gives CFITSIO a placeholder of each
// (the same keywords, every axis 1) and keeps the array; at commit() the file's bytes are
// CFITSIO's with each placeholder's header given the real axes and CHECKSUM, and its data
// unit replaced by the array's values in FITS's big-endian order, padded to 2880 bytes.
// A full-CCD preproc (213 MB) then never exists plain in memory: CFITSIO's memory file
// zero-filled each byte before writing it, on fresh pages (docs/architecture.md, "gzip").
#pragma once

#include "gzip_file.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace kspecter::io {

/// An image whose data stay in the caller's array until commit().
struct StreamedImage {
  int hdu = 0;             // 1-based, as CFITSIO counts
  std::vector<long> axes;  // the real axes, NAXIS1 first
  void const* data = nullptr;
  int value_bytes = 4;        // 4 (float, uint32) or 8 (double)
  std::uint32_t flip = 0;     // xor-ed into 4-byte values first: 0x80000000 for uint32 (BZERO)
  unsigned long datasum = 0;  // the FITS DATASUM of the data unit

  std::size_t data_bytes() const;
};

/// Where an image's placeholder HDU lies in CFITSIO's bytes.
struct PlaceholderSpan {
  std::size_t head = 0, data = 0, end = 0;  // fits_get_hduaddrll's three addresses
};

/// The whole file: CFITSIO's `size` bytes at `fits`, with `images[i]` in place of the
/// placeholder at `spans[i]` (in file order). The source keeps pointers into `fits` and the
/// images' arrays (not to `images` itself, which it copies). Throws Error when a placeholder's
/// header lacks a NAXISn or CHECKSUM card.
ByteSource streamed_fits(unsigned char const* fits, std::size_t size,
                         std::vector<StreamedImage> const& images,
                         std::vector<PlaceholderSpan> const& spans);

}  // namespace kspecter::io
