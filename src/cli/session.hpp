// What a subcommand holds while it runs: the MPI + Kokkos environment built from the common
// options, and a logger that speaks on rank 0. A GPU build without a usable GPU hands the
// command to its CPU twin here, before MPI and Kokkos start (gpu_fallback.hpp).
#pragma once

#include "args.hpp"
#include "gpu_fallback.hpp"

#include <kspecter/core/log.hpp>
#include <kspecter/io/gzip_settings.hpp>
#include <kspecter/parallel/environment.hpp>

#include <chrono>
#include <functional>
#include <memory>

namespace kspecter::cli {

struct Session {
  static constexpr int max_threads = 512;
  /// `use_mpi` false: a tool that runs as one process (make-psf, simulate) skips MPI.
  /// `before_start` runs first, before the GPU probe (whose driver start-up it overlaps) and
  /// before MPI and Kokkos start: work that needs none of them begins there. When the process
  /// hands itself over to its CPU twin (exec), that work is dropped with it.
  Session(int& argc, char**& argv, ArgParser const& args, bool use_mpi = true,
          std::function<void()> const& before_start = {}) {
    auto const started = std::chrono::steady_clock::now();
    parallel::EnvironmentOptions opt;
    opt.mpi = use_mpi;
    if (args.has("threads")) {
      // Kokkos 3.4's OpenMP backend keeps its threads in a fixed pool of 512 and crashes
      // beyond it; 0 or less would leave Kokkos without a thread.
      opt.num_threads = args.get_int("threads");
      if (opt.num_threads < 1 || opt.num_threads > max_threads)
        throw ParameterError("--threads must be in 1.." + std::to_string(max_threads) + ", got " +
                             args.get("threads"));
    }
    if (args.has("device")) {
      opt.device_id = args.get_int("device");
      if (opt.device_id < 0)  // -1 would silently mean "the default"
        throw ParameterError("--device must be a GPU ordinal, 0 or more, not " +
                             args.get("device"));
    }
    io::GzipSettings gz;
    gz.level = args.get_int("gzip-level");
    gz.threads = args.get_int("io-threads");
    io::set_gzip_settings(gz);
    opt.kokkos_args = args.kokkos_args();
    LogLevel const level = log_level_of(args);
    if (before_start) before_start();
    hand_over_without_gpu(argv, args.declares("backend") ? args.get("backend") : "auto",
                          level > LogLevel::info);
    env = std::make_unique<parallel::Environment>(argc, argv, opt);
    log = Logger(level, env->rank() == 0);
    startup_seconds = seconds_since_start();
    log.debug(
        "MPI (if launched), Kokkos and the device started in " +
        std::to_string(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()) +
        " s");
    if (gz.threads == 0) {
      // The cores the rank is given: --threads, else its binding or its share of the node.
      gz.threads =
          opt.num_threads > 0 ? opt.num_threads : parallel::cpus_per_rank(env->local_size());
      io::set_gzip_settings(gz);
    }
  }
  /// Kokkos, the device and MPI finalized, with the time it took on the debug log.
  ~Session() {
    auto const t0 = std::chrono::steady_clock::now();
    env.reset();
    log.debug("Kokkos, the device and MPI finalized in " +
              std::to_string(
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()) +
              " s");
  }
  Session(Session const&) = delete;
  Session& operator=(Session const&) = delete;

  std::unique_ptr<parallel::Environment> env;
  Logger log;
  double startup_seconds = 0;  // process start to MPI, Kokkos and the device up

  /// The level asked for: --log-level (--loglevel), else desi_extract_spectra's -v (DEBUG),
  /// else $DESI_LOGLEVEL as desiutil reads it, else INFO. Also sets the process's format and
  /// the level of the library's warnings.
  static LogLevel log_level_of(ArgParser const& args) {
    set_log_format(parse_log_format(args.get("log-format")));
    LogLevel level = LogLevel::info;
    if (args.is_set("log-level")) {
      try {
        level = parse_log_level(args.get("log-level"));
      } catch (ParameterError const& e) {
        throw ParameterError(std::string("--log-level: ") + e.what());
      }
    } else if (args.declares("verbose") && args.is_set("verbose"))
      level = LogLevel::debug;
    else
      level = log_level_from_environment();
    set_log_level(level);
    return level;
  }
};

}  // namespace kspecter::cli
