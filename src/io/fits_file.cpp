#include "fits_file.hpp"

#include "fits_header_guard.hpp"
#include "gzip_file.hpp"
#include "rice_tiles.hpp"

#include <kspecter/core/error.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <streambuf>

namespace kspecter::io {

namespace {

char const* hdu_type_name(int type) {
  switch (type) {
    case IMAGE_HDU: return "an image";
    case ASCII_TBL: return "an ASCII table";
    case BINARY_TBL: return "a binary table";
    default: return "an unknown HDU type";
  }
}

// The realloc of CFITSIO's memory files, with the new bytes zeroed as a disk file's are:
// CFITSIO grows a memory file without zeroing it, then reads an HDU's reserved rows back (a
// tile-compressed image's tile descriptors) and expects zeros. A reused heap block holds
// garbage there. The block's size is kept in front of it, so that only new bytes are zeroed.
constexpr std::size_t grown_prefix = 64;  // a multiple of malloc's alignment

void* grow_zeroed(void* p, std::size_t n) {
  char* const block = p ? static_cast<char*>(p) - grown_prefix : nullptr;
  std::size_t old = 0;
  if (block) std::memcpy(&old, block, sizeof old);
  auto* const grown = static_cast<char*>(std::realloc(block, n + grown_prefix));
  if (!grown) return nullptr;
  if (n > old) std::memset(grown + grown_prefix + old, 0, n - old);
  std::memcpy(grown, &n, sizeof n);
  return grown + grown_prefix;
}

void free_grown(void* p) {
  if (p) std::free(static_cast<char*>(p) - grown_prefix);
}

bool ends_with(std::string const& s, std::string const& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Bytes in memory as a read-only, seekable stream, for guard_fits_headers.
class MemoryStreamBuf : public std::streambuf {
 public:
  MemoryStreamBuf(char* data, std::size_t size) { setg(data, data, data + size); }

 protected:
  pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode) override {
    off_type const base = dir == std::ios_base::beg   ? 0
                          : dir == std::ios_base::cur ? gptr() - eback()
                                                      : egptr() - eback();
    off_type const to = base + off;
    if (to < 0 || to > egptr() - eback()) return pos_type(off_type(-1));
    setg(eback(), eback() + to, egptr());
    return pos_type(to);
  }
  pos_type seekpos(pos_type pos, std::ios_base::openmode which) override {
    return seekoff(off_type(pos), std::ios_base::beg, which);
  }
};

// The header of the current HDU of `f` as records (the image header of a compressed image).
FitsHeader header_of(fitsfile* f, int& status) {
  FitsHeader h;
  char* text = nullptr;
  int nkeys = 0;
  if (fits_convert_hdr2str(f, 0, nullptr, 0, &text, &nkeys, &status)) return h;
  std::size_t const len = std::strlen(text);
  for (std::size_t at = 0; at + 80 <= len; at += 80) {
    std::string r(text + at, 80);
    if (r.compare(0, 8, "END     ") == 0) break;
    h.add_record(std::move(r));
  }
  int st = 0;
  fits_free_memory(text, &st);
  return h;
}

// CHECKSUM and DATASUM of the current HDU (the FITS checksum convention), with fixed comments:
// CFITSIO's fits_write_chksum stamps the time into them, so the same data would give
// different bytes on every run. The keywords are placed first (the header's size is then
// final), the data unit is summed once (fits_write_chksum and fits_get_chksum would read it
// twice: a full frame's write spent a third of its time there) or not at all when its sum is
// `known` (summed from memory as it was written), then the header, its CHECKSUM still zeros,
// is summed onto DATASUM and CHECKSUM is that sum's complement.
void write_checksums(fitsfile* f, std::optional<unsigned long> known, int& status) {
  fits_update_key_str(f, "CHECKSUM", const_cast<char*>("0000000000000000"), "HDU checksum",
                      &status);
  fits_update_key_str(f, "DATASUM", const_cast<char*>("0"), "data unit checksum", &status);
  fits_set_hdustruc(f, &status);  // the header's end after the new keywords
  LONGLONG head = 0, data = 0, end = 0;
  fits_get_hduaddrll(f, &head, &data, &end, &status);
  if (status) return;
  constexpr LONGLONG block = 2880;
  constexpr int kReportEof = 0;  // fitsio2.h's REPORT_EOF: reading past the end is an error
  unsigned long datasum = known.value_or(0);
  if (!known && end > data) {
    ffmbyt(f, data, kReportEof, &status);
    ffcsum(f, long((end - data + block - 1) / block), &datasum, &status);
  }
  std::string const text = std::to_string(datasum);
  fits_update_key_str(f, "DATASUM", const_cast<char*>(text.c_str()), "data unit checksum", &status);
  unsigned long hdusum = datasum;
  ffmbyt(f, head, kReportEof, &status);
  ffcsum(f, long((data - head) / block), &hdusum, &status);
  char ascii[17] = {0};
  fits_encode_chksum(hdusum, 1, ascii);  // complemented: the HDU then sums to -0
  fits_modify_key_str(f, "CHECKSUM", ascii, "&", &status);
}

}  // namespace

// ------------------------------------------------------------------ reading

FitsReader::FitsReader(std::string path, GzipAlternative alt) : path_(std::move(path)) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path_, ec)) {
    if (alt == GzipAlternative::no) throw InputError(path_, "", "cannot open: file not found");
    std::string const other =
        ends_with(path_, ".gz") ? path_.substr(0, path_.size() - 3) : path_ + ".gz";
    if (!fs::exists(other, ec))
      throw InputError(path_, "", "cannot open: file not found (nor " + other + ")");
    path_ = other;
  }
  if (!fs::is_regular_file(path_, ec))
    throw InputError(path_, "", "cannot open: not a regular file");
  size_ = static_cast<long long>(fs::file_size(path_, ec));
  if (ec) throw InputError(path_, "", "cannot read its size: " + ec.message());
  open();
  scan();
}

void FitsReader::open() {
  int status = 0;
  fitsfile* raw = nullptr;
  bool const gz = is_gzip_file(path_);
  if (gz) {
    auto prefetched = take_prefetched_gzip(path_);
    memory_ = prefetched ? std::move(*prefetched) : read_gzip(path_);
    size_ = static_cast<long long>(memory_.size());
    MemoryStreamBuf buf(memory_.data(), memory_.size());
    std::istream in(&buf);
    guard_fits_headers(path_, in);
    memory_ptr_ = memory_.data();
    memory_size_ = memory_.size();
    // Read-only: CFITSIO never reallocates or frees the buffer.
    fits_open_memfile(&raw, path_.c_str(), READONLY, &memory_ptr_, &memory_size_, 0, nullptr,
                      &status);
  } else {
    guard_fits_headers(path_);
    // The disk-file variant takes the name literally (no extended-filename syntax).
    fits_open_diskfile(&raw, path_.c_str(), READONLY, &status);
  }
  if (status) {
    if (raw) {
      int s2 = 0;
      fits_close_file(raw, &s2);
    }
    throw InputError(path_, "",
                     std::string("cannot open: not a readable FITS file") +
                         (gz ? " inside the gzip" : "") + ": " + fits_message(status));
  }
  f_.reset(raw);
}

// CFITSIO opens truncated files without complaint and only fails on the read, and when it
// cannot find the header that follows a truncated data unit it reports the HDU as missing;
// the scan of every header lets move_to say "truncated" instead.
void FitsReader::scan() {
  fitsfile* f = f_.get();
  for (int i = 1;; ++i) {
    int status = 0, type = 0;
    if (fits_movabs_hdu(f, i, &type, &status)) {
      fits_clear_errmsg();
      if (i == 1) throw InputError(path_, "", "cannot open: cannot read the primary header");
      break;
    }
    Hdu h;
    h.index = i;
    h.type = type;
    if (auto const name = read_key_text(f, "EXTNAME"); name && name->size() >= 2) {
      if ((*name)[0] == '\'') h.extname = upper_trimmed(name->substr(1, name->rfind('\'') - 1));
    }
    LONGLONG headstart = 0, datastart = 0, dataend = 0;
    fits_get_hduaddrll(f, &headstart, &datastart, &dataend, &status);
    auto key = [&](char const* k, long long def) { return read_integer_key(f, k).value_or(def); };
    long long const naxis = key("NAXIS", 0);
    // The product saturates: sizes that overflow are sizes no file of ours holds.
    long long n = naxis > 0 ? 1 : 0;
    for (long long a = 1; a <= naxis && n > 0; ++a) {
      long long const len = key(("NAXIS" + std::to_string(a)).c_str(), 0);
      n = len <= 0                                          ? 0
          : n > std::numeric_limits<long long>::max() / len ? std::numeric_limits<long long>::max()
                                                            : n * len;
    }
    h.has_data = n > 0;
    h.padded_end = dataend;
    // CFITSIO computes the data end without overflow checks: a header whose NAXISn product
    // does not fit below it is corrupt, reported like a truncated file.
    long long const bytes = std::llabs(key("BITPIX", 8)) / 8;
    if (bytes > 0 && n > (dataend - datastart) / bytes) status = BAD_NAXIS;
    if (status) {
      fits_clear_errmsg();
      h.padded_end = size_ + 1;
    }
    hdus_.push_back(h);
  }
  // A header or data unit that ends early anywhere makes the whole file truncated, whether or
  // not the reader asks for that HDU: a cut inside an optional HDU (READNOISE, FIBERMAP) would
  // otherwise go unseen, or the HDU would be taken for missing and made up.
  for (auto const& h : hdus_)
    if (h.padded_end > size_) {
      hdu_ = h.extname.empty() ? "HDU " + std::to_string(h.index) : h.extname;
      if (h.padded_end == size_ + 1)  // marked so above
        fail(
            "the file is truncated or corrupt: the header's sizes describe more data than "
            "the file can hold");
      fail("the file is truncated: the data of this HDU end at byte " +
           std::to_string(h.padded_end) + " but the file has only " + std::to_string(size_) +
           " bytes");
    }
  long long const end = hdus_.back().padded_end;
  if (size_ - end >= 8) {
    // What follows the last HDU CFITSIO could read: a header cut short, or one it cannot
    // parse; unless it is only the zeros (or other bytes) some writers leave at the end.
    // Reported as soon as a reader asks for an HDU that is not among those read (it may be
    // the lost one), and by check_complete().
    std::size_t const look = std::size_t(std::min<long long>(size_ - end, 2880LL * 64));
    std::string text(look, ' ');
    read_bytes(end, text.size(), text.data());
    if (text.compare(0, 8, "XTENSION") == 0) {
      long long header_end = -1;  // its END card's block, padded
      for (std::size_t c = 0; c + 80 <= text.size() && header_end < 0; c += 80)
        if (text.compare(c, 8, "END     ") == 0)
          header_end = end + static_cast<long long>((c + 80 + 2879) / 2880 * 2880);
      std::string const hdu = "HDU " + std::to_string(hdus_.back().index + 1);
      if (header_end >= 0 && header_end <= size_)
        tail_problem_ = "the header of " + hdu + ", at byte " + std::to_string(end) +
                        ", cannot be read: corrupt (CFITSIO cannot parse it)";
      else
        tail_problem_ = "the file is truncated: the header of " + hdu + ", at byte " +
                        std::to_string(end) + ", ends before its " +
                        (header_end < 0 ? "END card" : "2880-byte block") + " (" +
                        std::to_string(size_ - end) + " bytes left)";
    }
  }
}

bool FitsReader::has(std::string const& extname) const {
  if (find(extname)) return true;
  if (!tail_problem_.empty()) throw InputError(path_, extname, tail_problem_);
  return false;
}

void FitsReader::check_complete() const {
  if (!tail_problem_.empty()) throw InputError(path_, "", tail_problem_);
}

FitsReader::Hdu const* FitsReader::find(std::string const& extname) const {
  std::string const want = upper_trimmed(extname);
  for (auto const& h : hdus_)
    if (h.extname == want) return &h;
  return nullptr;
}

void FitsReader::fail(std::string const& what) const { throw InputError(path_, hdu_, what); }

void FitsReader::check(int status, std::string const& doing) const {
  if (status) fail(doing + ": " + fits_message(status));
}

namespace {
thread_local std::string last_hdu;
}  // namespace

std::string const& last_hdu_moved_to() { return last_hdu; }

void FitsReader::move_to(std::string const& extname, int type, bool primary_fallback) {
  hdu_ = extname;
  last_hdu = extname;
  Hdu const* h = find(extname);
  Hdu const& primary = hdus_.front();
  if (!h && primary_fallback && primary.extname.empty() && primary.has_data) h = &primary;
  if (!h && !tail_problem_.empty()) fail(tail_problem_);
  if (!h) {
    std::string what = "HDU not found: missing from the file";
    if (size_ > hdus_.back().padded_end)
      what += " (which has " + std::to_string(size_ - hdus_.back().padded_end) +
              " bytes after its last complete HDU: truncated or corrupt?)";
    fail(what);
  }
  if (type != ANY_HDU && h->type != type)
    fail(std::string("expected ") + hdu_type_name(type) + ", found " + hdu_type_name(h->type));
  // CFITSIO reads whole 2880-byte blocks, so even a missing final padding makes the data
  // unreadable: call that truncated too. Checked before anything is allocated from the
  // header's sizes: a few corrupt header bytes can ask for gigabytes.
  if (h->padded_end > size_)
    fail("the file is truncated: the data of this HDU end at byte " +
         std::to_string(h->padded_end) + " but the file has only " + std::to_string(size_) +
         " bytes");
  int status = 0, t = 0;
  check(fits_movabs_hdu(f_.get(), h->index, &t, &status), "cannot move to the HDU");
}

void FitsReader::move_to_primary() {
  Hdu const& h = hdus_.front();
  hdu_ = h.extname.empty() ? "PRIMARY" : h.extname;
  int status = 0, t = 0;
  check(fits_movabs_hdu(f_.get(), 1, &t, &status), "cannot read the primary HDU");
}

std::optional<std::string> FitsReader::key_string(char const* key) const {
  auto const text = read_key_text(f_.get(), key);
  if (!text) return std::nullopt;
  if (text->empty() || (*text)[0] != '\'')
    fail(std::string("keyword ") + key + " = " + *text + " is not a string");
  int status = 0;
  char* value = nullptr;
  fits_read_key_longstr(f_.get(), key, &value, nullptr, &status);
  check(status, std::string("cannot read keyword ") + key);
  std::string s = value;
  fits_free_memory(value, &status);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::optional<std::string> FitsReader::key_value(char const* key) const {
  auto const text = read_key_text(f_.get(), key);
  if (!text || text->empty() || (*text)[0] != '\'') return text;
  return key_string(key);
}

std::optional<double> FitsReader::key_double(char const* key) const {
  auto const text = read_key_text(f_.get(), key);
  if (!text) return std::nullopt;
  auto const v = parse_real(*text);
  if (!v) fail(std::string("keyword ") + key + " = " + *text + " is not a finite number");
  return v;
}

std::optional<long long> FitsReader::key_integer(char const* key) const {
  auto const text = read_key_text(f_.get(), key);
  if (!text) return std::nullopt;
  if (auto const v = parse_integer(*text)) return v;
  // A real with an integer value (4114.0) is one too.
  auto const v = parse_real(*text);
  if (!v || *v != std::floor(*v) || std::fabs(*v) > 9.0e15)
    fail(std::string("keyword ") + key + " = " + *text + " is not an integer");
  return static_cast<long long>(*v);
}

double FitsReader::need_double(char const* key) const {
  auto const v = key_double(key);
  if (!v) fail(std::string("keyword ") + key + " is missing");
  return *v;
}

long long FitsReader::need_integer(char const* key) const {
  auto const v = key_integer(key);
  if (!v) fail(std::string("keyword ") + key + " is missing");
  return *v;
}

FitsHeader FitsReader::header() const {
  int status = 0;
  FitsHeader h = header_of(f_.get(), status);
  check(status, "cannot read the header");
  return h;
}

std::vector<long> FitsReader::image_shape() const {
  int status = 0, type = 0;
  check(fits_get_hdu_type(f_.get(), &type, &status), "cannot read the HDU type");
  if (type != IMAGE_HDU) fail(std::string("expected an image, found ") + hdu_type_name(type));
  int naxis = 0;
  check(fits_get_img_dim(f_.get(), &naxis, &status), "cannot read the image dimensions");
  std::vector<long> ax(naxis > 0 ? std::size_t(naxis) : 0);
  if (naxis > 0) fits_get_img_size(f_.get(), naxis, ax.data(), &status);
  check(status, "cannot read the image size");
  return ax;
}

void FitsReader::verify_datasum() const {
  if (!read_key_text(f_.get(), "DATASUM")) return;
  int status = 0, data_ok = 0, hdu_ok = 0;
  check(fits_verify_chksum(f_.get(), &data_ok, &hdu_ok, &status), "cannot verify DATASUM");
  if (data_ok == -1) fail("the data do not match their DATASUM: the file is corrupt");
}

void FitsReader::check_compressed_tiles() const {
  std::string const problem = rice_tiles_problem(f_.get());
  if (!problem.empty()) fail("cannot read pixels: " + problem);
}

std::optional<long long> FitsReader::plain_float_data() const {
  int status = 0, bitpix = 0;
  if (fits_is_compressed_image(f_.get(), &status) || status) return std::nullopt;
  check(fits_get_img_type(f_.get(), &bitpix, &status), "cannot read BITPIX");
  if (bitpix != FLOAT_IMG) return std::nullopt;
  if (key_double("BSCALE").value_or(1.0) != 1.0 || key_double("BZERO").value_or(0.0) != 0.0)
    return std::nullopt;
  LONGLONG head = 0, data = 0, end = 0;
  check(fits_get_hduaddrll(f_.get(), &head, &data, &end, &status), "cannot locate the data");
  return static_cast<long long>(data);
}

void FitsReader::read_bytes(long long offset, std::size_t bytes, void* dst) const {
  auto const end = static_cast<unsigned long long>(offset) + bytes;
  if (offset < 0 || end > static_cast<unsigned long long>(size_))
    fail("cannot read bytes " + std::to_string(offset) + ".." + std::to_string(end) +
         ": beyond the end of the file");
  if (gzipped()) {
    std::memcpy(dst, memory_.data() + offset, bytes);
    return;
  }
  int const fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(std::string("cannot open for reading: ") + std::strerror(errno));
  auto* to = static_cast<char*>(dst);
  std::size_t done = 0;
  while (done < bytes) {
    ssize_t const got = ::pread(fd, to + done, bytes - done, off_t(offset + (long long)done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      std::string const why = got < 0 ? std::strerror(errno) : "the file ended";
      ::close(fd);
      fail("cannot read bytes at " + std::to_string(offset + (long long)done) + ": " + why);
    }
    done += std::size_t(got);
  }
  ::close(fd);
}

int FitsReader::equiv_bitpix() const {
  int status = 0, bitpix = 0;
  check(fits_get_img_equivtype(f_.get(), &bitpix, &status), "cannot read BITPIX");
  return bitpix;
}

FitsTable FitsReader::table() const {
  MemoryFits m;
  int status = 0;
  fits_copy_hdu(f_.get(), m.get(), 0, &status);
  return m.finish(path_, hdu_, status);
}

// ------------------------------------------------------------------ writing

FitsWriter::FitsWriter(std::string path)
    : path_(std::move(path)), gzip_(ends_with(path_, ".gz")), out_(path_) {
  int status = 0;
  if (gzip_) {
    // In memory until commit(), which creates the temporary and gzips into it.
    fitsfile* raw = nullptr;
    fits_create_memfile(&raw, &memory_, &memory_size_, 1 << 20, grow_zeroed, &status);
    f_.reset(raw);
  } else {
    f_ = create_fits(out_, status);
  }
  check(status, "", "create the file");
}

FitsWriter::~FitsWriter() {
  if (f_) {
    int status = 0;
    fits_close_file(f_.release(), &status);
  }
  free_grown(memory_);
}

void FitsWriter::check(int status, std::string const& hdu, std::string const& doing) const {
  if (status) throw InputError(path_, hdu, "cannot " + doing + ": " + fits_message(status));
}

void FitsWriter::records(FitsHeader const& header, char const* hdu) {
  int status = 0;
  for (auto const& r : header.records()) fits_write_record(f_.get(), r.c_str(), &status);
  check(status, hdu, "write the header");
}

void FitsWriter::table(FitsTable const& t) {
  void* ptr = nullptr;
  std::size_t size = 0;
  FitsPtr in = open_table(t, ptr, size);
  int status = 0;
  fits_copy_hdu(in.get(), f_.get(), 0, &status);
  check(status, t.extname, "copy the table from " + t.file);
  // The data unit is copied as it is (its padding is zeros in both): its DATASUM is the sum
  // of the source's bytes, taken from memory rather than read back at commit().
  LONGLONG head = 0, data = 0, end = 0;
  int hdu = 0;
  fits_get_hduaddrll(in.get(), &head, &data, &end, &status);
  fits_get_hdu_num(f_.get(), &hdu);
  if (status == 0 && data >= 0 && end >= data && std::size_t(end) <= t.bytes.size())
    datasums_[hdu] = fits_datasum_bytes(t.bytes.data() + data, std::size_t(end - data));
}

void FitsWriter::commit() {
  int status = 0, nhdu = 0;
  fitsfile* f = f_.get();
  fits_get_num_hdus(f, &nhdu, &status);
  // Last HDU first: a checksum that needs a new header block then moves no data written
  // after it (the others have room, or move only what follows them).
  for (int i = nhdu; i >= 1 && status == 0; --i) {
    int type = 0;
    fits_movabs_hdu(f, i, &type, &status);
    auto const known = datasums_.find(i);
    write_checksums(f, known == datasums_.end() ? std::nullopt : std::optional(known->second),
                    status);
  }
  check(status, "", "write the checksums");
  std::vector<PlaceholderSpan> spans;  // where the streamed images' placeholders ended up
  for (auto const& s : streamed_) {
    int type = 0;
    LONGLONG head = 0, data = 0, end = 0;
    fits_movabs_hdu(f, s.hdu, &type, &status);
    fits_get_hduaddrll(f, &head, &data, &end, &status);
    spans.push_back({std::size_t(head), std::size_t(data), std::size_t(end)});
  }
  check(status, "", "find the images' places");
  fits_close_file(f_.release(), &status);
  check(status, "", "finish writing");
  if (gzip_) write_gzip_output(spans);
  out_.commit();
}

void FitsWriter::write_gzip_output(std::vector<PlaceholderSpan> const& spans) {
  int fd = -1;
  out_.create([&](char const* temp) { fd = ::open(temp, O_WRONLY | O_CREAT | O_TRUNC, 0666); });
  if (fd < 0) throw InputError(path_, "", std::string("cannot create: ") + std::strerror(errno));
  auto const* fits = static_cast<unsigned char const*>(memory_);
  std::string err;
  try {
    err = write_gzip(fd, streamed_fits(fits, memory_size_, streamed_, spans));
  } catch (std::exception const& e) {  // a placeholder not as written: closes fd first
    ::close(fd);
    throw InputError(path_, "", std::string("cannot stream the images: ") + e.what());
  }
  if (!err.empty()) throw InputError(path_, "", "cannot write the gzip stream: " + err);
  free_grown(memory_);
  memory_ = nullptr;
}

// ------------------------------------------------------------------ tables

MemoryFits::MemoryFits() {
  int status = 0;
  fitsfile* raw = nullptr;
  fits_create_memfile(&raw, &ptr_, &size_, 2880, grow_zeroed, &status);
  f_.reset(raw);
  if (status == 0) fits_create_img(raw, BYTE_IMG, 0, nullptr, &status);
  if (status) throw Error("cannot make a FITS file in memory: " + fits_message(status));
}

MemoryFits::~MemoryFits() {
  if (f_) {
    int status = 0;
    fits_close_file(f_.release(), &status);
  }
  free_grown(ptr_);
}

FitsTable MemoryFits::finish(std::string const& file, std::string const& extname, int status) {
  FitsTable t;
  t.file = file;
  t.extname = extname;
  fits_get_num_rowsll(f_.get(), &t.nrows, &status);
  if (status == 0) t.header = header_of(f_.get(), status);
  fits_close_file(f_.release(), &status);
  if (status) throw InputError(file, extname, "cannot copy the table: " + fits_message(status));
  t.bytes.assign(static_cast<char*>(ptr_), static_cast<char*>(ptr_) + size_);
  return t;
}

FitsPtr open_table(FitsTable const& t, void*& ptr, std::size_t& size) {
  ptr = const_cast<char*>(t.bytes.data());  // read-only: CFITSIO never writes to it
  size = t.bytes.size();
  fitsfile* raw = nullptr;
  int status = 0, type = 0;
  fits_open_memfile(&raw, t.file.c_str(), READONLY, &ptr, &size, 0, nullptr, &status);
  FitsPtr f(raw);
  if (status == 0) fits_movabs_hdu(raw, 2, &type, &status);
  if (status)
    throw InputError(t.file, t.extname, "cannot reopen the table: " + fits_message(status));
  return f;
}

FitsTable table_rows(FitsTable const& t, long long first, long long count) {
  if (first < 0 || count < 0 || first > t.nrows - count)
    throw InputError(t.file, t.extname,
                     "has " + std::to_string(t.nrows) + " rows, but rows " + std::to_string(first) +
                         " .. " + std::to_string(first + count - 1) + " are needed");
  void* in_ptr = nullptr;
  std::size_t in_size = 0;
  FitsPtr in = open_table(t, in_ptr, in_size);
  MemoryFits m;
  int status = 0;
  fits_copy_hdu(in.get(), m.get(), 0, &status);
  long long const after = t.nrows - first - count;
  if (after > 0) fits_delete_rows(m.get(), first + count + 1, after, &status);
  if (first > 0) fits_delete_rows(m.get(), 1, first, &status);
  return m.finish(t.file, t.extname, status);
}

std::optional<std::vector<long long>> integer_column(FitsTable const& t, std::string const& name) {
  void* ptr = nullptr;
  std::size_t size = 0;
  FitsPtr f = open_table(t, ptr, size);
  int status = 0, col = 0;
  fits_get_colnum(f.get(), CASEINSEN, const_cast<char*>(name.c_str()), &col, &status);
  if (status == COL_NOT_FOUND) {
    fits_clear_errmsg();
    return std::nullopt;
  }
  int type = 0;
  long repeat = 0, width = 0;
  fits_get_coltype(f.get(), col, &type, &repeat, &width, &status);
  if (status) throw InputError(t.file, t.extname, "column " + name + ": " + fits_message(status));
  bool const integer = type == TBYTE || type == TSBYTE || type == TSHORT || type == TUSHORT ||
                       type == TINT || type == TUINT || type == TLONG || type == TULONG ||
                       type == TLONGLONG;
  if (!integer || repeat != 1)
    throw InputError(t.file, t.extname,
                     "column " + name + " is not an integer column of one value per row");
  std::vector<long long> v(static_cast<std::size_t>(t.nrows));
  int anynul = 0;
  if (t.nrows > 0)
    fits_read_col(f.get(), TLONGLONG, col, 1, 1, t.nrows, nullptr, v.data(), &anynul, &status);
  if (status)
    throw InputError(t.file, t.extname, "cannot read column " + name + ": " + fits_message(status));
  return v;
}

FitsTable integer_table(std::string const& extname, std::string const& name,
                        std::vector<long long> const& values) {
  MemoryFits m;
  int status = 0;
  char const* ttype[] = {name.c_str()};
  char const* tform[] = {"J"};
  fits_create_tbl(m.get(), BINARY_TBL, 0, 1, const_cast<char**>(ttype), const_cast<char**>(tform),
                  nullptr, const_cast<char*>(extname.c_str()), &status);
  if (!values.empty())
    fits_write_col(m.get(), TLONGLONG, 1, 1, 1, static_cast<LONGLONG>(values.size()),
                   const_cast<long long*>(values.data()), &status);
  return m.finish("", extname, status);
}

}  // namespace kspecter::io
