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
