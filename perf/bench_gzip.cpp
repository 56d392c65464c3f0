// gzip for DESI's files: the measurement behind kspecter's choice of library and level
// (docs/architecture.md, "gzip"). Prints tables; asserts nothing.
//
//   bench_gzip FILE [--repeat N] [--threads N,N,...]
//
// FILE is a .fits.gz (a preproc as desispec writes it) or a plain file. Inflate: the file's
// bytes decompressed from memory by zlib (what CFITSIO and Python's gzip use), libdeflate
// (when this build found it) and ISA-L (kspecter's io::inflate_gzip), each checked to give the
// same bytes. Deflate: the decompressed bytes compressed by zlib at levels 6 and 9 (gzip's
// default, and Python's gzip, which astropy and so desispec use), and by kspecter's parallel
// ISA-L writer at each level and thread count: seconds, MB/s of input and the size.
#include "io/gzip_file.hpp"

#include <kspecter/core/huge_pages.hpp>
#include <kspecter/io/gzip_settings.hpp>

#include <zlib.h>
#ifdef KSPECTER_BENCH_LIBDEFLATE
#include <libdeflate.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using Bytes = std::vector<unsigned char>;

// Best of `repeat` runs of `f`, in seconds.
double best_of(int repeat, std::function<void()> const& f) {
  double best = 1e30;
  for (int k = 0; k < repeat; ++k) {
    auto const t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

// An output buffer as kspecter's reader makes one: with the huge-page hint (the first-touch
// faults on 4 KiB pages would otherwise cost more than any library's inflation).
Bytes fresh(std::size_t n) {
  Bytes v;
  kspecter::reserve_huge(v, n);
  v.resize(n);
  return v;
}

Bytes zlib_inflate(Bytes const& in) {
  z_stream z{};
  inflateInit2(&z, 15 + 32);  // gzip header, every member
  Bytes out = fresh(in.size() * 2 + (1 << 20));
  z.next_in = const_cast<unsigned char*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  for (;;) {
    z.next_out = out.data() + z.total_out;
    z.avail_out = static_cast<uInt>(std::min<std::size_t>(out.size() - z.total_out, 1u << 30));
    int const rc = inflate(&z, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      std::fprintf(stderr, "zlib: inflate error %d\n", rc);
      std::exit(1);
    }
    if (z.avail_out == 0) out.resize(out.size() * 2);
  }
  out.resize(z.total_out);
  inflateEnd(&z);
  return out;
}

Bytes zlib_deflate(Bytes const& in, int level) {
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

#ifdef KSPECTER_BENCH_LIBDEFLATE
Bytes libdeflate_inflate(Bytes const& in, std::size_t expect) {
  Bytes out = fresh(expect);
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  std::size_t got = 0;
  if (libdeflate_gzip_decompress(d, in.data(), in.size(), out.data(), out.size(), &got) !=
      LIBDEFLATE_SUCCESS) {
    std::fprintf(stderr, "libdeflate: inflate failed\n");
    std::exit(1);
  }
  libdeflate_free_decompressor(d);
  out.resize(got);
  return out;
}
#endif

std::vector<int> parse_list(std::string const& s) {
  std::vector<int> v;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) v.push_back(std::atoi(item.c_str()));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::string file;
  int repeat = 3;
  std::vector<int> threads = {1, 2};
  for (int i = 1; i < argc; ++i) {
    std::string const a = argv[i];
    if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--threads" && i + 1 < argc) {
      threads = parse_list(argv[++i]);
    } else if (a.rfind("--", 0) != 0 && file.empty()) {
      file = a;
    } else {
      std::fprintf(stderr, "usage: bench_gzip FILE [--repeat N] [--threads N,N,...]\n");
      return 2;
    }
  }
  if (file.empty()) {
    std::fprintf(stderr, "usage: bench_gzip FILE [--repeat N] [--threads N,N,...]\n");
    return 2;
  }
  std::ifstream f(file, std::ios::binary);
  Bytes const raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  bool const gz = raw.size() >= 2 && raw[0] == 0x1f && raw[1] == 0x8b;
  Bytes plain;
  if (gz) {
    Bytes const ref = zlib_inflate(raw);
    std::printf("inflate %s: %.1f MB gzipped, %.1f MB plain, best of %d\n", file.c_str(),
                raw.size() / 1e6, ref.size() / 1e6, repeat);
    std::printf("  %-12s %9s %9s %s\n", "library", "s", "MB/s out", "bytes");
    // Each run's output is a fresh buffer, as a reader's is: its first-touch cost counts.
    auto row = [&](char const* name, auto const& run) {
      decltype(run()) out;
      double const t = best_of(repeat, [&] {
        out = {};
        out = run();
      });
      bool const same =
          out.size() == ref.size() && std::memcmp(out.data(), ref.data(), ref.size()) == 0;
      std::printf("  %-12s %9.3f %9.0f %s\n", name, t, ref.size() / 1e6 / t,
                  same ? "same" : "DIFFER");
    };
    row("zlib", [&] { return zlib_inflate(raw); });
#ifdef KSPECTER_BENCH_LIBDEFLATE
    row("libdeflate", [&] { return libdeflate_inflate(raw, ref.size()); });
#else
    std::printf("  %-12s (not found at build time)\n", "libdeflate");
#endif
    row("isa-l", [&] { return kspecter::io::inflate_gzip(file, raw.data(), raw.size()); });
    plain = ref;
  } else {
    plain = raw;
  }

  std::printf("deflate %.1f MB, best of %d\n", plain.size() / 1e6, repeat);
  std::printf("  %-22s %8s %9s %9s %8s\n", "writer", "s", "MB/s in", "MB out", "ratio");
  auto row = [&](std::string const& name, std::function<Bytes()> const& run) {
    Bytes out;
    double const t = best_of(repeat, [&] { out = run(); });
    bool const ok = zlib_inflate(out) == plain;
    std::printf("  %-22s %8.3f %9.0f %9.2f %8.3f%s\n", name.c_str(), t, plain.size() / 1e6 / t,
                out.size() / 1e6, double(out.size()) / double(plain.size()),
                ok ? "" : "  (DOES NOT INFLATE BACK)");
  };
  row("zlib -6, 1 thread", [&] { return zlib_deflate(plain, 6); });
  row("zlib -9, 1 thread", [&] { return zlib_deflate(plain, 9); });
  for (int level = kspecter::io::gzip_min_level; level <= kspecter::io::gzip_max_level; ++level) {
    for (int t : threads) {
      kspecter::io::set_gzip_settings({level, t});
      row("isa-l -" + std::to_string(level) + ", " + std::to_string(t) + " thread" +
              (t == 1 ? "" : "s"),
          [&] { return kspecter::io::deflate_gzip(plain.data(), plain.size()); });
    }
  }
  return 0;
}
