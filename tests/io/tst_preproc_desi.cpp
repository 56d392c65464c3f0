// Preproc files laid out as desispec's io/image.py:write_image lays them out (IMAGE primary,
// IVAR, MASK tile-compressed, READNOISE, FIBERMAP), plain and gzip-compressed, written here
// with CFITSIO directly (not with kspecter's writer): every tile compression CFITSIO offers
// and every integer BITPIX of MASK come back bit for bit, pixels are excluded by desispec's
// extractmaskval, and broken compressed files are refused naming the file, HDU and problem.
#include <kspecter/core/error.hpp>
#include <kspecter/io/fits_table.hpp>
#include <kspecter/io/gzip_prefetch.hpp>
#include <kspecter/io/preproc_file.hpp>

#include <test_data.hpp>

#include <fitsio.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace ccdmask = kspecter::io::ccdmask;
using kspecter::InputError;
using kspecter::test::file_bytes;

constexpr int NX = 40, NY = 24;  // several tiles (rows) per HDU

void ok(int status, char const* what) {
  if (status) {
    char text[FLEN_STATUS] = {0};
    fits_get_errstatus(status, text);
    FAIL() << what << ": CFITSIO " << text;
  }
}

// CFITSIO's status text and its whole message stack, oldest first.
std::string cfitsio_stack(int status) {
  char text[FLEN_STATUS] = {0};
  fits_get_errstatus(status, text);
  std::string all = text;
  char line[FLEN_ERRMSG] = {0};
  while (fits_read_errmsg(line)) all += std::string(" | ") + line;
  return all;
}

struct Layout {
  int mask_bitpix = SHORT_IMG;  // as desispec: int16
  int compression = RICE_1;     // 0: a plain MASK
  bool image_in_primary = true;
  bool readnoise = true;
  bool fibermap = true;
};

// Values the test knows: every mask bit 0..14 appears, alone, on some pixels.
float image_value(int i) { return float(std::sin(0.37 * i) * 50.0 + 3.0); }
float ivar_value(int i) { return float(0.01 + 0.001 * (i % 13)); }
int mask_value(int i, int bitpix) {
  int const bits = bitpix == BYTE_IMG ? 8 : 15;
  return i % 3 == 0 ? 1 << ((i / 3) % bits) : 0;
}

void write_image_hdu(fitsfile* f, char const* extname, int bitpix, int datatype, void* data) {
  int st = 0;
  long naxes[2] = {NX, NY};
  fits_create_img(f, bitpix, 2, naxes, &st);
  fits_update_key(f, TSTRING, "EXTNAME", const_cast<char*>(extname), nullptr, &st);
  fits_write_img(f, datatype, 1, LONGLONG(NX) * NY, data, &st);
  fits_write_chksum(f, &st);
  ok(st, extname);
}

std::string gzip_bytes(std::string const& data) {
  uLongf size = compressBound(uLong(data.size())) + 64;
  std::string out(size, '\0');
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);  // gzip wrapper
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = uInt(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

void write_desi_preproc(std::string const& name, Layout const& l);

// The file desispec's write_image makes, through CFITSIO (every HDU with CHECKSUM and
// DATASUM, as astropy writes them with checksum=True); `name` ending in .gz is gzipped by
// zlib here.
void write_desi_preproc(std::string const& name, Layout const& l) {
  if (name.size() > 3 && name.compare(name.size() - 3, 3, ".gz") == 0) {
    std::string const plain = name.substr(0, name.size() - 3) + ".plain";
    write_desi_preproc(plain, l);
    std::string const bytes = file_bytes(plain);
    fs::remove(plain);
    std::ofstream(name, std::ios::binary) << gzip_bytes(bytes);
    return;
  }
  fs::remove(name);
  std::vector<float> image(NX * NY), ivar(NX * NY), readnoise(NX * NY, 3.25f);
  std::vector<int> mask(NX * NY);
  for (int i = 0; i < NX * NY; ++i) {
    image[i] = image_value(i);
    ivar[i] = ivar_value(i);
    mask[i] = mask_value(i, l.mask_bitpix);
  }
  fitsfile* f = nullptr;
  int st = 0;
  fits_create_diskfile(&f, name.c_str(), &st);
  ok(st, "create");
  if (!l.image_in_primary) {
    fits_create_img(f, BYTE_IMG, 0, nullptr, &st);
    ok(st, "primary");
  }
  write_image_hdu(f, "IMAGE", FLOAT_IMG, TFLOAT, image.data());
  fits_update_key(f, TSTRING, "CAMERA", const_cast<char*>("r0"), "Spectrograph Camera", &st);
  fits_update_key(f, TSTRING, "FLAVOR", const_cast<char*>("science"), nullptr, &st);
  write_image_hdu(f, "IVAR", FLOAT_IMG, TFLOAT, ivar.data());
  // CFITSIO compresses only values of the image's own type.
  if (l.compression) fits_set_compression_type(f, l.compression, &st);
  if (l.mask_bitpix == BYTE_IMG) {
    std::vector<unsigned char> m(mask.begin(), mask.end());
    write_image_hdu(f, "MASK", l.mask_bitpix, TBYTE, m.data());
  } else if (l.mask_bitpix == SHORT_IMG) {
    std::vector<short> m(mask.begin(), mask.end());
    write_image_hdu(f, "MASK", l.mask_bitpix, TSHORT, m.data());
  } else if (l.mask_bitpix == LONGLONG_IMG) {
    std::vector<long long> m(mask.begin(), mask.end());
    write_image_hdu(f, "MASK", l.mask_bitpix, TLONGLONG, m.data());
  } else {
    write_image_hdu(f, "MASK", l.mask_bitpix, TINT, mask.data());
  }
  fits_set_compression_type(f, 0, &st);
  if (l.readnoise) write_image_hdu(f, "READNOISE", FLOAT_IMG, TFLOAT, readnoise.data());
  if (l.fibermap) {
    char const* ttype[] = {"FIBER", "TARGETID"};
    char const* tform[] = {"J", "K"};
    fits_create_tbl(f, BINARY_TBL, 0, 2, const_cast<char**>(ttype), const_cast<char**>(tform),
                    nullptr, const_cast<char*>("FIBERMAP"), &st);
    std::vector<long long> fiber(500), target(500);
    for (int i = 0; i < 500; ++i) {
      fiber[i] = i;
      target[i] = 1000 + i;
    }
    fits_write_col(f, TLONGLONG, 1, 1, 1, 500, fiber.data(), &st);
    fits_write_col(f, TLONGLONG, 2, 1, 1, 500, target.data(), &st);
    fits_write_chksum(f, &st);
  }
  fits_close_file(f, &st);
  ok(st, "close");
}

void expect_desi_pixels(kspecter::io::PreprocImage const& img, int mask_bitpix) {
  ASSERT_EQ(img.nx, NX);
  ASSERT_EQ(img.ny, NY);
  int kept_badreadnoise = 0;
  for (int i = 0; i < NX * NY; ++i) {
    int const m = mask_value(i, mask_bitpix);
    ASSERT_EQ(img.image[i], image_value(i)) << i;
    ASSERT_EQ(img.mask[i], m) << i;
    // desispec: ivar * ((mask & extractmaskval) == 0); BADREADNOISE alone keeps the ivar.
    bool const excluded = (m & ccdmask::extractmaskval) != 0;
    ASSERT_EQ(img.ivar[i], excluded ? 0.0f : ivar_value(i)) << "pixel " << i << ", mask " << m;
    kept_badreadnoise += m == ccdmask::badreadnoise;
  }
  if (mask_bitpix != BYTE_IMG) EXPECT_GT(kept_badreadnoise, 0);
}

TEST(preproc_desi, every_tile_compression_and_integer_bitpix_of_mask) {
  std::string const dir = kspecter::test::scratch_dir();
  struct Case {
    int bitpix, compression;
    char const* name;
  };
  Case const cases[] = {{SHORT_IMG, RICE_1, "rice_i2"},
                        {SHORT_IMG, GZIP_1, "gzip1_i2"},
                        {SHORT_IMG, GZIP_2, "gzip2_i2"},
                        {SHORT_IMG, PLIO_1, "plio_i2"},
                        {SHORT_IMG, HCOMPRESS_1, "hcomp_i2"},
                        {BYTE_IMG, RICE_1, "rice_u1"},
                        {LONG_IMG, RICE_1, "rice_i4"},
                        {LONG_IMG, GZIP_1, "gzip_i4"},
                        {SHORT_IMG, 0, "plain_i2"},
                        {BYTE_IMG, 0, "plain_u1"},
                        {LONG_IMG, 0, "plain_i4"},
                        {LONGLONG_IMG, 0, "plain_i8"}};
  for (Case const& c : cases) {
    SCOPED_TRACE(c.name);
    Layout l;
    l.mask_bitpix = c.bitpix;
    l.compression = c.compression;
    std::string const p = dir + "/" + c.name + ".fits";
    ASSERT_NO_FATAL_FAILURE(write_desi_preproc(p, l));
    auto const img = kspecter::io::read_preproc(p);
    expect_desi_pixels(img, c.bitpix);
    EXPECT_EQ(img.header.get_string("CAMERA", p, "IMAGE"), "r0");
    ASSERT_TRUE(img.fibermap.has_value());
    EXPECT_EQ(img.fibermap->nrows, 500);
  }
}

TEST(preproc_desi, gzipped_file_image_extension_and_checkgzip_names) {
  std::string const dir = kspecter::test::scratch_dir();
  Layout l;
  ASSERT_NO_FATAL_FAILURE(write_desi_preproc(dir + "/preproc-r0-00000001.fits", l));
  ASSERT_NO_FATAL_FAILURE(write_desi_preproc(dir + "/preproc-r0-00000001.fits.gz", l));
  std::string const plain = file_bytes(dir + "/preproc-r0-00000001.fits");
  std::string const gz = file_bytes(dir + "/preproc-r0-00000001.fits.gz");
  ASSERT_EQ(gz.substr(0, 2), "\x1f\x8b");
  ASSERT_LT(gz.size(), plain.size());
  auto const a = kspecter::io::read_preproc(dir + "/preproc-r0-00000001.fits");
  auto const b = kspecter::io::read_preproc(dir + "/preproc-r0-00000001.fits.gz");
  expect_desi_pixels(b, SHORT_IMG);
  EXPECT_EQ(a.image, b.image);
  EXPECT_EQ(a.ivar, b.ivar);
  EXPECT_EQ(a.mask, b.mask);
  EXPECT_EQ(a.header.records(), b.header.records());
  ASSERT_TRUE(b.fibermap.has_value());
  EXPECT_EQ(a.fibermap->bytes, b.fibermap->bytes);

  // desispec's checkgzip: a name that does not exist is tried with .gz added or removed.
  fs::rename(dir + "/preproc-r0-00000001.fits", dir + "/other.fits");
  auto const c = kspecter::io::read_preproc(dir + "/preproc-r0-00000001.fits");
  EXPECT_EQ(c.path, dir + "/preproc-r0-00000001.fits.gz");
  EXPECT_EQ(c.image, a.image);
  auto const d = kspecter::io::read_preproc(dir + "/other.fits.gz");
  EXPECT_EQ(d.path, dir + "/other.fits");

  // IMAGE as an extension after an empty primary HDU, no READNOISE or FIBERMAP.
  l.image_in_primary = false;
  l.readnoise = l.fibermap = false;
  ASSERT_NO_FATAL_FAILURE(write_desi_preproc(dir + "/ext.fits.gz", l));
  auto const e = kspecter::io::read_preproc(dir + "/ext.fits.gz");
  expect_desi_pixels(e, SHORT_IMG);
  EXPECT_FALSE(e.fibermap.has_value());
}

TEST(preproc_desi, kspecter_writes_what_it_reads) {
  // write_preproc makes the same layout (MASK compressed int16, READNOISE, gzip by name).
  std::string const dir = kspecter::test::scratch_dir();
  std::string const src = dir + "/desi.fits";
  ASSERT_NO_FATAL_FAILURE(write_desi_preproc(src, Layout{}));
  auto img = kspecter::io::read_preproc(src);
  for (int i = 0; i < NX * NY; ++i) img.ivar[i] = ivar_value(i);  // as written
  kspecter::io::write_preproc(dir + "/again.fits.gz", img, nullptr,
                              std::vector<float>(NX * NY, 3.25f));
  std::string const gz = file_bytes(dir + "/again.fits.gz");
  ASSERT_EQ(gz.substr(0, 2), "\x1f\x8b");
  auto const back = kspecter::io::read_preproc(dir + "/again.fits.gz");
  expect_desi_pixels(back, SHORT_IMG);
  EXPECT_EQ(back.header.get_string("FLAVOR", src, "IMAGE"), "science");
  EXPECT_EQ(back.fibermap->bytes.size(), img.fibermap->bytes.size());
  // MASK is a tile-compressed int16 image, READNOISE is there, every HDU has a checksum.
  fitsfile* f = nullptr;
  int st = 0, type = 0, is_compressed = 0, bitpix = 0;
  fits_open_file(&f, (dir + "/again.fits.gz").c_str(), READONLY, &st);
  // CI once saw this open fail (session 28, not reproduced): name the call and CFITSIO's stack.
  ASSERT_EQ(st, 0) << "fits_open_file(again.fits.gz): " << cfitsio_stack(st) << "; errno "
                   << std::strerror(errno) << "; the file has " << gz.size() << " bytes";
  fits_movnam_hdu(f, IMAGE_HDU, const_cast<char*>("MASK"), 0, &st);
  is_compressed = fits_is_compressed_image(f, &st);
  fits_get_img_type(f, &bitpix, &st);
  EXPECT_TRUE(is_compressed);
  EXPECT_EQ(bitpix, SHORT_IMG);
  EXPECT_EQ(fits_movnam_hdu(f, IMAGE_HDU, const_cast<char*>("READNOISE"), 0, &st), 0);
  int nhdu = 0;
  fits_get_num_hdus(f, &nhdu, &st);
  for (int h = 1; h <= nhdu; ++h) {
    int dataok = 0, hduok = 0;
    fits_movabs_hdu(f, h, &type, &st);
    fits_verify_chksum(f, &dataok, &hduok, &st);
    EXPECT_EQ(dataok, 1) << "HDU " << h;
    EXPECT_EQ(hduok, 1) << "HDU " << h;
  }
  fits_close_file(f, &st);
  EXPECT_EQ(st, 0);
}

TEST(preproc_desi, prefetched_gzip_reads_as_the_file_and_follows_its_replacement) {
  // A batch job inflates the next frame's .gz ahead (io::prefetch_gzip); the read that takes
  // those bytes must give what a read of the file gives, and never the bytes of a file that
  // has since been replaced.
  std::string const dir = kspecter::test::scratch_dir();
  std::string const path = dir + "/preproc-r0-00000002.fits.gz";
  ASSERT_NO_FATAL_FAILURE(write_desi_preproc(path, Layout{}));
  auto const direct = kspecter::io::read_preproc(path);
  kspecter::io::prefetch_gzip(path);
  auto const ahead = kspecter::io::read_preproc(path);
  EXPECT_EQ(ahead.image, direct.image);
  EXPECT_EQ(ahead.ivar, direct.ivar);
  EXPECT_EQ(ahead.mask, direct.mask);
  EXPECT_EQ(ahead.header.records(), direct.header.records());

  // Replaced after the prefetch (other size and time): the new file is what is read.
  kspecter::io::prefetch_gzip(path);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Layout other;
  other.fibermap = false;
  ASSERT_NO_FATAL_FAILURE(write_desi_preproc(path, other));
  auto const replaced = kspecter::io::read_preproc(path);
  EXPECT_TRUE(direct.fibermap.has_value());
  EXPECT_FALSE(replaced.fibermap.has_value());
  kspecter::io::drop_gzip_prefetches();
}

// ---------------------------------------------------------------- broken compressed files

void expect_refused(std::string const& path, std::string const& hdu, std::string const& words) {
  try {
    kspecter::io::read_preproc(path);
    ADD_FAILURE() << path << " was accepted (expected: " << words << ")";
  } catch (InputError const& e) {
    std::string const what = e.what();
    EXPECT_EQ(e.file(), path) << what;
    EXPECT_EQ(e.hdu(), hdu) << what;
    EXPECT_NE(what.find(words), std::string::npos) << "expected '" << words << "' in: " << what;
  }
}

void write_bytes(std::string const& path, std::string const& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

TEST(preproc_desi, broken_gzip_and_compressed_tiles_are_refused) {
  std::string const dir = kspecter::test::scratch_dir();
  ASSERT_NO_FATAL_FAILURE(write_desi_preproc(dir + "/good.fits", Layout{}));
  std::string const good = file_bytes(dir + "/good.fits");
  std::string const gz = gzip_bytes(good);

  // A gzip stream cut short, and one with bytes overwritten inside.
  write_bytes(dir + "/cut.fits.gz", gz.substr(0, gz.size() / 2));
  expect_refused(dir + "/cut.fits.gz", "", "gzip");
  std::string corrupt = gz;
  for (std::size_t i = gz.size() / 3; i < gz.size() / 3 + 64; ++i) corrupt[i] = char(i * 7);
  write_bytes(dir + "/corrupt.fits.gz", corrupt);
  expect_refused(dir + "/corrupt.fits.gz", "", "gzip");
  kspecter::io::prefetch_gzip(dir + "/corrupt.fits.gz");  // the error moves to the read
  expect_refused(dir + "/corrupt.fits.gz", "", "gzip");
  // A gzip that holds no FITS file.
  write_bytes(dir + "/text.fits.gz", gzip_bytes(std::string(10000, 't')));
  expect_refused(dir + "/text.fits.gz", "", "not a readable FITS file inside the gzip");
  // A FITS file cut inside its data, then gzipped whole: truncated, as a plain one is.
  write_bytes(dir + "/short.fits.gz", gzip_bytes(good.substr(0, 2880 * 3 + 100)));
  expect_refused(dir + "/short.fits.gz", "IVAR", "truncated");

  // MASK's compressed tiles overwritten. RICE decodes garbage without complaint: the
  // DATASUM catches it. Without a DATASUM, GZIP tiles fail their own check in CFITSIO.
  auto corrupt_tiles = [&](std::string const& from, std::string const& to) {
    fitsfile* f = nullptr;
    int st = 0;
    LONGLONG head = 0, data = 0, end = 0;
    long naxis1 = 0, naxis2 = 0;
    fits_open_diskfile(&f, from.c_str(), READONLY, &st);
    fits_movnam_hdu(f, ANY_HDU, const_cast<char*>("MASK"), 0, &st);
    fits_get_hduaddrll(f, &head, &data, &end, &st);
    fits_read_key(f, TLONG, "NAXIS1", &naxis1, nullptr, &st);
    fits_read_key(f, TLONG, "NAXIS2", &naxis2, nullptr, &st);
    fits_close_file(f, &st);
    ASSERT_EQ(st, 0);
    std::string bytes = file_bytes(from);
    LONGLONG const heap = data + LONGLONG(naxis1) * naxis2;  // the tiles follow the table
    for (LONGLONG i = heap + 4; i < end && i < heap + 200; ++i)
      bytes[std::size_t(i)] = char(i * 13);
    write_bytes(to, bytes);
  };
  ASSERT_NO_FATAL_FAILURE(corrupt_tiles(dir + "/good.fits", dir + "/rice_tiles.fits"));
  expect_refused(dir + "/rice_tiles.fits", "MASK", "DATASUM");
  Layout gzip_tiles;
  gzip_tiles.compression = GZIP_1;
  ASSERT_NO_FATAL_FAILURE(write_desi_preproc(dir + "/gzip.fits", gzip_tiles));
  {  // no checksums this time
    fitsfile* f = nullptr;
    int st = 0;
    fits_open_diskfile(&f, (dir + "/gzip.fits").c_str(), READWRITE, &st);
    fits_movnam_hdu(f, ANY_HDU, const_cast<char*>("MASK"), 0, &st);
    fits_delete_key(f, "CHECKSUM", &st);
    fits_delete_key(f, "DATASUM", &st);
    fits_close_file(f, &st);
    ASSERT_EQ(st, 0);
  }
  ASSERT_NO_FATAL_FAILURE(corrupt_tiles(dir + "/gzip.fits", dir + "/gzip_tiles.fits"));
  expect_refused(dir + "/gzip_tiles.fits", "MASK", "cannot read pixels");
}

// Without a DATASUM, a RICE_1 tile whose stream runs out is refused before CFITSIO decodes
// it (its decoder would read past the tile: src/io/rice_tiles.hpp).
TEST(preproc_desi, rice_tile_decoding_past_its_end_is_refused) {
  std::string const dir = kspecter::test::scratch_dir();
  std::string const from = dir + "/rice.fits", to = dir + "/rice_zero_run.fits";
  ASSERT_NO_FATAL_FAILURE(write_desi_preproc(from, Layout{}));
  fitsfile* f = nullptr;
  int st = 0, col = 0;
  LONGLONG head = 0, data = 0, end = 0, len = 0, offset = 0;
  long naxis1 = 0, naxis2 = 0;
  fits_open_diskfile(&f, from.c_str(), READWRITE, &st);
  fits_movnam_hdu(f, ANY_HDU, const_cast<char*>("MASK"), 0, &st);
  fits_delete_key(f, "CHECKSUM", &st);
  fits_delete_key(f, "DATASUM", &st);
  fits_get_hduaddrll(f, &head, &data, &end, &st);
  fits_read_key(f, TLONG, "NAXIS1", &naxis1, nullptr, &st);
  fits_read_key(f, TLONG, "NAXIS2", &naxis2, nullptr, &st);
  fits_get_colnum(f, CASEINSEN, const_cast<char*>("COMPRESSED_DATA"), &col, &st);
  fits_read_descriptll(f, col, 3, &len, &offset, &st);  // tile 3
  fits_close_file(f, &st);
  ASSERT_EQ(st, 0);
  ASSERT_GT(len, 4);
  // int16 tiles (BYTEPIX 2): the first value raw, then FS code 1 (FS 0) and only zero bits,
  // so the first pixel's count of leading zeros runs past the tile.
  std::string bytes = file_bytes(from);
  std::size_t const tile = std::size_t(data + LONGLONG(naxis1) * naxis2 + offset);
  bytes[tile + 2] = char(0x10);
  for (LONGLONG i = 3; i < len; ++i) bytes[tile + std::size_t(i)] = 0;
  write_bytes(to, bytes);
  expect_refused(to, "MASK", "cannot read pixels: tile 3 of");
  expect_refused(to, "MASK", "RICE_1 stream ends before");
}

}  // namespace
