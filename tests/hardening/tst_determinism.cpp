// Determinism: the same inputs and options give bitwise-identical FLUX, IVAR, MASK,
// RESOLUTION, WAVELENGTH and CHI2PIX data (and model image) with 1, 2 or 4 OpenMP threads,
// on the Serial and OpenMP backends, and run after run (on a GPU too, compared with
// itself). Headers, which hold dates and checksums, are not compared. The image has defects
// (masked columns, cosmic rays) and a band of rows without data, so that the mask and the
// partly and wholly masked bins are exercised too.
#include "fits_edit.hpp"
#include "frame_checks.hpp"
#include "small_inputs.hpp"

#include <kspecter/io/frame_file.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace kspecter::test;

TEST(determinism, threads_backends_and_reruns_give_identical_frames) {
  SmallInputs in;
  ASSERT_NO_FATAL_FAILURE(make_small_inputs(in));
  std::string const simulated = in.dir + "/defects.fits", image = in.dir + "/masked.fits";
  auto r = run_kspecter("simulate -p " + in.psf + " -o " + simulated + " " + small_grid +
                        " --seed 11 --defects");
  ASSERT_EQ(r.status, 0) << r.out;
  // And a band of rows without data (whole bins lost) and a dead column (bins partly lost).
  fits_edit::edit_image(simulated, image, "IVAR",
                        [](std::vector<double>& v, std::vector<long> const& ax) {
                          for (long y = 0; y < ax[1]; ++y)
                            for (long x = 0; x < ax[0]; ++x)
                              if ((y >= 300 && y < 340) || (x == 95 && y >= 100 && y < 200))
                                v[std::size_t(y * ax[0] + x)] = 0;
                        });

  // The backends of this build, from `kspecter info` ("backends  Serial, OpenMP, Cuda").
  auto const info = run_kspecter("info");
  ASSERT_EQ(info.status, 0) << info.out;
  auto has = [&](char const* name) { return info.out.find(name) != std::string::npos; };
  struct Run {
    std::string name, options;
  };
  // Host backends and thread counts: all bit for bit alike. A GPU rounds its own way (see
  // docs/building-gpu.md): its runs are compared with each other only.
  std::vector<Run> host, gpu;
  if (has("OpenMP"))
    host.insert(host.end(), {{"openmp_1", "--backend openmp --threads 1"},
                             {"openmp_2", "--backend openmp --threads 2"},
                             {"openmp_4", "--backend openmp --threads 4"},
                             {"openmp_2_again", "--backend openmp --threads 2"}});
  if (has("Serial"))
    host.insert(host.end(), {{"serial", "--backend serial"}, {"serial_again", "--backend serial"}});
  if (has("Cuda")) gpu = {{"cuda", "--backend cuda"}, {"cuda_again", "--backend cuda"}};
  ASSERT_GE(host.size(), 2u) << info.out;
  for (auto const* runs : {&host, &gpu}) {
    if (runs->empty()) continue;
    kspecter::io::FrameData first;
    std::vector<double> first_model;
    for (auto const& run : *runs) {
      SCOPED_TRACE(run.name);
      std::string const out = in.dir + "/" + run.name + ".fits";
      std::string const model = in.dir + "/" + run.name + "_model.fits";
      r = run_kspecter(extract_args(image, in.psf, out) + " -m " + model + " " + run.options);
      ASSERT_EQ(r.status, 0) << r.out;
      auto const fr = kspecter::io::read_frame(out);
      auto const m = fits_edit::read_image(model, "MODEL");
      EXPECT_TRUE(clean_frame(fr));
      if (first.nspec == 0) {
        first = fr;
        first_model = m;
        // Something to be identical about: masked bins and partly masked ones.
        int masked = 0;
        for (auto v : fr.mask) masked += v != 0;
        EXPECT_GT(masked, 0);
        continue;
      }
      EXPECT_TRUE(same_frame_data(first, fr));
      EXPECT_TRUE(same_bits(first_model, m)) << "MODEL differs";
    }
  }
}

}  // namespace
