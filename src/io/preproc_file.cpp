// Preproc images through CFITSIO: reader with a header scan that tells a missing HDU from a
// truncated file, and an atomic writer.
#include "atomic_output.hpp"
#include "fits_header_guard.hpp"
#include "fits_support.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/core/version.hpp>
#include <kspecter/io/preproc_file.hpp>

#include <fitsio.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>

namespace kspecter::io {

namespace {

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

char const* hdu_type_name(int type) {
  switch (type) {
    case IMAGE_HDU: return "an image";
    case ASCII_TBL: return "an ASCII table";
    case BINARY_TBL: return "a binary table";
    default: return "an unknown HDU type";
  }
}

// What the header scan learnt about one HDU.
struct HduInfo {
  int index = 0;        // 1-based, as fits_movabs_hdu counts
  std::string extname;  // upper case, "" when absent
  int type = IMAGE_HDU;
  bool has_data = false;     // NAXIS > 0 and every axis > 0
  long long padded_end = 0;  // byte just past the HDU's data, padded to a 2880-byte block
};

// An open FITS file with the list of its complete headers. CFITSIO opens truncated files
// without complaint and only fails on the read, and when it cannot find the header that
// follows a truncated data unit it reports the HDU as missing; the scan lets us say
// "truncated" instead.
class FitsIn {
 public:
  explicit FitsIn(std::string path) : path_(std::move(path)) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::exists(path_, ec)) throw InputError(path_, "", "file not found");
    if (!fs::is_regular_file(path_, ec)) throw InputError(path_, "", "not a regular file");
    file_size_ = static_cast<long long>(fs::file_size(path_, ec));
    if (ec) throw InputError(path_, "", "cannot read its size: " + ec.message());
    guard_fits_headers(path_);
    int status = 0;
    fitsfile* raw = nullptr;
    // The disk-file variant takes the name literally (no CFITSIO extended-filename syntax).
    fits_open_diskfile(&raw, path_.c_str(), READONLY, &status);
    if (status) {
      if (raw) {
        int s2 = 0;
        fits_close_file(raw, &s2);
      }
      throw InputError(path_, "", "not a readable FITS file: " + fits_message(status));
    }
    f_.reset(raw);
    scan();
  }

  fitsfile* get() const { return f_.get(); }
  std::string const& path() const { return path_; }
  long long file_size() const { return file_size_; }

  HduInfo const* find(std::string const& name) const {
    std::string const want = upper(name);
    for (auto const& h : hdus_)
      if (h.extname == want) return &h;
    return nullptr;
  }
  HduInfo const& primary() const { return hdus_.front(); }

  // The HDU, made current, with its data verified to be inside the file.
  HduInfo const& move_to(std::string const& name, bool primary_fallback = false) const {
    HduInfo const* h = find(name);
    if (!h && primary_fallback && primary().extname.empty() && primary().has_data) h = &primary();
    if (!h) {
      std::string what = "HDU not found";
      if (file_size_ > hdus_.back().padded_end)
        what += " (the file has " + std::to_string(file_size_ - hdus_.back().padded_end) +
                " bytes after its last complete HDU: truncated or corrupt?)";
      throw InputError(path_, name, what);
    }
    // CFITSIO reads whole 2880-byte blocks, so even a missing final padding makes the data
    // unreadable: call that truncated too.
    if (h->padded_end > file_size_)
      throw InputError(path_, name,
                       "file is truncated: the data of this HDU end at byte " +
                           std::to_string(h->padded_end) + " but the file has only " +
                           std::to_string(file_size_) + " bytes");
    int status = 0, type = 0;
    fits_movabs_hdu(f_.get(), h->index, &type, &status);
    if (status) throw InputError(path_, name, "cannot move to HDU: " + fits_message(status));
    return *h;
  }

 private:
  void scan() {
    fitsfile* f = f_.get();
    for (int i = 1;; ++i) {
      int status = 0, type = 0;
      if (fits_movabs_hdu(f, i, &type, &status)) {
        fits_clear_errmsg();
        if (i == 1) throw InputError(path_, "", "cannot read the primary header");
        break;
      }
      HduInfo h;
      h.index = i;
      h.type = type;
      char value[FLEN_VALUE] = {0};
      if (fits_read_key(f, TSTRING, "EXTNAME", value, nullptr, &status) == 0)
        h.extname = upper(value);
      status = 0;
      fits_clear_errmsg();
      LONGLONG headstart = 0, datastart = 0, dataend = 0;
      fits_get_hduaddrll(f, &headstart, &datastart, &dataend, &status);
      auto key = [&](char const* k, long long def) { return read_integer_key(f, k).value_or(def); };
      long long const naxis = key("NAXIS", 0);
      // The product saturates: sizes that overflow are sizes no file of ours holds.
      long long n = naxis > 0 ? 1 : 0;
      for (long long a = 1; a <= naxis && n > 0; ++a) {
        long long const len = key(("NAXIS" + std::to_string(a)).c_str(), 0);
        n = len <= 0 ? 0
            : n > std::numeric_limits<long long>::max() / len
                ? std::numeric_limits<long long>::max()
                : n * len;
      }
      h.has_data = n > 0;
      h.padded_end = dataend;
      // CFITSIO computes the data end without overflow checks: a header whose NAXISn
      // product does not fit below it is corrupt, reported like a truncated file.
      long long const bytes = std::llabs(key("BITPIX", 8)) / 8;
      if (bytes > 0 && n > (dataend - datastart) / bytes) status = BAD_NAXIS;
      if (status) {
        fits_clear_errmsg();
        h.padded_end = file_size_ + 1;
      }
      hdus_.push_back(h);
    }
  }

  std::string path_;
  FitsPtr f_;
  long long file_size_ = 0;
  std::vector<HduInfo> hdus_;
};

// Shape of the current HDU, which must be an image; naxes fastest first.
std::vector<long> image_shape(FitsIn const& in, std::string const& hdu, HduInfo const& h) {
  if (h.type != IMAGE_HDU)
    throw InputError(in.path(), hdu,
                     std::string("expected an image, found ") + hdu_type_name(h.type));
  int status = 0, naxis = 0;
  fits_get_img_dim(in.get(), &naxis, &status);
  std::vector<long> ax(naxis > 0 ? naxis : 0);
  if (naxis > 0) fits_get_img_size(in.get(), naxis, ax.data(), &status);
  if (status) throw InputError(in.path(), hdu, "cannot read image size: " + fits_message(status));
  return ax;
}

int equiv_bitpix(FitsIn const& in, std::string const& hdu) {
  int status = 0, bitpix = 0;
  fits_get_img_equivtype(in.get(), &bitpix, &status);
  if (status) throw InputError(in.path(), hdu, "cannot read BITPIX: " + fits_message(status));
  return bitpix;
}

// Reads the current image HDU in blocks, converting each value with `put(index, value)`.
template <class T, class Put>
void read_blocks(FitsIn const& in, std::string const& hdu, int datatype, long long n, Put put) {
  constexpr long long block = 1 << 20;
  std::vector<T> buf(static_cast<std::size_t>(std::min(n, block)));
  for (long long first = 0; first < n; first += block) {
    long long const m = std::min(block, n - first);
    int status = 0, anynul = 0;
    fits_read_img(in.get(), datatype, first + 1, m, nullptr, buf.data(), &anynul, &status);
    if (status)
      throw InputError(in.path(), hdu,
                       "cannot read pixels " + std::to_string(first) + ".." +
                           std::to_string(first + m - 1) + ": " + fits_message(status));
    for (long long i = 0; i < m; ++i) put(first + i, buf[static_cast<std::size_t>(i)]);
  }
}

void require_2d_shape(FitsIn const& in, std::string const& hdu, std::vector<long> const& ax, int nx,
                      int ny) {
  if (ax.size() != 2) {
    throw InputError(in.path(), hdu,
                     "expected a 2-D image, found " + std::to_string(ax.size()) + " axes");
  }
  if (nx >= 0 && (ax[0] != nx || ax[1] != ny))
    throw InputError(in.path(), hdu,
                     "shape " + std::to_string(ax[1]) + " x " + std::to_string(ax[0]) +
                         " (rows x columns) does not match IMAGE's " + std::to_string(ny) + " x " +
                         std::to_string(nx));
}

bool is_integer_bitpix(int b) {
  return b == BYTE_IMG || b == SBYTE_IMG || b == SHORT_IMG || b == USHORT_IMG || b == LONG_IMG ||
         b == ULONG_IMG || b == LONGLONG_IMG || b == ULONGLONG_IMG;
}

// Folds a mask value into 32 bits, keeping nonzero values nonzero.
int fold_mask(std::uint64_t v) {
  auto lo = static_cast<std::uint32_t>(v);
  if (v != 0 && lo == 0) lo = 0x80000000u;
  return static_cast<int>(lo);
}

// ---------------------------------------------------------------- writing helpers

void check_write(int status, std::string const& path, std::string const& hdu, char const* what) {
  if (status) throw InputError(path, hdu, std::string(what) + ": " + fits_message(status));
}

template <class T>
void write_image_hdu(fitsfile* f, std::string const& path, char const* extname, int bitpix,
                     int datatype, std::vector<long> naxes, T const* data, char const* bunit) {
  int status = 0;
  fits_create_img(f, bitpix, static_cast<int>(naxes.size()), naxes.data(), &status);
  fits_update_key(f, TSTRING, "EXTNAME", const_cast<char*>(extname), nullptr, &status);
  if (bunit) fits_update_key(f, TSTRING, "BUNIT", const_cast<char*>(bunit), nullptr, &status);
  long long n = 1;
  for (long a : naxes) n *= a;
  if (n > 0) fits_write_img(f, datatype, 1, n, const_cast<T*>(data), &status);
  check_write(status, path, extname, "cannot write image");
}

bool is_reserved_key(std::string const& k) {
  std::string const u = upper(k);
  static char const* const reserved[] = {"SIMPLE", "BITPIX",  "EXTEND", "XTENSION", "PCOUNT",
                                         "GCOUNT", "EXTNAME", "END",    "BSCALE",   "BZERO"};
  for (auto r : reserved)
    if (u == r) return true;
  return u.compare(0, 5, "NAXIS") == 0;
}

void write_card(fitsfile* f, std::string const& path, std::string const& key,
                std::string const& value) {
  if (key.empty() || is_reserved_key(key))
    throw ParameterError(path + ": header card '" + key + "' is reserved or empty");
  int status = 0;
  char* k = const_cast<char*>(key.c_str());
  errno = 0;
  char* end = nullptr;
  long long const iv = std::strtoll(value.c_str(), &end, 10);
  if (!value.empty() && errno == 0 && *end == '\0') {
    long long v = iv;
    fits_update_key(f, TLONGLONG, k, &v, nullptr, &status);
  } else {
    errno = 0;
    double const dv = std::strtod(value.c_str(), &end);
    if (!value.empty() && errno == 0 && *end == '\0' && std::isfinite(dv)) {
      double v = dv;
      fits_update_key(f, TDOUBLE, k, &v, nullptr, &status);
    } else if (value == "T" || value == "F") {
      int v = value == "T";
      fits_update_key(f, TLOGICAL, k, &v, nullptr, &status);
    } else {
      fits_update_key_longstr(f, k, const_cast<char*>(value.c_str()), nullptr, &status);
    }
  }
  if (status)
    throw InputError(path, "IMAGE",
                     "cannot write header card '" + key + "': " + fits_message(status));
}

}  // namespace

// ---------------------------------------------------------------- reading

PreprocImage read_preproc(std::string const& path) {
  FitsIn in(path);
  PreprocImage img;
  img.path = path;

  // IMAGE: any BITPIX; floats and scaled integers both come out as doubles.
  HduInfo const& hi = in.move_to("IMAGE", /*primary_fallback=*/true);
  auto const ax = image_shape(in, "IMAGE", hi);
  require_2d_shape(in, "IMAGE", ax, -1, -1);
  if (ax[0] <= 0 || ax[1] <= 0) throw InputError(path, "IMAGE", "empty image");
  if (ax[0] > std::numeric_limits<int>::max() || ax[1] > std::numeric_limits<int>::max())
    throw InputError(path, "IMAGE", "image too large for int pixel indices");
  img.nx = static_cast<int>(ax[0]);
  img.ny = static_cast<int>(ax[1]);
  long long const n = static_cast<long long>(img.nx) * img.ny;
  img.image.resize(static_cast<std::size_t>(n));
  read_blocks<double>(in, "IMAGE", TDOUBLE, n,
                      [&](long long i, double v) { img.image[i] = static_cast<float>(v); });

  HduInfo const& hv = in.move_to("IVAR");
  require_2d_shape(in, "IVAR", image_shape(in, "IVAR", hv), img.nx, img.ny);
  img.ivar.resize(static_cast<std::size_t>(n));
  read_blocks<double>(in, "IVAR", TDOUBLE, n,
                      [&](long long i, double v) { img.ivar[i] = static_cast<float>(v); });

  HduInfo const& hm = in.move_to("MASK");
  require_2d_shape(in, "MASK", image_shape(in, "MASK", hm), img.nx, img.ny);
  int const mb = equiv_bitpix(in, "MASK");
  if (!is_integer_bitpix(mb))
    throw InputError(path, "MASK", "expected an integer image, found BITPIX " + std::to_string(mb));
  img.mask.resize(static_cast<std::size_t>(n));
  if (mb == ULONGLONG_IMG) {
    read_blocks<unsigned long long>(
        in, "MASK", TULONGLONG, n,
        [&](long long i, unsigned long long v) { img.mask[i] = fold_mask(v); });
  } else {
    read_blocks<long long>(in, "MASK", TLONGLONG, n, [&](long long i, long long v) {
      img.mask[i] = fold_mask(static_cast<std::uint64_t>(v));
    });
  }

  // Make bad pixels harmless (see the header).
  for (long long i = 0; i < n; ++i) {
    bool const image_ok = std::isfinite(img.image[i]);
    if (!image_ok) img.image[i] = 0.0f;
    float const iv = img.ivar[i];
    if (!image_ok || img.mask[i] != 0 || !std::isfinite(iv) || iv < 0.0f) img.ivar[i] = 0.0f;
  }
  img.has_fibermap = in.find("FIBERMAP") != nullptr;
  return img;
}

std::optional<TruthSpectra> read_truth(std::string const& path) {
  FitsIn in(path);
  if (!in.find("TRUTH_FLUX")) return std::nullopt;
  TruthSpectra t;

  HduInfo const& hw = in.move_to("TRUTH_WAVE");
  auto const aw = image_shape(in, "TRUTH_WAVE", hw);
  if (aw.size() != 1 || aw[0] <= 0)
    throw InputError(path, "TRUTH_WAVE", "expected a non-empty 1-D image");
  long long const nwave = aw[0];
  t.wavelength.resize(static_cast<std::size_t>(nwave));
  read_blocks<double>(in, "TRUTH_WAVE", TDOUBLE, nwave,
                      [&](long long i, double v) { t.wavelength[i] = v; });
  for (long long i = 0; i < nwave; ++i) {
    if (!std::isfinite(t.wavelength[i]) || t.wavelength[i] <= 0 ||
        (i > 0 && !(t.wavelength[i] > t.wavelength[i - 1])))
      throw InputError(path, "TRUTH_WAVE",
                       "wavelengths must be positive, finite and strictly increasing (index " +
                           std::to_string(i) + ")");
  }

  HduInfo const& hf = in.move_to("TRUTH_FLUX");
  auto const af = image_shape(in, "TRUTH_FLUX", hf);
  if (af.size() != 2 || af[0] != nwave || af[1] <= 0 || af[1] > std::numeric_limits<int>::max())
    throw InputError(
        path, "TRUTH_FLUX",
        "expected a 2-D image [nspec][" + std::to_string(nwave) + "] matching TRUTH_WAVE");
  t.nspec = static_cast<int>(af[1]);
  auto integer_key = [&](char const* key, long long absent) {
    auto const text = read_key_text(in.get(), key);
    if (!text) return absent;
    auto const v = parse_integer(*text);
    if (!v)
      throw InputError(path, "TRUTH_FLUX", std::string(key) + " = " + *text + " is not an integer");
    return *v;
  };
  long long const specmin = integer_key("SPECMIN", 0);
  long long const nspec_key = integer_key("NSPEC", t.nspec);
  if (specmin < 0 || specmin > std::numeric_limits<int>::max() - t.nspec)
    throw InputError(
        path, "TRUTH_FLUX",
        "SPECMIN " + std::to_string(specmin) + " is not the index of a first spectrum");
  if (nspec_key != t.nspec)
    throw InputError(path, "TRUTH_FLUX",
                     "NSPEC = " + std::to_string(nspec_key) + " but the image has " +
                         std::to_string(t.nspec) + " rows");
  t.specmin = static_cast<int>(specmin);
  long long const n = nwave * t.nspec;
  t.flux.resize(static_cast<std::size_t>(n));
  read_blocks<double>(in, "TRUTH_FLUX", TDOUBLE, n, [&](long long i, double v) { t.flux[i] = v; });
  for (long long i = 0; i < n; ++i)
    if (!std::isfinite(t.flux[i]))
      throw InputError(path, "TRUTH_FLUX",
                       "non-finite flux at spectrum " + std::to_string(i / nwave) + ", bin " +
                           std::to_string(i % nwave));

  // Fiber types, when a FIBERMAP with OBJTYPE has one row per spectrum.
  if (HduInfo const* fm = in.find("FIBERMAP"); fm && fm->type == BINARY_TBL) {
    in.move_to("FIBERMAP");
    int col = 0;
    long nrows = 0;
    int status = 0;
    fits_get_num_rows(in.get(), &nrows, &status);
    if (fits_get_colnum(in.get(), CASEINSEN, const_cast<char*>("OBJTYPE"), &col, &status) == 0 &&
        nrows == t.nspec) {
      // CFITSIO writes a whole cell (width + 1 bytes) into each buffer.
      int type = 0;
      long repeat = 0, width = 0;
      fits_get_coltype(in.get(), col, &type, &repeat, &width, &status);
      if (status || type != TSTRING)
        throw InputError(path, "FIBERMAP", "OBJTYPE is not a fixed-width character column");
      std::vector<std::vector<char>> buf(t.nspec, std::vector<char>(std::max(width, 1L) + 1, 0));
      std::vector<char*> ptr(t.nspec);
      for (int i = 0; i < t.nspec; ++i) ptr[i] = buf[i].data();
      int anynul = 0;
      fits_read_col(in.get(), TSTRING, col, 1, 1, t.nspec, nullptr, ptr.data(), &anynul, &status);
      if (status)
        throw InputError(path, "FIBERMAP", "cannot read OBJTYPE: " + fits_message(status));
      for (int i = 0; i < t.nspec; ++i) t.objtype.push_back(upper(buf[i].data()));
    }
    int fcol = 0;
    status = 0;
    if (nrows == t.nspec &&
        fits_get_colnum(in.get(), CASEINSEN, const_cast<char*>("FIBER"), &fcol, &status) == 0) {
      long long first = 0;
      int anynul = 0;
      fits_read_col(in.get(), TLONGLONG, fcol, 1, 1, 1, nullptr, &first, &anynul, &status);
      if (status == 0 && first >= t.specmin &&
          first - t.specmin <= std::numeric_limits<int>::max() - t.specmin - t.nspec)
        t.fibermin = static_cast<int>(first - t.specmin);
    }
    fits_clear_errmsg();
  }
  return t;
}

bool has_hdu(std::string const& path, std::string const& hdu) {
  try {
    FitsIn in(path);
    return in.find(hdu) != nullptr;
  } catch (InputError const&) {
    return false;
  }
}

// ---------------------------------------------------------------- writing

void write_preproc(std::string const& path, PreprocImage const& img, TruthSpectra const* truth,
                   std::vector<std::pair<std::string, std::string>> const& header) {
  auto need = [&](std::size_t have, std::size_t want, char const* what) {
    if (have != want)
      throw ParameterError(path + ": " + what + " has " + std::to_string(have) +
                           " values, expected " + std::to_string(want));
  };
  if (img.nx <= 0 || img.ny <= 0)
    throw ParameterError(path + ": image size " + std::to_string(img.ny) + " x " +
                         std::to_string(img.nx) + " is empty");
  std::size_t const n = static_cast<std::size_t>(img.nx) * img.ny;
  need(img.image.size(), n, "IMAGE");
  need(img.ivar.size(), n, "IVAR");
  need(img.mask.size(), n, "MASK");
  if (truth) {
    if (truth->nspec <= 0 || truth->wavelength.empty() || truth->specmin < 0)
      throw ParameterError(path + ": truth spectra are empty or have a negative SPECMIN");
    need(truth->flux.size(), std::size_t(truth->nspec) * truth->wavelength.size(), "TRUTH_FLUX");
    if (!truth->objtype.empty()) need(truth->objtype.size(), truth->nspec, "OBJTYPE");
  }

  AtomicOutput out(path);
  int status = 0;
  FitsPtr f = create_fits(out, status);
  check_write(status, path, "", "cannot create file");

  write_image_hdu(f.get(), path, "IMAGE", FLOAT_IMG, TFLOAT, {long(img.nx), long(img.ny)},
                  img.image.data(), "electron");
  std::string const tool = std::string("kspecter ") + version();
  fits_update_key(f.get(), TSTRING, "CREATOR", const_cast<char*>(tool.c_str()),
                  "program that wrote this file", &status);
  check_write(status, path, "IMAGE", "cannot write header");
  for (auto const& [key, value] : header) write_card(f.get(), path, key, value);

  write_image_hdu(f.get(), path, "IVAR", FLOAT_IMG, TFLOAT, {long(img.nx), long(img.ny)},
                  img.ivar.data(), "electron**-2");
  write_image_hdu(f.get(), path, "MASK", LONG_IMG, TINT, {long(img.nx), long(img.ny)},
                  img.mask.data(), nullptr);

  if (truth) {
    long const nwave = static_cast<long>(truth->wavelength.size());
    write_image_hdu(f.get(), path, "TRUTH_FLUX", DOUBLE_IMG, TDOUBLE, {nwave, long(truth->nspec)},
                    truth->flux.data(), "electron/Angstrom");
    int v = truth->specmin;
    fits_update_key(f.get(), TINT, "SPECMIN", &v, "first spectrum (fiber index)", &status);
    v = truth->nspec;
    fits_update_key(f.get(), TINT, "NSPEC", &v, "number of spectra", &status);
    check_write(status, path, "TRUTH_FLUX", "cannot write header");
    write_image_hdu(f.get(), path, "TRUTH_WAVE", DOUBLE_IMG, TDOUBLE, {nwave},
                    truth->wavelength.data(), "Angstrom");
    if (!truth->objtype.empty()) {
      char const* names[] = {"FIBER", "OBJTYPE"};
      char const* forms[] = {"J", "3A"};
      fits_create_tbl(f.get(), BINARY_TBL, truth->nspec, 2, const_cast<char**>(names),
                      const_cast<char**>(forms), nullptr, const_cast<char*>("FIBERMAP"), &status);
      std::vector<int> fiber(truth->nspec);
      std::vector<std::string> ot(truth->objtype);
      std::vector<char*> ptr(truth->nspec);
      for (int i = 0; i < truth->nspec; ++i) {
        fiber[i] = truth->fibermin + truth->specmin + i;
        ot[i].resize(3, ' ');
        ptr[i] = ot[i].data();
      }
      fits_write_col(f.get(), TINT, 1, 1, 1, truth->nspec, fiber.data(), &status);
      fits_write_col(f.get(), TSTRING, 2, 1, 1, truth->nspec, ptr.data(), &status);
      check_write(status, path, "FIBERMAP", "cannot write table");
    }
  }
  fits_close_file(f.release(), &status);
  check_write(status, path, "", "cannot finish writing");
  out.commit();
}

void copy_hdu(std::string const& from_path, std::string const& hdu, std::string const& to_path) {
  FitsIn in(from_path);
  in.move_to(hdu);
  if (!std::filesystem::is_regular_file(to_path))
    throw InputError(to_path, "", "cannot append to it: file not found");
  int status = 0;
  fitsfile* raw = nullptr;
  fits_open_diskfile(&raw, to_path.c_str(), READWRITE, &status);
  if (status) {
    if (raw) {
      int s2 = 0;
      fits_close_file(raw, &s2);
    }
    throw InputError(to_path, "", "cannot open for appending: " + fits_message(status));
  }
  FitsPtr out(raw);
  fits_copy_hdu(in.get(), out.get(), 0, &status);
  if (status) throw InputError(to_path, hdu, "cannot append a copy: " + fits_message(status));
  raw = out.release();
  fits_close_file(raw, &status);
  if (status) throw InputError(to_path, hdu, "cannot finish writing: " + fits_message(status));
}

}  // namespace kspecter::io
