// Time to read preproc files as `kspecter extract` reads them (io::read_preproc: IMAGE, IVAR,
// MASK tile-compressed or not, FIBERMAP, the whole file gunzipped in memory when it is a
// .gz), each file read --repeat times. Prints a table; asserts nothing. Host only: reading
// is the I/O thread's work in a --batch job, whatever the backend.
//
//   bench_read_preproc FILE... [--repeat N]
//
// perf/desi_io_gz.sh makes a full-frame preproc, plain and gzipped, and runs this on both.
#include <kspecter/io/preproc_file.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Timing {
  double best, median;
  int nx, ny, masked;
};

Timing time_reads(std::string const& path, int repeat) {
  std::vector<double> t;
  Timing r{};
  for (int k = 0; k < repeat; ++k) {
    auto const t0 = Clock::now();
    kspecter::io::PreprocImage const img = kspecter::io::read_preproc(path);
    t.push_back(since(t0));
    r.nx = img.nx;
    r.ny = img.ny;
    r.masked = int(std::count_if(img.mask.begin(), img.mask.end(), [](int m) { return m != 0; }));
  }
  std::sort(t.begin(), t.end());
  r.best = t.front();
  r.median = t[t.size() / 2];
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> files;
  int repeat = 5;
  for (int i = 1; i < argc; ++i) {
    std::string const a = argv[i];
    if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a.rfind("--", 0) == 0) {
      std::fprintf(stderr, "usage: bench_read_preproc FILE... [--repeat N]\n");
      return 2;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: bench_read_preproc FILE... [--repeat N]\n");
    return 2;
  }
  std::printf("%-48s %9s %11s %10s %10s %9s\n", "file", "MiB", "pixels", "best s", "median s",
              "masked");
  try {
    for (auto const& f : files) {
      double const mib = double(std::filesystem::file_size(f)) / (1 << 20);
      Timing const r = time_reads(f, repeat);
      std::string const name = std::filesystem::path(f).filename().string();
      std::printf("%-48s %9.1f %5d x %4d %10.3f %10.3f %9d\n", name.c_str(), mib, r.ny, r.nx,
                  r.best, r.median, r.masked);
    }
  } catch (std::exception const& e) {
    std::fprintf(stderr, "bench_read_preproc: %s\n", e.what());
    return 1;
  }
  std::printf("(each read %d times: io::read_preproc, decompression included)\n", repeat);
  return 0;
}
