// Every kernel that a real extraction launches carries a "kspecter::" label
// (docs/architecture.md, kernel labels), seen through Kokkos Tools' begin_parallel_{for,
// reduce,scan} callbacks over one small extraction on TEST_EXECSPACE by the named-backend entry
// point: upload, GaussHermite spots, every stage with its solves, the model image and the debug
// capture.
//
// Kokkos' own kernels are allowed under these names only, all made by Kokkos for a kspecter
// call:
// - "Kokkos::View::initialization [<label>]" (and "destruction"), which fills or destroys a
//   View whose <label> must itself start with "kspecter::";
// - "Kokkos::View::destruction []": Kokkos 3.4 destroys a View of structs allocated without
//   initialisation (core/allocate.hpp) by an empty kernel that does not get the View's label;
// - the ViewFill/ViewCopy/ZeroMemset/host_space_deepcopy kernels of Kokkos::deep_copy, whose
//   names Kokkos fixes.
#include <algorithm>
#include <kspecter/extract/backend.hpp>
#include <kspecter/psf/synthetic_psf.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

std::vector<std::string>& launched() {
  static std::vector<std::string> names;
  return names;
}

void record(char const* name, std::uint32_t, std::uint64_t*) { launched().emplace_back(name); }

bool kspecter_label(std::string const& name) {
  static std::regex const ours("^kspecter::.+");
  static std::regex const kokkos_view(
      R"(^Kokkos::View::(initialization|destruction) \[kspecter::.+\].*)");
  static std::regex const kokkos_uninitialised(R"(^Kokkos::View::destruction \[\]$)");
  static std::regex const kokkos_copy(
      R"(^Kokkos::(ViewFill|ViewCopy|ZeroMemset|Impl::host_space_deepcopy_).*)");
  return std::regex_match(name, ours) || std::regex_match(name, kokkos_view) ||
         std::regex_match(name, kokkos_uninitialised) || std::regex_match(name, kokkos_copy);
}

#define KSPECTER_STRINGIFY_(x) #x
#define KSPECTER_STRINGIFY(x) KSPECTER_STRINGIFY_(x)

TEST(TEST_CATEGORY, kernel_label_rule_tells_ours_from_others) {
  EXPECT_TRUE(kspecter_label("kspecter::extract::assemble_icov"));
  EXPECT_TRUE(kspecter_label("Kokkos::View::initialization [kspecter::extract::flux]"));
  EXPECT_TRUE(kspecter_label("Kokkos::ViewFill-2D"));
  EXPECT_TRUE(kspecter_label("Kokkos::Impl::host_space_deepcopy_double"));
  EXPECT_TRUE(kspecter_label("Kokkos::View::destruction []"));
  EXPECT_FALSE(kspecter_label("assemble_icov"));
  EXPECT_FALSE(kspecter_label("Kokkos::View::initialization [flux]"));
  EXPECT_FALSE(kspecter_label("Kokkos::View::initialization []"));
  EXPECT_FALSE(kspecter_label("N8kspecter7extract6detail11AssembleICovIN6Kokkos6SerialEEE"));
  EXPECT_FALSE(kspecter_label("Kokkos::parallel_for"));
}

TEST(TEST_CATEGORY, every_kernel_of_an_extraction_is_labelled_kspecter) {
  kspecter::psf::SyntheticPsfOptions po;
  po.nfiber = 10;
  po.bundlesize = 5;
  po.npix_x = 300;
  auto const psf = kspecter::psf::make_synthetic_psf(po);
  std::vector<double> image(std::size_t(psf.npix_x) * psf.npix_y, 20.0);
  std::vector<double> ivar(image.size(), 0.05);
  kspecter::extract::ExtractOptions opt;
  kspecter::extract::ExtractHooks hooks;
  hooks.debug_patch = kspecter::extract::ExtractHooks::every_patch;
  opt.wmin = 6000;
  opt.wmax = 6080;
  opt.bundlesize = 5;
  opt.nwavestep = 40;
  opt.model = true;

  launched().clear();
  Kokkos::Tools::Experimental::set_begin_parallel_for_callback(record);
  Kokkos::Tools::Experimental::set_begin_parallel_reduce_callback(record);
  Kokkos::Tools::Experimental::set_begin_parallel_scan_callback(record);
  auto const frame = kspecter::extract::extract_frame(
      KSPECTER_STRINGIFY(TEST_CATEGORY), psf,
      kspecter::extract::ImageArray::host(image.data(), psf.npix_y, psf.npix_x),
      kspecter::extract::ImageArray::host(ivar.data(), psf.npix_y, psf.npix_x), opt, nullptr,
      hooks);
  Kokkos::Tools::Experimental::set_begin_parallel_for_callback(nullptr);
  Kokkos::Tools::Experimental::set_begin_parallel_reduce_callback(nullptr);
  Kokkos::Tools::Experimental::set_begin_parallel_scan_callback(nullptr);

  EXPECT_EQ(frame.nspec, 10);
  std::set<std::string> const names(launched().begin(), launched().end());
  // The extraction did run each part: spots, its own stages, the solves, the model image.
  for (char const* k :
       {"kspecter::psf::spots", "kspecter::extract::assemble_icov",
        "kspecter::solve::band_cholesky",  // the band path, on by default
        "kspecter::solve::band_strided_inverse_blocks", "kspecter::extract::decorrelate",
        "kspecter::extract::chi2pix", "kspecter::extract::frame_model"})
    EXPECT_EQ(names.count(k), 1u) << k << " was not launched";
  // The inverse square root: one kernel on a host, its stages on a GPU (…::prepare, …).
  bool const isqrt = std::any_of(names.begin(), names.end(), [](std::string const& n) {
    return n == "kspecter::solve::inverse_sqrt" ||
           n.rfind("kspecter::solve::inverse_sqrt::", 0) == 0;
  });
  EXPECT_TRUE(isqrt) << "kspecter::solve::inverse_sqrt was not launched";
  for (auto const& n : names) EXPECT_TRUE(kspecter_label(n)) << "kernel \"" << n << "\"";
}

}  // namespace
