// `kspecter extract`'s command line as desi_extract_spectra's and spex's (gpu_specter) parsers
// read theirs: every option of desispec's py/desispec/scripts/extract.py parse() and of
// gpu_specter's py/gpu_specter/spex.py parse(), given with its default, is accepted, or refused
// with the reason where kspecter cannot mean the same; argparse's spellings of a value (-n5,
// -n 5, -n=5, --nspec=5) mean the same; anything else is an error naming the argument, exit 2.
// The options and defaults below are data copied from those two parse() functions.
#include <run_command.hpp>

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Result = kspecter::test::CommandResult;

Result run(std::string const& args) { return kspecter::test::run_kspecter(args); }

struct Option {
  char const* spelling;  // as the other tool's --help lists it
  char const* value;     // its default as a command-line value; "" for a switch
};

// desispec scripts/extract.py parse(): -i, -p, -o are required; -f, -m, -w, -n and --psferr
// have no default (None): the test gives them values of the small inputs.
std::vector<Option> const desispec = {
    {"--input", "IMAGE"},
    {"--fibermap", "IMAGE"},
    {"--psf", "PSF"},
    {"--output", "OUT"},
    {"--model", "MODEL"},
    {"--wavelength", "6020,6180,0.8"},
    {"--specmin", "0"},
    {"--nspec", "50"},
    {"--regularize", "0.0"},
    {"--bundlesize", "25"},
    {"--nsubbundles", "5"},
    {"--nwavestep", "50"},
    {"--verbose", ""},
    {"--mpi", ""},
    {"--no-scores", ""},
    {"--psferr", "0.01"},
    {"--barycentric-correction", ""},
    {"--use-specter", ""},
    {"--no-gpu", ""},
    {"--pixpad-frac", "0.8"},
    {"--wavepad-frac", "0.2"},
};
// Refused: desispec's own code raises for it with gpu_specter.
Option const desispec_refused = {"--decorrelate-fibers", ""};

// gpu_specter spex.py parse(); -n's default is 500 (a whole DESI camera: kspecter's default,
// "every fiber from specmin", on DESI's 500-fiber PSFs); the small PSF has 50.
std::vector<Option> const spex = {
    {"--input", "IMAGE"},
    {"--psf", "PSF"},
    {"--output", "OUT"},
    {"--model", "MODEL"},
    {"--wavelength", "6020,6180,0.8"},
    {"--specmin", "0"},
    {"--nspec", "50"},
    {"--regularize", "0.0"},
    {"--bundlesize", "25"},
    {"--nsubbundles", "5"},
    {"--nwavestep", "50"},
    {"--loglevel", "info"},
    {"--mpi", ""},
    {"--psferr", "0.01"},
    {"--async-io", ""},
    {"--pixpad-frac", "0.8"},
    {"--wavepad-frac", "0.2"},
    {"--wavepad", "10"},
};
// --use-gpu: the GPU backend (a build without one refuses it, naming the backends it has);
// --ranks-per-bundle: kspecter never splits a bundle between ranks.
Option const spex_gpu = {"--use-gpu", ""};
Option const spex_refused = {"--ranks-per-bundle", "2"};

class Spellings : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::path(KSPECTER_TEST_BINARY_DIR) / "scratch" /
           ("cli_spellings." + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto r = run("make-psf -o " + path("psf.fits") +
                 " --nfiber 50 --ccd 420,400 -w 6000,6200 --log-level quiet");
    ASSERT_EQ(r.status, 0) << r.out;
    r = run("simulate -p " + path("psf.fits") + " -o " + path("image.fits") +
            " -w 6020,6180,0.8 --seed 7 --log-level quiet");
    ASSERT_EQ(r.status, 0) << r.out;
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::string path(std::string const& name) { return (dir_ / name).string(); }
  static std::string line(std::vector<Option> const& options, std::string const& out) {
    std::string s;
    for (Option const& o : options) {
      std::string v = o.value;
      if (v == "IMAGE") v = path("image.fits");
      if (v == "PSF") v = path("psf.fits");
      if (v == "OUT") v = path(out + ".fits");
      if (v == "MODEL") v = path(out + "-model.fits");
      s += std::string(" ") + o.spelling + (v.empty() ? "" : " " + v);
    }
    return s;
  }
  static std::string small(std::string const& out) {
    return "extract -i " + path("image.fits") + " -p " + path("psf.fits") + " -o " + path(out) +
           " -w 6020,6180,0.8 --bundlesize 10 --nsubbundles 2 --no-truth " + "--log-level warning";
  }
  static std::filesystem::path dir_;
};
std::filesystem::path Spellings::dir_;

TEST_F(Spellings, every_desi_extract_spectra_option_with_its_default_is_accepted) {
  auto const r = run("extract" + line(desispec, "desispec") + " --no-truth");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(std::filesystem::exists(path("desispec.fits")));
  EXPECT_TRUE(std::filesystem::exists(path("desispec-model.fits")));
  auto const refused = run("extract" + line(desispec, "never") + " " + desispec_refused.spelling);
  EXPECT_EQ(refused.status, 2) << refused.out;
  EXPECT_NE(refused.out.find("--decorrelate-fibers not implemented with gpu_specter"),
            std::string::npos)
      << refused.out;
}

TEST_F(Spellings, every_spex_option_with_its_default_is_accepted) {
  auto const r = run("extract" + line(spex, "spex") + " --no-truth");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(std::filesystem::exists(path("spex.fits")));
  auto const gpu = run("extract" + line(spex, "spex-gpu") + " --no-truth " + spex_gpu.spelling);
  auto const backends = run("info");
  if (backends.out.find("Cuda") != std::string::npos ||
      backends.out.find("HIP") != std::string::npos) {
    EXPECT_EQ(gpu.status, 0) << gpu.out;
  } else {
    EXPECT_EQ(gpu.status, 2) << gpu.out;
    EXPECT_NE(gpu.out.find("--use-gpu: this build has no GPU backend"), std::string::npos)
        << gpu.out;
  }
  auto const refused =
      run("extract" + line(spex, "never") + " " + spex_refused.spelling + " " + spex_refused.value);
  EXPECT_EQ(refused.status, 2) << refused.out;
  EXPECT_NE(refused.out.find("--ranks-per-bundle is not supported: kspecter deals whole bundles"),
            std::string::npos)
      << refused.out;
  EXPECT_FALSE(std::filesystem::exists(path("never.fits")));
}

TEST_F(Spellings, every_option_of_both_tools_is_in_the_help) {
  auto const h = run("extract --help");
  ASSERT_EQ(h.status, 0) << h.out;
  std::vector<Option> all = desispec;
  all.insert(all.end(), spex.begin(), spex.end());
  for (Option const& o : {desispec_refused, spex_gpu, spex_refused}) all.push_back(o);
  for (Option const& o : all)
    EXPECT_TRUE(std::regex_search(h.out, std::regex(std::string(o.spelling) + "[ ,\\n]")))
        << o.spelling << " is not in\n"
        << h.out;
  // Grouped: the sections a reader looks for.
  for (char const* group : {"files:", "what is extracted", "run time and logging:"})
    EXPECT_NE(h.out.find(group), std::string::npos) << group;
}

TEST_F(Spellings, argparse_spellings_of_a_value_mean_the_same) {
  std::vector<std::string> const spellings = {"-n 10", "-n10", "-n=10", "--nspec=10", "--nspec 10"};
  for (std::size_t k = 0; k < spellings.size(); ++k) {
    auto const r = run(small("n" + std::to_string(k) + ".fits") + " " + spellings[k]);
    ASSERT_EQ(r.status, 0) << spellings[k] << ": " << r.out;
    EXPECT_NE(r.out.find("extracted 10 spectra"), std::string::npos) << spellings[k] << r.out;
    if (k > 0) {
      auto const c = run("compare --max-pull 0 " + path("n0.fits") + " " +
                         path("n" + std::to_string(k) + ".fits"));
      EXPECT_EQ(c.status, 0) << spellings[k] << ": " << c.out;
    }
  }
  // A negative number is a value, not an option: -r takes it (and the extraction refuses it).
  auto const neg = run(small("neg.fits") + " -r -1");
  EXPECT_NE(neg.status, 0) << neg.out;
  EXPECT_NE(neg.out.find("regularize must be >= 0"), std::string::npos) << neg.out;
}

TEST_F(Spellings, unknown_or_malformed_arguments_are_errors_naming_them) {
  struct Bad {
    std::string args, named;
  };
  std::vector<Bad> const bad = {
      {small("x.fits") + " -n5 stray-word", "'stray-word'"},
      {small("x.fits") + " stray-word", "'stray-word'"},
      {small("x.fits") + " --nosuch", "'--nosuch'"},
      {small("x.fits") + " -q", "'-q'"},
      {small("x.fits") + " --nspec", "--nspec needs a value"},
      {small("x.fits") + " -n --bundlesize 5", "-n needs a value, got the option '--bundlesize'"},
      {small("x.fits") + " --mpi=1", "--mpi takes no value"},
      {small("x.fits") + " -n five", "--nspec expects an integer, got 'five'"},
      {small("x.fits") + " -nfive", "--nspec expects an integer, got 'five'"},
      {small("x.fits") + " --nspec=", "--nspec expects an integer, got ''"},
      {small("x.fits") + " --log-level loud", "--log-level"},
      {small("x.fits") + " --log-format json", "log format"},
      {"info extra", "'extra'"},
      {"make-psf -o " + path("p.fits") + " 3", "'3'"},
      {"compare " + path("n0.fits"), "expects 2 arguments"},
      {"compare a b c", "'c'"},
  };
  for (Bad const& b : bad) {
    auto const r = run(b.args);
    EXPECT_EQ(r.status, 2) << b.args << ": " << r.out;
    EXPECT_NE(r.out.find(b.named), std::string::npos) << b.args << ": " << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(path("x.fits")));
}

TEST_F(Spellings, log_levels_follow_desi_loglevel_and_log_level_overrides_it) {
  std::string const base = "extract -i " + path("image.fits") + " -p " + path("psf.fits") + " -o " +
                           path("log.fits") +
                           " -w 6020,6180,0.8 --bundlesize 10 --nsubbundles 2 --no-truth -n 10";
  std::string const cli = KSPECTER_CLI_PATH;
  auto const info = kspecter::test::run_command("env -u DESI_LOGLEVEL " + cli + " " + base);
  ASSERT_EQ(info.status, 0) << info.out;
  EXPECT_NE(info.out.find("] extracting 1 frame"), std::string::npos) << info.out;
  auto const env_warning = kspecter::test::run_command("DESI_LOGLEVEL=warning " + cli + " " + base);
  ASSERT_EQ(env_warning.status, 0) << env_warning.out;
  EXPECT_EQ(env_warning.out.find("extracting 1 frame"), std::string::npos) << env_warning.out;
  auto const overridden = kspecter::test::run_command("DESI_LOGLEVEL=WARNING " + cli + " " + base +
                                                      " --log-level DEBUG");
  EXPECT_NE(overridden.out.find("kspecter::extract::assembly"), std::string::npos)
      << overridden.out;
  auto const invalid = kspecter::test::run_command("DESI_LOGLEVEL=loud " + cli + " " + base);
  ASSERT_EQ(invalid.status, 0) << invalid.out;
  EXPECT_NE(invalid.out.find("WARNING: Invalid level='LOUD' ignored.  Setting INFO."),
            std::string::npos)
      << invalid.out;
  EXPECT_NE(invalid.out.find("extracting 1 frame"), std::string::npos) << invalid.out;
  // desiutil's format: LEVEL:file:line:function: message.
  auto const desi = kspecter::test::run_command("env -u DESI_LOGLEVEL " + cli + " " + base +
                                                " --log-format desi");
  ASSERT_EQ(desi.status, 0) << desi.out;
  EXPECT_TRUE(std::regex_search(
      desi.out, std::regex("(^|\\n)INFO:[a-z_]+\\.cpp:[0-9]+:[a-z_]+: extracting 1 frame")))
      << desi.out;
}

TEST_F(Spellings, timing_json_holds_the_stages_and_wall_times) {
  auto const r = run(small("timed.fits") + " -n 10 --timing-json " + path("t.json"));
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream f(path("t.json"));
  std::stringstream text;
  text << f.rdbuf();
  std::string const j = text.str();
  for (char const* key :
       {"\"ok\": true", "\"startup_seconds\": ", "\"job_wall_seconds\": ", "\"total_seconds\": ",
        "\"stages\": {", "\"kspecter::extract::assembly\": "})
    EXPECT_NE(j.find(key), std::string::npos) << key << " not in\n" << j;
}

}  // namespace
