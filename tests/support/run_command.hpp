// Running a shell command from a test (the kspecter executable, mpiexec) and capturing its
// exit status and its stdout + stderr.
#pragma once

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <string>

namespace kspecter::test {

struct CommandResult {
  int status;       // exit code, -1 when the command did not exit normally
  std::string out;  // stdout and stderr, interleaved
};

/// Runs `command` through the shell, with OpenMP unbound and Open MPI allowed to run as root
/// (CI containers are root).
inline CommandResult run_command(std::string const& command) {
  std::string const full =
      "OMP_PROC_BIND=false OMPI_ALLOW_RUN_AS_ROOT=1 "
      "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
      command + " 2>&1";
  CommandResult r{-1, {}};
  FILE* p = popen(full.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  while (std::fgets(buf.data(), buf.size(), p)) r.out += buf.data();
  int const st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

/// Runs the kspecter executable of this build with `args`.
inline CommandResult run_kspecter(std::string const& args) {
  return run_command(std::string(KSPECTER_CLI_PATH) + " " + args);
}

}  // namespace kspecter::test
