// The one FITS reader and the one FITS writer every format of io/ goes through (preproc
// images, PSFs, frames, model images, tables): how a file is opened (the name taken
// literally, its headers guarded, gzip decompressed in memory), how an HDU is found (by
// EXTNAME, checked to lie inside the file before anything is allocated from its header), how
// keywords are read (typed, trimmed, a wrong type an error), and how an output is written
// (under a temporary name, checksums in every HDU, gzip when the name ends in .gz, renamed
// into place). Every failure is an InputError naming the file, the HDU and the problem.
#pragma once

#include "atomic_output.hpp"
#include "fits_datasum.hpp"
#include "fits_streamed_images.hpp"
#include "fits_support.hpp"
#include "gzip_file.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/io/fits_header.hpp>
#include <kspecter/io/fits_table.hpp>

#include <fitsio.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace kspecter::io {

/// The HDU the last FitsReader of this thread moved to ("" before any), for errors raised
/// outside the reader (memory_error).
std::string const& last_hdu_moved_to();

/// Calls `read()`; running out of memory inside it (std::bad_alloc, std::length_error: sizes
/// that a file's headers give, a gzip bomb) becomes an InputError naming `path`, the HDU being
/// read and what happened, instead of a bare "std::bad_alloc".
template <class Read>
auto reading_file(std::string const& path, Read&& read) -> decltype(read()) {
  try {
    return read();
  } catch (std::bad_alloc const&) {
    throw InputError(path, last_hdu_moved_to(),
                     "not enough memory to read it (its sizes ask for more than this process "
                     "can allocate: corrupt, or too big for this machine)");
  } catch (std::length_error const&) {
    throw InputError(path, last_hdu_moved_to(),
                     "its sizes ask for more than any array can hold: corrupt");
  }
}

/// How FitsReader finds a file.
enum class GzipAlternative {
  no,   // the name as given
  yes,  // desispec's checkgzip: when the name does not exist, the same name with ".gz"
        // added or removed
};

/// A FITS file open for reading, plain or gzip-compressed.
class FitsReader {
 public:
  /// Opens `path`: throws InputError (no HDU named) when it does not exist, is not a regular
  /// file, is a corrupt gzip or is not FITS; guard_fits_headers refuses headers CFITSIO
  /// cannot parse safely. Then every HDU's header is scanned, so that a truncated file is
  /// reported as such rather than as a missing HDU.
  explicit FitsReader(std::string path, GzipAlternative alt = GzipAlternative::no);
  FitsReader(FitsReader const&) = delete;
  FitsReader& operator=(FitsReader const&) = delete;

  std::string const& path() const { return path_; }
  fitsfile* get() const { return f_.get(); }
  bool gzipped() const { return !memory_.empty(); }
  /// Bytes of the FITS file (decompressed, for a gzip file).
  long long size() const { return size_; }

  /// True when an HDU has this EXTNAME (case-insensitive).
  /// Throws InputError naming `extname` when the file has a header after its last readable
  /// HDU that is cut short or cannot be parsed (the HDU asked for may be that one).
  bool has(std::string const& extname) const;
  /// Throws InputError when the file has a header after its last readable HDU that is cut
  /// short or cannot be parsed: a reader calls it once it has read what it wants, so that a
  /// file cut anywhere is refused (data units cut short are refused when the file opens).
  void check_complete() const;
  /// Makes HDU `extname` current and the HDU that errors name. With `primary_fallback`, an
  /// unnamed primary HDU with data stands for it. Throws InputError when it is missing, is not
  /// of `type` (IMAGE_HDU, BINARY_TBL; ANY_HDU for any), or its data end beyond the file.
  void move_to(std::string const& extname, int type = ANY_HDU, bool primary_fallback = false);
  /// Makes the primary HDU current ("PRIMARY" in messages, unless it has an EXTNAME).
  void move_to_primary();
  /// The HDU errors name.
  std::string const& hdu() const { return hdu_; }

  [[noreturn]] void fail(std::string const& what) const;
  /// fail(doing + ": " + CFITSIO's words) when `status` is not 0.
  void check(int status, std::string const& doing) const;

  // ---- keywords of the current HDU (nullopt: absent; a wrong type fails naming the key)
  std::optional<std::string> key_string(char const* key) const;  // trailing blanks dropped
  std::optional<double> key_double(char const* key) const;       // finite
  std::optional<std::string> key_value(char const* key) const;   // a string's text, or the
                                                                 // value as written
  std::optional<long long> key_integer(char const* key) const;
  double need_double(char const* key) const;  // missing: "keyword KEY is missing"
  long long need_integer(char const* key) const;
  /// The current HDU's header records (for a tile-compressed image, the image's own header),
  /// structural keywords left out (FitsHeader).
  FitsHeader header() const;

  // ---- images
  /// Axis lengths of the current HDU, fastest first; fails unless it is an image.
  std::vector<long> image_shape() const;
  /// BITPIX of the values as stored once BZERO/BSCALE are applied (fits_get_img_equivtype).
  int equiv_bitpix() const;
  /// Fails when the current HDU has a DATASUM its data do not match (corrupt bytes, e.g. in
  /// compressed tiles that still decode); nothing to check without one.
  void verify_datasum() const;
  /// Fails ("cannot read pixels: tile ...") when the current HDU is a RICE_1 tile-compressed
  /// image with a tile CFITSIO would decode past its end (rice_tiles.hpp); read_pixels calls it.
  void check_compressed_tiles() const;
  /// The byte offset of the current image's data in the (decompressed) file when its values
  /// lie there as they are: big-endian float32 (BITPIX -32), no BSCALE or BZERO to apply, not
  /// tile-compressed; nullopt for any other image.
  std::optional<long long> plain_float_data() const;
  /// Copies `bytes` bytes at `offset` of the (decompressed) file into `dst`; fails on a short
  /// read. Uses no CFITSIO state: other threads may call it while this one reads on.
  void read_bytes(long long offset, std::size_t bytes, void* dst) const;
  /// Reads the `n` values of the current image as `datatype` (a CFITSIO type code matching
  /// T) in blocks, handing each to `put(index, value)`. With `null`, the image's undefined
  /// pixels (integers equal to BLANK or ZBLANK, floats that are NaN) come as `*null`, which
  /// must not be 0 (CFITSIO checks nothing then); without, integers pass as they are stored.
  template <class T, class Put>
  void read_pixels(int datatype, long long n, Put put, T const* null = nullptr) const;

  // ---- tables
  /// The current HDU (a binary table) as a FitsTable.
  FitsTable table() const;

 private:
  struct Hdu {
    int index = 0;        // 1-based, as fits_movabs_hdu counts
    std::string extname;  // upper case, "" when absent
    int type = IMAGE_HDU;
    bool has_data = false;     // NAXIS > 0 and every axis > 0
    long long padded_end = 0;  // byte just past its data, padded to a 2880-byte block
  };
  Hdu const* find(std::string const& extname) const;
  void open();
  void scan();

  std::string path_, hdu_;
  long long size_ = 0;
  FileBytes memory_;  // the decompressed bytes of a gzip file
  void* memory_ptr_ = nullptr;
  std::size_t memory_size_ = 0;
  FitsPtr f_;
  std::vector<Hdu> hdus_;
  std::string tail_problem_;  // what follows the last readable HDU, when it is a broken header
};

/// A FITS file being written: under a temporary name next to `path`, in memory when the
/// name ends in ".gz" (gzip-compressed at commit()), renamed over `path` by commit(). Until
/// then `path` keeps its previous content; a writer destroyed without commit() leaves none.
class FitsWriter {
 public:
  explicit FitsWriter(std::string path);
  FitsWriter(FitsWriter const&) = delete;
  FitsWriter& operator=(FitsWriter const&) = delete;
  ~FitsWriter();

  std::string const& path() const { return path_; }
  fitsfile* get() const { return f_.get(); }

  /// Throws InputError(path, hdu, "cannot " + doing + ": " + CFITSIO's words) when
  /// `status` is not 0.
  void check(int status, std::string const& hdu, std::string const& doing) const;

  /// Appends an image HDU (the primary one first) named `extname`, with BUNIT when given.
  /// In a .gz output, an uncompressed float, double or uint32 image keeps a pointer to
  /// `data`, which must then live, unchanged, until commit() (fits_streamed_images.hpp):
  /// its HDU holds a placeholder (every axis 1) until then.
  template <class T>
  void image(char const* extname, int bitpix, int datatype, std::vector<long> naxes, T const* data,
             char const* bunit = nullptr);
  /// Writes `header`'s records into the current HDU (`hdu` names it in errors).
  void records(FitsHeader const& header, char const* hdu);
  /// Appends `table` as it is (its header and rows).
  void table(FitsTable const& table);
  /// Writes CHECKSUM and DATASUM in every HDU, closes the file (gzip-compressing it when
  /// asked) and renames it over `path`.
  void commit();

 private:
  std::string path_;
  bool gzip_ = false;
  AtomicOutput out_;
  void* memory_ = nullptr;  // the FITS bytes of a .gz output, grown by CFITSIO (realloc)
  std::size_t memory_size_ = 0;
  FitsPtr f_;
  // DATASUM of the image HDUs (by number) whose data image() summed from memory; commit()
  // sums the others from the file.
  std::map<int, unsigned long> datasums_;
  std::vector<StreamedImage> streamed_;  // a .gz output's images streamed at commit()
  template <class T>
  static bool summable(int bitpix, int datatype);
  template <class T>
  void remember_datasum(int bitpix, int datatype, T const* data, long long n);
  void write_gzip_output(std::vector<PlaceholderSpan> const& spans);
};

/// A FITS file built in memory, an empty primary HDU first (tables carried as FitsTable).
class MemoryFits {
 public:
  MemoryFits();  // throws Error when CFITSIO cannot
  ~MemoryFits();
  MemoryFits(MemoryFits const&) = delete;
  MemoryFits& operator=(MemoryFits const&) = delete;
  fitsfile* get() const { return f_.get(); }
  /// Its current HDU (a binary table) as a FitsTable from `file`: closes the file and takes
  /// its bytes. Throws InputError(file, extname) when `status` or CFITSIO reports a failure.
  FitsTable finish(std::string const& file, std::string const& extname, int status);

 private:
  void* ptr_ = nullptr;  // grown by CFITSIO (realloc)
  std::size_t size_ = 0;
  FitsPtr f_;
};

/// Opens `table`'s bytes read-only with its table HDU current (for the io code that reads
/// or slices it).
FitsPtr open_table(FitsTable const& table, void*& ptr, std::size_t& size);

// ------------------------------------------------------------------ templates

template <class T, class Put>
void FitsReader::read_pixels(int datatype, long long n, Put put, T const* null) const {
  constexpr long long block = 1 << 20;
  check_compressed_tiles();
  std::vector<T> buf(static_cast<std::size_t>(std::min(n, block)));
  for (long long first = 0; first < n; first += block) {
    long long const m = std::min(block, n - first);
    int status = 0, anynul = 0;
    fits_read_img(f_.get(), datatype, first + 1, m, const_cast<T*>(null), buf.data(), &anynul,
                  &status);
    check(status,
          "cannot read pixels " + std::to_string(first) + ".." + std::to_string(first + m - 1));
    for (long long i = 0; i < m; ++i) put(first + i, buf[static_cast<std::size_t>(i)]);
  }
}

/// What FITS xors into a stored 4-byte value of type T: the sign bit of an unsigned one
/// (BITPIX 32 with BZERO = 2^31).
template <class T>
constexpr std::uint32_t stored_flip = std::is_same_v<T, unsigned> ? 0x80000000u : 0u;

template <class T>
void FitsWriter::image(char const* extname, int bitpix, int datatype, std::vector<long> naxes,
                       T const* data, char const* bunit) {
  int status = 0, compression = 0;
  long long n = naxes.empty() ? 0 : 1;
  for (long a : naxes) n *= a;
  fits_get_compression_type(f_.get(), &compression, &status);
  bool const streamed = gzip_ && n > 0 && compression == 0 && summable<T>(bitpix, datatype);
  std::vector<long> const shape = streamed ? std::vector<long>(naxes.size(), 1) : naxes;
  fits_create_img(f_.get(), bitpix, static_cast<int>(shape.size()), const_cast<long*>(shape.data()),
                  &status);
  fits_update_key(f_.get(), TSTRING, "EXTNAME", const_cast<char*>(extname), nullptr, &status);
  if (bunit)
    fits_update_key(f_.get(), TSTRING, "BUNIT", const_cast<char*>(bunit), nullptr, &status);
  if (n > 0 && !streamed) fits_write_img(f_.get(), datatype, 1, n, const_cast<T*>(data), &status);
  check(status, extname, "write the image");
  remember_datasum(bitpix, datatype, data, n);
  if (streamed) {
    int hdu = 0;
    fits_get_hdu_num(f_.get(), &hdu);
    streamed_.push_back({hdu, naxes, data, int(sizeof(T)), stored_flip<T>, datasums_.at(hdu)});
  }
}

// The stored words are the values' own bits (with the sign bit of unsigned 32-bit values
// flipped: BZERO = 2^31, stored_flip) for uncompressed float, double and unsigned images.
template <class T>
bool FitsWriter::summable(int bitpix, int datatype) {
  return (std::is_same_v<T, float> && bitpix == FLOAT_IMG && datatype == TFLOAT) ||
         (std::is_same_v<T, double> && bitpix == DOUBLE_IMG && datatype == TDOUBLE) ||
         (std::is_same_v<T, unsigned> && bitpix == ULONG_IMG && datatype == TUINT);
}

// Other kinds are left to commit().
template <class T>
void FitsWriter::remember_datasum(int bitpix, int datatype, T const* data, long long n) {
  int status = 0, hdu = 0;
  if (!summable<T>(bitpix, datatype) || fits_is_compressed_image(f_.get(), &status) || status)
    return;
  if constexpr (sizeof(T) == 4 || sizeof(T) == 8) {
    fits_get_hdu_num(f_.get(), &hdu);
    datasums_[hdu] = fits_datasum(data, static_cast<std::size_t>(n), stored_flip<T>);
  }
}

}  // namespace kspecter::io
