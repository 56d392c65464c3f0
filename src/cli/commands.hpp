// The subcommands of the `kspecter` executable. Each parses its own options (see args.hpp),
// brings up the environment it needs and returns the process exit code.
#pragma once

#include <kspecter/core/error.hpp>

namespace kspecter::cli {

/// An input found unusable before MPI starts (a pre-flight check): every rank of a launched
/// job finds the same, so one of them reports it; exit status 1, as for any input error.
class InputErrorOnEveryRank : public InputError {
 public:
  using InputError::InputError;
};

int run_info(int argc, char** argv);
int run_make_psf(int argc, char** argv);
int run_simulate(int argc, char** argv);
int run_extract(int argc, char** argv);
int run_compare(int argc, char** argv);

}  // namespace kspecter::cli
