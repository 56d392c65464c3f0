// kspecter: spectroperfectionism extraction. `kspecter <command> --help` for each command.
#include "commands.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/core/version.hpp>
#include <kspecter/io/output_path.hpp>
#include <kspecter/parallel/environment.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <thread>

namespace {

struct Command {
  char const* name;
  char const* summary;
  int (*run)(int, char**);
};

Command const commands[] = {
    {"info", "version, Kokkos backends, devices and MPI size", kspecter::cli::run_info},
    {"make-psf", "write a synthetic DESI-r-like GaussHermite PSF", kspecter::cli::run_make_psf},
    {"simulate", "simulate a preproc CCD frame from spectra and a PSF",
     kspecter::cli::run_simulate},
    {"extract", "extract spectra from a preproc image with a PSF (spectroperfectionism)",
     kspecter::cli::run_extract},
    {"compare", "compare two frames (max pull, ivar, resolution): CPU vs GPU agreement",
     kspecter::cli::run_compare},
};

void usage(std::FILE* to) {
  std::fprintf(to,
               "usage: kspecter <command> [options]\n\nkspecter %s: spectroperfectionism "
               "extraction of fiber spectrographs on Kokkos.\n\ncommands:\n",
               kspecter::version());
  for (auto const& c : commands) std::fprintf(to, "  %-12s %s\n", c.name, c.summary);
  std::fprintf(to, "\n`kspecter <command> --help` describes each command's options.\n");
}

// An error every rank of a launched job finds alike, before MPI is up: rank 0 prints it; the
// others wait a moment before they exit, since mpiexec stops the whole job when the first
// process exits with an error and would otherwise often stop rank 0 before it has printed.
int said_by_rank_0(char const* command, char const* what, int code) {
  if (kspecter::parallel::launcher_rank() == 0)
    std::fprintf(stderr, "kspecter %s: error: %s\n", command, what);
  else
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything is printed: SIGPIPE (stdout or stderr read by a pipe that closed) must
  // not kill the run, and SIGXFSZ must fail the write instead (io/atomic_output.hpp).
  kspecter::io::install_output_signal_handlers();
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  std::string const cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    usage(stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::printf("kspecter %s\n", kspecter::version());
    return 0;
  }
  for (auto const& c : commands) {
    if (cmd != c.name) continue;
    try {
      return c.run(argc, argv);
    } catch (kspecter::cli::InputErrorOnEveryRank const& e) {
      return said_by_rank_0(c.name, e.what(), 1);
    } catch (kspecter::ParameterError const& e) {
      // Every rank of an MPI job reads the same arguments: one of them reports.
      return said_by_rank_0(c.name, e.what(), 2);
    } catch (std::exception const& e) {
      std::fprintf(stderr, "kspecter %s: error: %s\n", c.name, e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "kspecter: unknown command '%s'\n\n", cmd.c_str());
  usage(stderr);
  return 2;
}
