// gzip through ISA-L (src/io/gzip_file.hpp), against zlib as the independent reference: what
// kspecter deflates, zlib inflates to the same bytes at every level, size and thread count,
// and the bytes do not depend on the thread count; what zlib deflates (one member or several,
// with padding or garbage after them), kspecter inflates as gzip would; a stream cut short or
// with a lying trailer is refused naming the file; CFITSIO opens a .fits.gz kspecter wrote.
#include "io/gzip_file.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/core/log.hpp>
#include <kspecter/io/gzip_settings.hpp>

#include <fitsio.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

using Bytes = std::vector<unsigned char>;
namespace io = kspecter::io;

constexpr std::size_t piece = std::size_t(2) << 20;  // gzip_file.cpp's piece size

// Data of a FITS image's kind: noise in float32 (barely compressible) and runs of zeros.
Bytes sample(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.f, 3.f);
  Bytes b(n, 0);
  for (std::size_t i = 0; i + 4 <= n; i += 4) {
    if ((i / 65536) % 3 == 2) continue;  // every third 64 KiB stays zero
    float const v = noise(rng);
    std::memcpy(&b[i], &v, 4);
  }
  return b;
}

Bytes zlib_inflate(Bytes const& in) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  Bytes out(in.size() * 4 + 1024);
  z.next_in = const_cast<unsigned char*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (z.total_out == out.size()) out.resize(out.size() * 2);
    z.next_out = out.data() + z.total_out;
    z.avail_out = static_cast<uInt>(out.size() - z.total_out);
    rc = inflate(&z, Z_NO_FLUSH);
  }
  EXPECT_EQ(rc, Z_STREAM_END) << "zlib refuses the stream";
  EXPECT_EQ(z.avail_in, 0u) << "bytes after the stream";
  out.resize(z.total_out);
  inflateEnd(&z);
  return out;
}

Bytes zlib_deflate(Bytes const& in, int level = 6) {
  z_stream z{};
  deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  Bytes out(deflateBound(&z, in.size()));
  z.next_in = const_cast<unsigned char*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

Bytes ours(Bytes const& v) {
  auto const c = io::inflate_gzip("test.gz", v.data(), v.size());
  return Bytes(c.begin(), c.end());
}

// Restores the process's gzip settings after a test that changes them.
struct KeepSettings {
  io::GzipSettings saved = io::gzip_settings();
  ~KeepSettings() { io::set_gzip_settings(saved); }
};

std::vector<std::string> warnings;
void collect(std::string const& m) { warnings.push_back(m); }

void expect_refused(Bytes const& gz, std::string const& words) {
  try {
    ours(gz);
    ADD_FAILURE() << "accepted; expected an error saying '" << words << "'";
  } catch (kspecter::InputError const& e) {
    EXPECT_NE(std::string(e.what()).find("test.gz"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(gzip, every_level_size_and_thread_count_inflates_back_with_zlib) {
  KeepSettings keep;
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(4099), piece - 1, piece,
                        piece + 1, 3 * piece + 17}) {
    Bytes const data = sample(n, unsigned(n));
    for (int level = io::gzip_min_level; level <= io::gzip_max_level; ++level) {
      io::set_gzip_settings({level, 1});
      Bytes const one = io::deflate_gzip(data.data(), data.size());
      ASSERT_EQ(zlib_inflate(one), data) << n << " bytes, level " << level;
      EXPECT_EQ(ours(one), data) << n << " bytes, level " << level;
      for (int threads : {2, 3, 8}) {
        io::set_gzip_settings({level, threads});
        EXPECT_EQ(io::deflate_gzip(data.data(), data.size()), one)
            << n << " bytes, level " << level << ", " << threads << " threads";
      }
    }
  }
}

TEST(gzip, higher_levels_compress_compressible_data_more) {
  KeepSettings keep;
  Bytes data(3 * piece);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>((i / 7) % 13);
  std::size_t prev = data.size() + 1;
  for (int level : {0, 3}) {
    io::set_gzip_settings({level, 2});
    std::size_t const size = io::deflate_gzip(data.data(), data.size()).size();
    EXPECT_LT(size, prev) << "level " << level;
    prev = size;
  }
  EXPECT_LT(prev, data.size() / 20);
}

TEST(gzip, members_padding_and_garbage_as_gzip_reads_them) {
  Bytes const a = sample(300000, 1), b = sample(5000, 2);
  Bytes two = zlib_deflate(a);
  Bytes const gb = zlib_deflate(b, 9);
  two.insert(two.end(), gb.begin(), gb.end());
  Bytes ab = a;
  ab.insert(ab.end(), b.begin(), b.end());
  EXPECT_EQ(ours(two), ab);  // concatenated members: gzip -d gives both

  auto const previous = kspecter::set_warning_handler(collect);
  warnings.clear();
  Bytes padded = two;
  padded.insert(padded.end(), 512, 0);  // tape-style zero padding: silent
  EXPECT_EQ(ours(padded), ab);
  EXPECT_TRUE(warnings.empty());
  Bytes garbage = two;
  for (char c : std::string("not gzip")) garbage.push_back(static_cast<unsigned char>(c));
  EXPECT_EQ(ours(garbage), ab);  // ignored, with a warning naming the file
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("test.gz"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("trailing garbage"), std::string::npos) << warnings[0];
  kspecter::set_warning_handler(previous);
}

TEST(gzip, truncated_streams_and_lying_trailers_are_refused) {
  Bytes const data = sample(3 * piece + 5, 3);
  Bytes const gz = io::deflate_gzip(data.data(), data.size());
  for (std::size_t keep : {std::size_t(2), std::size_t(10), gz.size() / 3, gz.size() - 9,
                           gz.size() - 4, gz.size() - 1}) {
    Bytes cut(gz.begin(), gz.begin() + std::ptrdiff_t(keep));
    SCOPED_TRACE(keep);
    try {
      ours(cut);
      ADD_FAILURE() << "a stream cut to " << keep << " bytes was accepted";
    } catch (kspecter::InputError const& e) {
      std::string const m = e.what();
      EXPECT_NE(m.find("test.gz"), std::string::npos) << m;
      EXPECT_TRUE(m.find("truncated") != std::string::npos ||
                  m.find("corrupt") != std::string::npos)
          << m;
    }
  }
  Bytes crc = gz;
  crc[crc.size() - 6] ^= 0x10;  // the CRC-32
  expect_refused(crc, "CRC-32");
  Bytes isize = gz;
  isize[isize.size() - 2] ^= 0x01;  // ISIZE
  expect_refused(isize, "ISIZE");
  Bytes body = gz;
  body[body.size() / 2] ^= 0xff;
  expect_refused(body, "corrupt gzip stream");
}

TEST(gzip, settings_out_of_range_are_refused) {
  KeepSettings keep;
  EXPECT_THROW(io::set_gzip_settings({io::gzip_min_level - 1, 0}), kspecter::ParameterError);
  EXPECT_THROW(io::set_gzip_settings({io::gzip_max_level + 1, 0}), kspecter::ParameterError);
  EXPECT_THROW(io::set_gzip_settings({1, -1}), kspecter::ParameterError);
  io::set_gzip_settings({2, 3});
  EXPECT_EQ(io::gzip_threads(), 3);
  io::set_gzip_settings({2, 0});
  EXPECT_GE(io::gzip_threads(), 1);
}

TEST(gzip, cfitsio_opens_a_fits_gz_kspecter_wrote) {
  // A FITS image made by CFITSIO in memory, gzipped by write_gzip: CFITSIO's own gunzip
  // (fits_open_file on the .gz) reads the pixels back.
  std::string const path = (std::filesystem::temp_directory_path() /
                            ("kspecter_tst_gzip_" + std::to_string(getpid()) + ".fits.gz"))
                               .string();
  void* mem = nullptr;
  std::size_t size = 0;
  fitsfile* f = nullptr;
  int status = 0;
  fits_create_memfile(&f, &mem, &size, 2880, std::realloc, &status);
  std::vector<long> axes = {1000, 1100};
  std::vector<float> pixels(std::size_t(axes[0] * axes[1]));
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = float(i % 977) * 0.25f;
  fits_create_img(f, FLOAT_IMG, 2, axes.data(), &status);
  fits_write_img(f, TFLOAT, 1, LONGLONG(pixels.size()), pixels.data(), &status);
  fits_close_file(f, &status);
  ASSERT_EQ(status, 0);
  KeepSettings keep;
  io::set_gzip_settings({1, 3});
  int const fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(io::write_gzip(fd, mem, size), "");
  std::free(mem);

  fits_open_file(&f, path.c_str(), READONLY, &status);
  ASSERT_EQ(status, 0) << "CFITSIO cannot open " << path;
  std::vector<float> back(pixels.size());
  int anynul = 0;
  fits_read_img(f, TFLOAT, 1, LONGLONG(back.size()), nullptr, back.data(), &anynul, &status);
  fits_close_file(f, &status);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(back, pixels);
  std::filesystem::remove(path);
}
