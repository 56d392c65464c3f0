// Where the tests find shared data (../shared/data from the project root, or
// $KSPECTER_TEST_DATA) and scratch space for files they make.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace kspecter::test {

/// The shared test-data folder, or "" when it is absent.
inline std::string shared_data_dir() {
  char const* env = std::getenv("KSPECTER_TEST_DATA");
  std::string const dir = env && *env ? env : KSPECTER_DEFAULT_TEST_DATA;
  return std::filesystem::is_directory(dir) ? dir : std::string();
}

/// Path of a shared data file, or "" when it is absent.
inline std::string shared_data_file(std::string const& name) {
  std::string const dir = shared_data_dir();
  if (dir.empty()) return {};
  std::string const p = dir + "/" + name;
  return std::filesystem::is_regular_file(p) ? p : std::string();
}

/// A fresh, empty folder for this test's files (under the build tree's tests folder).
inline std::string scratch_dir() {
  auto const* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "." + info->name();
  for (auto& c : name)
    if (c == '/') c = '_';
  auto const dir = std::filesystem::path(KSPECTER_TEST_BINARY_DIR) / "scratch" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

/// The whole content of the file at `path`, byte for byte ("" when it cannot be read).
inline std::string file_bytes(std::string const& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Names in `dir` that are temporaries of kspecter's atomic writes (".NAME.tmp.HOST.PID.TAG").
inline std::vector<std::string> temp_files(std::string const& dir) {
  std::vector<std::string> out;
  for (auto const& e : std::filesystem::directory_iterator(dir)) {
    std::string const name = e.path().filename().string();
    if (name.size() > 1 && name[0] == '.' && name.find(".tmp.") != std::string::npos)
      out.push_back(name);
  }
  return out;
}

}  // namespace kspecter::test

/// Skips the current test, saying why, when a shared data file is missing.
#define KSPECTER_SHARED_DATA_OR_SKIP(var, name)                             \
  std::string const var = ::kspecter::test::shared_data_file(name);         \
  if (var.empty())                                                          \
  GTEST_SKIP() << "shared test data '" << name << "' not found (looked in " \
               << KSPECTER_DEFAULT_TEST_DATA << " and $KSPECTER_TEST_DATA)"
