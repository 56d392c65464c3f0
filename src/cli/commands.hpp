// The subcommands of the `kspecter` executable. Each parses its own options (see args.hpp),
// brings up the environment it needs and returns the process exit code.
#pragma once

namespace kspecter::cli {

int run_info(int argc, char** argv);
int run_make_psf(int argc, char** argv);
int run_simulate(int argc, char** argv);
int run_extract(int argc, char** argv);
int run_compare(int argc, char** argv);

}  // namespace kspecter::cli
