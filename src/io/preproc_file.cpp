// Preproc images through the FITS layer (fits_file.hpp).
#include "fits_file.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/core/huge_pages.hpp>
#include <kspecter/core/version.hpp>
#include <kspecter/io/preproc_file.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <future>
#include <limits>
#include <thread>
#include <type_traits>
#include <vector>

namespace kspecter::io {

namespace {

// The current image's axes, which must be 2-D and, when nx >= 0, nx x ny.
std::vector<long> shape_2d(FitsReader const& in, int nx, int ny) {
  auto const ax = in.image_shape();
  if (ax.size() != 2) in.fail("expected a 2-D image, found " + std::to_string(ax.size()) + " axes");
  if (nx >= 0 && (ax[0] != nx || ax[1] != ny))
    in.fail("shape " + std::to_string(ax[1]) + " x " + std::to_string(ax[0]) +
            " (rows x columns) does not match IMAGE's " + std::to_string(ny) + " x " +
            std::to_string(nx));
  return ax;
}

// Folds a mask value into 32 bits, keeping nonzero values nonzero.
int fold_mask(std::uint64_t v) {
  auto lo = static_cast<std::uint32_t>(v);
  if (v != 0 && lo == 0) lo = 0x80000000u;
  return static_cast<int>(lo);
}

// MASK in any integer BITPIX. CFITSIO decompresses tiles into 32-bit (or narrower) types
// only, so 64-bit reads are kept for the 64-bit BITPIX (which it never tile-compresses).
// Undefined pixels (BLANK, ZBLANK) are BAD: nobody knows them good.
void read_mask(FitsReader const& in, long long n, std::vector<int>& mask) {
  int const b = in.equiv_bitpix();
  reserve_huge(mask, static_cast<std::size_t>(n));  // written whole (huge_pages.hpp)
  mask.resize(static_cast<std::size_t>(n));
  auto store = [&](long long i, auto v) { mask[std::size_t(i)] = fold_mask(std::uint64_t(v)); };
  // The values read as `null`'s type (a CFITSIO type code), undefined pixels given `null`.
  auto read_as = [&](auto const null, int datatype) {
    in.read_pixels<std::remove_const_t<decltype(null)>>(datatype, n, store, &null);
  };
  switch (b) {
    case BYTE_IMG:
    case SBYTE_IMG:
    case SHORT_IMG:
    case USHORT_IMG:
    case LONG_IMG: read_as(int(ccdmask::bad), TINT); break;
    case ULONG_IMG: read_as(unsigned(ccdmask::bad), TUINT); break;
    case LONGLONG_IMG: read_as(static_cast<long long>(ccdmask::bad), TLONGLONG); break;
    case ULONGLONG_IMG: read_as(static_cast<unsigned long long>(ccdmask::bad), TULONGLONG); break;
    default: in.fail("expected an integer image, found BITPIX " + std::to_string(b));
  }
}

// Big-endian float32 values at byte `at` of the file, copied into `out` a chunk at a time and
// byte-swapped while the chunk is in cache. `out` gets the huge-page hint: written whole.
void copy_plain_floats(FitsReader const& in, long long at, std::size_t n, std::vector<float>& out) {
  reserve_huge(out, n);
  out.resize(n);
  constexpr std::size_t chunk = std::size_t(1) << 18;  // 1 MiB of values
  for (std::size_t first = 0; first < n; first += chunk) {
    std::size_t const m = std::min(chunk, n - first);
    float* const v = out.data() + first;
    in.read_bytes(at + static_cast<long long>(first * sizeof(float)), m * sizeof(float), v);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (std::size_t i = 0; i < m; ++i) {
      std::uint32_t u;
      std::memcpy(&u, v + i, sizeof u);
      u = __builtin_bswap32(u);
      std::memcpy(v + i, &u, sizeof u);
    }
#endif
  }
}

// The current image as floats. One stored as desispec writes IMAGE and IVAR (float32,
// unscaled, not compressed) is copied from the file on a thread of its own, which the
// returned future stands for, while this thread reads on (CFITSIO stays on this thread: its
// file state is not shared). Any other is read here through CFITSIO (invalid future): as
// doubles with BSCALE/BZERO applied, then rounded to float; an integer image's undefined
// pixels (BLANK or ZBLANK: astropy's scale() and fpack store NaN so) come back NaN, which the
// reader then gives ivar = 0, like any NaN.
std::future<void> read_float_image(FitsReader const& in, long long n, std::vector<float>& out) {
  if (auto const at = in.plain_float_data())
    return std::async(std::launch::async,
                      [&in, at = *at, n, &out] { copy_plain_floats(in, at, std::size_t(n), out); });
  out.resize(static_cast<std::size_t>(n));
  double const null = std::numeric_limits<double>::quiet_NaN();
  in.read_pixels<double>(
      TDOUBLE, n, [&](long long i, double v) { out[std::size_t(i)] = float(v); }, &null);
  return {};
}

// ---------------------------------------------------------------- writing helpers

// The FIBERMAP `kspecter simulate` writes: one row per simulated fiber.
FitsTable truth_fibermap(TruthSpectra const& t) {
  MemoryFits m;
  int status = 0;
  char const* names[] = {"FIBER", "TARGETID", "OBJTYPE", "FIBERSTATUS"};
  char const* forms[] = {"J", "K", "3A", "J"};
  fits_create_tbl(m.get(), BINARY_TBL, 0, 4, const_cast<char**>(names), const_cast<char**>(forms),
                  nullptr, const_cast<char*>("FIBERMAP"), &status);
  std::size_t const n = std::size_t(t.nspec);
  std::vector<long long> fiber(n), targetid(n);
  std::vector<std::string> ot(t.objtype);
  std::vector<char*> ptrs(n);
  std::vector<int> fiberstatus(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    fiber[i] = static_cast<long long>(t.fibermin) + t.specmin + static_cast<long long>(i);
    targetid[i] = 39627000000000000LL + fiber[i];  // DESI-like target ids
    ot[i].resize(3, ' ');
    ptrs[i] = ot[i].data();
  }
  fits_write_col(m.get(), TLONGLONG, 1, 1, 1, t.nspec, fiber.data(), &status);
  fits_write_col(m.get(), TLONGLONG, 2, 1, 1, t.nspec, targetid.data(), &status);
  fits_write_col(m.get(), TSTRING, 3, 1, 1, t.nspec, ptrs.data(), &status);
  fits_write_col(m.get(), TINT, 4, 1, 1, t.nspec, fiberstatus.data(), &status);
  return m.finish("", "FIBERMAP", status);
}

void check_sizes(std::string const& path, PreprocImage const& img, TruthSpectra const* truth,
                 std::vector<float> const& readnoise) {
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
  if (!readnoise.empty()) need(readnoise.size(), n, "READNOISE");
  for (int m : img.mask)
    if (m < std::numeric_limits<std::int16_t>::min() ||
        m > std::numeric_limits<std::int16_t>::max())
      throw ParameterError(path + ": MASK value " + std::to_string(m) +
                           " does not fit the 16-bit MASK desispec writes");
  if (truth) {
    if (truth->nspec <= 0 || truth->wavelength.empty() || truth->specmin < 0)
      throw ParameterError(path + ": truth spectra are empty or have a negative SPECMIN");
    need(truth->flux.size(), std::size_t(truth->nspec) * truth->wavelength.size(), "TRUTH_FLUX");
    if (!truth->objtype.empty()) need(truth->objtype.size(), truth->nspec, "OBJTYPE");
  }
}

}  // namespace

// ---------------------------------------------------------------- reading

namespace {
std::optional<TruthSpectra> read_truth(FitsReader& in);
PreprocImage read_preproc_file(std::string const& path, bool with_truth);
}  // namespace

PreprocImage read_preproc(std::string const& path, bool with_truth) {
  return reading_file(path, [&] { return read_preproc_file(path, with_truth); });
}

std::optional<TruthSpectra> read_truth(std::string const& path) {
  return reading_file(path, [&] {
    FitsReader in(path, GzipAlternative::yes);
    return read_truth(in);
  });
}

namespace {

PreprocImage read_preproc_file(std::string const& path, bool with_truth) {
  FitsReader in(path, GzipAlternative::yes);
  PreprocImage img;
  img.path = in.path();

  // IMAGE: any BITPIX; floats and scaled integers both come out as doubles.
  in.move_to("IMAGE", ANY_HDU, /*primary_fallback=*/true);
  auto const ax = shape_2d(in, -1, -1);
  if (ax[0] <= 0 || ax[1] <= 0) in.fail("empty image");
  if (ax[0] > std::numeric_limits<int>::max() || ax[1] > std::numeric_limits<int>::max())
    in.fail("image too large for int pixel indices");
  img.nx = static_cast<int>(ax[0]);
  img.ny = static_cast<int>(ax[1]);
  img.header = in.header();
  long long const n = static_cast<long long>(img.nx) * img.ny;
  // Destroyed (joined) before `in` and `img`, also when this thread throws.
  std::future<void> image = read_float_image(in, n, img.image);

  in.move_to("IVAR");
  shape_2d(in, img.nx, img.ny);
  std::future<void> ivar = read_float_image(in, n, img.ivar);

  in.move_to("MASK");
  shape_2d(in, img.nx, img.ny);
  int status = 0;
  // Compressed tiles may decode from corrupt bytes without an error: their DATASUM (small,
  // cheap to verify) tells.
  if (fits_is_compressed_image(in.get(), &status)) in.verify_datasum();
  read_mask(in, n, img.mask);

  if (in.has("FIBERMAP")) {
    in.move_to("FIBERMAP", BINARY_TBL);
    img.fibermap = in.table();
  }
  if (with_truth) img.truth = read_truth(in);
  in.check_complete();  // a header cut after the HDUs read (READNOISE, truth) too

  for (std::future<void>* f : {&image, &ivar})
    if (f->valid()) f->get();
  // Exclude pixels as desispec does and make bad numbers harmless (see the header), a few
  // threads over a full frame's 17 M pixels (three arrays read: the read's tail otherwise).
  auto exclude = [&img](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i) {
      bool const image_ok = std::isfinite(img.image[i]);
      if (!image_ok) img.image[i] = 0.0f;
      float const iv = img.ivar[i];
      if (!image_ok || (img.mask[i] & ccdmask::extractmaskval) != 0 || !std::isfinite(iv) ||
          iv < 0.0f)
        img.ivar[i] = 0.0f;
    }
  };
  std::size_t const total = std::size_t(n);
  std::size_t const parts =
      total < (std::size_t(1) << 20)
          ? 1
          : std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 4);
  std::vector<std::thread> helpers;
  for (std::size_t p = 1; p < parts; ++p)
    helpers.emplace_back(exclude, total * p / parts, total * (p + 1) / parts);
  exclude(0, total / parts);
  for (auto& t : helpers) t.join();
  return img;
}

std::optional<TruthSpectra> read_truth(FitsReader& in) {
  if (!in.has("TRUTH_FLUX")) return std::nullopt;
  TruthSpectra t;

  in.move_to("TRUTH_WAVE");
  auto const aw = in.image_shape();
  if (aw.size() != 1 || aw[0] <= 0) in.fail("expected a non-empty 1-D image");
  long long const nwave = aw[0];
  t.wavelength.resize(static_cast<std::size_t>(nwave));
  in.read_pixels<double>(TDOUBLE, nwave,
                         [&](long long i, double v) { t.wavelength[std::size_t(i)] = v; });
  for (long long i = 0; i < nwave; ++i) {
    double const w = t.wavelength[std::size_t(i)];
    if (!std::isfinite(w) || w <= 0 || (i > 0 && !(w > t.wavelength[std::size_t(i - 1)])))
      in.fail("wavelengths must be positive, finite and strictly increasing (index " +
              std::to_string(i) + ")");
  }

  in.move_to("TRUTH_FLUX");
  auto const af = in.image_shape();
  if (af.size() != 2 || af[0] != nwave || af[1] <= 0 || af[1] > std::numeric_limits<int>::max())
    in.fail("expected a 2-D image [nspec][" + std::to_string(nwave) + "] matching TRUTH_WAVE");
  t.nspec = static_cast<int>(af[1]);
  long long const specmin = in.key_integer("SPECMIN").value_or(0);
  long long const nspec_key = in.key_integer("NSPEC").value_or(t.nspec);
  if (specmin < 0 || specmin > std::numeric_limits<int>::max() - t.nspec)
    in.fail("SPECMIN " + std::to_string(specmin) + " is not the index of a first spectrum");
  if (nspec_key != t.nspec)
    in.fail("NSPEC = " + std::to_string(nspec_key) + " but the image has " +
            std::to_string(t.nspec) + " rows");
  t.specmin = static_cast<int>(specmin);
  long long const n = nwave * t.nspec;
  t.flux.resize(static_cast<std::size_t>(n));
  in.read_pixels<double>(TDOUBLE, n, [&](long long i, double v) { t.flux[std::size_t(i)] = v; });
  for (long long i = 0; i < n; ++i)
    if (!std::isfinite(t.flux[std::size_t(i)]))
      in.fail("non-finite flux at spectrum " + std::to_string(i / nwave) + ", bin " +
              std::to_string(i % nwave));

  // Fiber types, when a FIBERMAP with OBJTYPE has one row per spectrum.
  if (!in.has("FIBERMAP")) return t;
  in.move_to("FIBERMAP", BINARY_TBL);
  fitsfile* f = in.get();
  int col = 0, status = 0;
  long nrows = 0;
  fits_get_num_rows(f, &nrows, &status);
  if (fits_get_colnum(f, CASEINSEN, const_cast<char*>("OBJTYPE"), &col, &status) == 0 &&
      nrows == t.nspec) {
    // CFITSIO writes a whole cell (width + 1 bytes) into each buffer.
    int type = 0;
    long repeat = 0, width = 0;
    fits_get_coltype(f, col, &type, &repeat, &width, &status);
    if (status || type != TSTRING) in.fail("OBJTYPE is not a fixed-width character column");
    std::vector<std::vector<char>> buf(std::size_t(t.nspec),
                                       std::vector<char>(std::size_t(std::max(width, 1L)) + 1, 0));
    std::vector<char*> ptr(std::size_t(t.nspec));
    for (int i = 0; i < t.nspec; ++i) ptr[std::size_t(i)] = buf[std::size_t(i)].data();
    int anynul = 0;
    fits_read_col(f, TSTRING, col, 1, 1, t.nspec, nullptr, ptr.data(), &anynul, &status);
    in.check(status, "cannot read OBJTYPE");
    for (int i = 0; i < t.nspec; ++i)
      t.objtype.push_back(upper_trimmed(buf[std::size_t(i)].data()));
  }
  int fcol = 0;
  status = 0;
  if (nrows == t.nspec &&
      fits_get_colnum(f, CASEINSEN, const_cast<char*>("FIBER"), &fcol, &status) == 0) {
    long long first = 0;
    int anynul = 0;
    fits_read_col(f, TLONGLONG, fcol, 1, 1, 1, nullptr, &first, &anynul, &status);
    if (status == 0 && first >= t.specmin &&
        first - t.specmin <= std::numeric_limits<int>::max() - t.specmin - t.nspec)
      t.fibermin = static_cast<int>(first - t.specmin);
  }
  fits_clear_errmsg();
  return t;
}

}  // namespace

bool has_hdu(std::string const& path, std::string const& hdu) {
  try {
    return FitsReader(path).has(hdu);
  } catch (InputError const&) {
    return false;
  }
}

// ---------------------------------------------------------------- writing

void write_preproc(std::string const& path, PreprocImage const& img, TruthSpectra const* truth,
                   std::vector<float> const& readnoise) {
  check_sizes(path, img, truth, readnoise);
  FitsWriter w(path);
  std::vector<long> const axes = {long(img.nx), long(img.ny)};

  w.image("IMAGE", FLOAT_IMG, TFLOAT, axes, img.image.data());
  FitsHeader h = img.header;
  h.set_string("BUNIT", "electron");
  if (!h.has("CREATOR"))
    h.set_string("CREATOR", std::string("kspecter ") + version(), "program that wrote this file");
  w.records(h, "IMAGE");
  w.image("IVAR", FLOAT_IMG, TFLOAT, axes, img.ivar.data(), "electron**-2");

  // MASK as desispec writes it: int16, tile-compressed (astropy's CompImageHDU: RICE_1,
  // one row per tile).
  int status = 0;
  fits_set_compression_type(w.get(), RICE_1, &status);
  w.check(status, "MASK", "set the compression");
  std::vector<short> const mask16(img.mask.begin(), img.mask.end());  // CFITSIO compresses
  w.image("MASK", SHORT_IMG, TSHORT, axes, mask16.data());            // only its own type
  fits_set_compression_type(w.get(), 0, &status);
  w.check(status, "MASK", "reset the compression");
  if (!readnoise.empty()) w.image("READNOISE", FLOAT_IMG, TFLOAT, axes, readnoise.data());

  if (img.fibermap)
    w.table(*img.fibermap);
  else if (truth && !truth->objtype.empty())
    w.table(truth_fibermap(*truth));

  if (truth) {
    long const nwave = static_cast<long>(truth->wavelength.size());
    w.image("TRUTH_FLUX", DOUBLE_IMG, TDOUBLE, {nwave, long(truth->nspec)}, truth->flux.data(),
            "electron/Angstrom");
    FitsHeader th;
    th.set_integer("SPECMIN", truth->specmin, "first spectrum (fiber index)");
    th.set_integer("NSPEC", truth->nspec, "number of spectra");
    w.records(th, "TRUTH_FLUX");
    w.image("TRUTH_WAVE", DOUBLE_IMG, TDOUBLE, {nwave}, truth->wavelength.data(), "Angstrom");
  }
  w.commit();
}

}  // namespace kspecter::io
