// The kspecter executable: every subcommand answers --help, `info` reports the build, and
// usage errors exit with 2.
#include <run_command.hpp>

#include <kspecter/extract/options.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <string>

namespace {

using Result = kspecter::test::CommandResult;

Result run(std::string const& args) { return kspecter::test::run_kspecter(args); }

TEST(cli, info_reports_version_and_backends) {
  auto const r = run("info");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("kokkos +[0-9]+\\.[0-9]+"))) << r.out;
  EXPECT_NE(r.out.find("backends"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Serial"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mpi"), std::string::npos) << r.out;
}

// Provenance: MAJOR.MINOR.PATCH, and in a build from a git checkout "+" and its `git
// describe` (a commit of this repository), in --version and in info alike.
TEST(cli, version_names_the_commit_of_a_git_checkout) {
  auto const v = run("--version");
  ASSERT_EQ(v.status, 0) << v.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      v.out, m, std::regex("kspecter ([0-9]+\\.[0-9]+\\.[0-9]+)(\\+([A-Za-z0-9.]+))?\n")))
      << v.out;
  auto const info = run("info");
  EXPECT_NE(info.out.find(m[1].str() + m[2].str()), std::string::npos) << info.out;
  std::string const src = KSPECTER_SOURCE_DIR;
  auto const top = kspecter::test::run_command("git -C " + src + " rev-parse --show-toplevel");
  if (top.status != 0) {  // a tarball: the plain version
    EXPECT_FALSE(m[2].matched) << v.out;
    return;
  }
  ASSERT_TRUE(m[2].matched) << "a git checkout, but no describe: " << v.out;
  // "6d810f5", "v0.1.0.3.g6d810f5", either with ".dirty": the commit must be this repository's.
  std::smatch c;
  std::string const describe = m[3].str();
  ASSERT_TRUE(std::regex_search(describe, c, std::regex("(^|\\.g)([0-9a-f]{7,40})(\\.dirty)?$")))
      << describe;
  EXPECT_EQ(
      kspecter::test::run_command("git -C " + src + " cat-file -e " + c[2].str() + "^{commit}")
          .status,
      0)
      << describe;
}

TEST(cli, every_command_has_help) {
  auto const top = run("--help");
  ASSERT_EQ(top.status, 0) << top.out;
  // Each command listed under "commands:" must answer --help with its usage line.
  auto pos = top.out.find("commands:\n");
  ASSERT_NE(pos, std::string::npos);
  pos += 10;
  int n = 0;
  while (pos < top.out.size() && top.out.compare(pos, 2, "  ") == 0) {
    auto const end = top.out.find(' ', pos + 2);
    std::string const name = top.out.substr(pos + 2, end - pos - 2);
    auto const h = run(name + " --help");
    EXPECT_EQ(h.status, 0) << name << ": " << h.out;
    EXPECT_NE(h.out.find("usage: kspecter " + name), std::string::npos) << h.out;
    ++n;
    pos = top.out.find('\n', pos) + 1;
  }
  EXPECT_GE(n, 1);
}

// `kspecter extract` takes its defaults from a default-constructed ExtractOptions: each default
// its --help shows parses back to the library's value, bit for bit.
TEST(cli, extract_defaults_are_the_library_defaults) {
  auto const h = run("extract --help");
  ASSERT_EQ(h.status, 0) << h.out;
  auto shown = [&](std::string const& name) {
    std::smatch m;
    std::regex const line("--" + name + " [A-Z,]+ [^\\[]*\\[default: ([^\\]]+)\\]");
    EXPECT_TRUE(std::regex_search(h.out, m, line)) << name << " has no default in\n" << h.out;
    return m.empty() ? std::string("nan") : m[1].str();
  };
  auto number = [](std::string const& s) { return std::strtod(s.c_str(), nullptr); };
  kspecter::extract::ExtractOptions const d;
  EXPECT_EQ(number(shown("specmin")), d.specmin);
  EXPECT_EQ(number(shown("regularize")), d.regularize);
  EXPECT_EQ(number(shown("bundlesize")), d.bundlesize);
  EXPECT_EQ(number(shown("nsubbundles")), d.nsubbundles);
  EXPECT_EQ(number(shown("nwavestep")), d.nwavestep);
  EXPECT_EQ(number(shown("wavepad")), d.wavepad);
  EXPECT_EQ(number(shown("wavepad-frac")), d.wavepad_frac);
  EXPECT_EQ(number(shown("pixpad-frac")), d.pixpad_frac);
  EXPECT_EQ(number(shown("memory-budget")) * double(1ull << 30), double(d.memory_budget));
}

TEST(cli, usage_errors_exit_2) {
  EXPECT_EQ(run("no-such-command").status, 2);
  EXPECT_EQ(run("info --no-such-option").status, 2);
  EXPECT_EQ(run("info --threads notanumber").status, 2);
  EXPECT_EQ(run("").status, 2);
}

}  // namespace
