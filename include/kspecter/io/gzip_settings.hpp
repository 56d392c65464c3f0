// How kspecter compresses the .fits.gz files it writes (frames, model images, simulated
// preprocs), and how many threads its gzip work may use. One setting for the process: the
// front ends set it from --gzip-level and --io-threads (CLI) or gzip_level= and io_threads=
// (Python). docs/architecture.md, "gzip".
#pragma once

namespace kspecter::io {

/// The process's gzip settings.
struct GzipSettings {
  /// ISA-L's igzip level: 0 (fastest, static Huffman codes) to 3 (smallest). The default is
  /// the level perf/bench_gzip measured best for DESI frames (docs/architecture.md, "gzip").
  int level = 1;
  /// Threads that deflate one file, and that inflate the gzipped inputs of a batch ahead of
  /// the extraction; 0: every CPU this process may run on (its affinity mask).
  int threads = 0;
};

/// The lowest and highest levels set_gzip_settings takes.
constexpr int gzip_min_level = 0;
constexpr int gzip_max_level = 3;

/// Replaces the process's settings; throws ParameterError naming the setting when the level
/// is outside [gzip_min_level, gzip_max_level] or threads is negative. Thread-safe.
void set_gzip_settings(GzipSettings const& settings);

/// The process's settings (GzipSettings{} until set). Thread-safe.
GzipSettings gzip_settings();

/// The threads gzip work uses: `settings.threads`, or the CPUs this process may run on when
/// that is 0; at least 1.
int gzip_threads();

}  // namespace kspecter::io
