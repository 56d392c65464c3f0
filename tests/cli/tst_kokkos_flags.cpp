// --kokkos-* flags reach Kokkos from every command (compat::initialize), in the spellings of
// Kokkos 3.x and 4.x alike, next to kspecter's own --threads; and, seen through a Kokkos Tools
// library loaded that way, every kernel an extraction launches carries a kspecter:: label.
#include "../hardening/small_inputs.hpp"

#include <run_command.hpp>
#include <test_data.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace {

using kspecter::test::run_kspecter;

// The "concurrency N" that `kspecter info` reports for these arguments.
int concurrency(std::string const& args) {
  auto const r = run_kspecter("info " + args);
  EXPECT_EQ(r.status, 0) << r.out;
  std::smatch m;
  if (!std::regex_search(r.out, m, std::regex("concurrency +([0-9]+)"))) {
    ADD_FAILURE() << r.out;
    return -1;
  }
  return std::stoi(m[1]);
}

TEST(kokkos_flags, thread_count_in_either_spelling) {
  if (concurrency("--threads 2") != 2) GTEST_SKIP() << "the default space is not a host space";
  EXPECT_EQ(concurrency("--kokkos-num-threads=1"), 1);  // Kokkos 4.x's name
  EXPECT_EQ(concurrency("--kokkos-threads=1"), 1);      // Kokkos 3.x's name
  EXPECT_EQ(concurrency("--threads 2 --kokkos-num-threads=1"), 1) << "the user's Kokkos flag wins";
}

TEST(kokkos_flags, other_options_still_checked) {
  EXPECT_EQ(run_kspecter("info --kokkos-num-threads=1 --no-such-option").status, 2);
}

// Kernel names recorded by the test tool library for one run of `kspecter <args>`.
std::vector<std::string> kernel_names(std::string const& args, std::string const& log) {
  auto const r = kspecter::test::run_command("KSPECTER_KERNEL_NAMES=" + log + " " +
                                             kspecter::test::kspecter_exe + " " + args +
                                             " --kokkos-tools-libs=" KSPECTER_KERNEL_NAMES_TOOL);
  EXPECT_EQ(r.status, 0) << r.out;
  std::vector<std::string> names;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) names.push_back(line);
  return names;
}

TEST(kokkos_flags, tools_library_sees_only_labelled_kernels) {
  kspecter::test::SmallInputs in;
  ASSERT_NO_FATAL_FAILURE(kspecter::test::make_small_inputs(in));
  auto const names = kernel_names(
      kspecter::test::extract_args(in.image, in.psf, in.dir + "/frame.fits"), in.dir + "/k.txt");
  int extract_kernels = 0, solve_kernels = 0;
  for (auto const& line : names) {
    std::string const name = line.substr(line.find(' ') + 1);
    extract_kernels += name.rfind("kspecter::extract::", 0) == 0;
    solve_kernels += name.rfind("kspecter::solve::", 0) == 0;
    // kspecter's kernels, or Kokkos' own (deep_copy, View initialisation): never an
    // unlabelled lambda, whose name would be a compiler's type name.
    EXPECT_TRUE(name.rfind("kspecter::", 0) == 0 || name.rfind("Kokkos::", 0) == 0) << line;
  }
  EXPECT_GT(extract_kernels, 0) << names.size() << " kernels recorded";
  EXPECT_GT(solve_kernels, 0);
}

}  // namespace
