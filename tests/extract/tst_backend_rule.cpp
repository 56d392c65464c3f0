// The one rule for "host or GPU" (extract/backend.hpp), derived from the backend list, against
// what each name is known to be: cuda and hip run on a GPU, serial and openmp on the host. The
// CLI's --use-gpu, --use-specter, --no-gpu and GPU fallback, and Python's gpu=, go through it.
#include <kspecter/extract/backend.hpp>

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace {

namespace ex = kspecter::extract;

std::vector<std::string> listed() {
  std::vector<std::string> names;
  std::stringstream in(ex::backend_names());
  for (std::string n; std::getline(in, n, ',');) {
    n.erase(0, n.find_first_not_of(' '));
    names.push_back(n);
  }
  return names;
}

bool listed(std::string const& name) {
  for (auto const& n : listed())
    if (n == name) return true;
  return false;
}

TEST(backend_rule, each_backend_is_on_the_host_or_a_gpu_as_its_name_says) {
  auto const names = listed();
  ASSERT_GE(names.size(), 2u);
  EXPECT_EQ(names.front(), "auto");
  for (std::size_t i = 1; i < names.size(); ++i)
    EXPECT_EQ(ex::backend_on_host(names[i]), names[i] == "serial" || names[i] == "openmp")
        << names[i];
  EXPECT_EQ(ex::host_backend(), listed("openmp") ? "openmp" : "serial");
  EXPECT_EQ(ex::gpu_backend(), listed("cuda") ? "cuda" : listed("hip") ? "hip" : "");
  // Kokkos' default space is the GPU's wherever the build has one.
  EXPECT_EQ(ex::backend_on_host("auto"), ex::gpu_backend().empty());
  // Neither on the host nor this build's: a name it lacks, whatever it would be.
  EXPECT_FALSE(ex::backend_on_host("cdua"));
  if (!listed("cuda")) EXPECT_FALSE(ex::backend_on_host("cuda"));
}

}  // namespace
