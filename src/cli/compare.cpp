// `kspecter compare A B`: how far two extractions of the same frame are apart (CPU vs GPU,
// one code version against another), in the peers' yardsticks: pull, flux and ivar.
#include "args.hpp"
#include "commands.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/io/frame_file.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kspecter::cli {

int run_compare(int argc, char** argv) {
  ArgParser args("compare",
                 "Compares two frames of the same spectra (FITS or HDF5): the largest |pull| = "
                 "|f1 - f2| / sqrt(1/ivar1 + 1/ivar2) over bins with ivar > 0 in both, the "
                 "largest relative ivar and resolution differences, and bins masked in one only; "
                 "then, for information, the largest relative chi2pix difference and the bins "
                 "whose mask bits differ. "
                 "Exit 0 when the frames agree within --max-pull, 1 otherwise.");
  args.option("max-pull", 0, "X", "largest |pull| that counts as agreement", "1e-9");
  args.positionals("FRAME_A FRAME_B", 2, 2);
  if (!args.parse(argc, argv)) return 0;
  auto const& files = args.positional();
  auto const a = io::read_frame(files[0]);
  auto const b = io::read_frame(files[1]);
  if (a.nspec != b.nspec || a.nwave != b.nwave || a.ndiag != b.ndiag || a.specmin != b.specmin)
    throw ParameterError("compare: the frames hold different spectra or grids (" +
                         std::to_string(a.nspec) + " x " + std::to_string(a.nwave) + " vs " +
                         std::to_string(b.nspec) + " x " + std::to_string(b.nwave) + ")");
  double max_pull = 0, max_ivar = 0, max_res = 0;
  long long n = 0, only_one = 0, bad = 0;
  for (std::size_t i = 0; i < a.flux.size(); ++i) {
    double const ia = a.ivar[i], ib = b.ivar[i];
    if ((ia > 0) != (ib > 0)) ++only_one;
    if (!(ia > 0 && ib > 0)) continue;
    ++n;
    double const pull = (double(a.flux[i]) - b.flux[i]) / std::sqrt(1 / ia + 1 / ib);
    if (!std::isfinite(pull)) ++bad;
    max_pull = std::max(max_pull, std::abs(pull));
    max_ivar = std::max(max_ivar, std::abs(ia - ib) / std::max(ia, ib));
  }
  for (std::size_t i = 0; i < a.resolution.size(); ++i)
    max_res = std::max(max_res, double(std::abs(a.resolution[i] - b.resolution[i])));
  // The quality outputs: chi2pix, and the mask bits (ivar = 0 bins included).
  double max_chi2 = 0;
  long long mask_differ = 0;
  for (std::size_t i = 0; i < a.chi2pix.size() && i < b.chi2pix.size(); ++i) {
    double const ca = a.chi2pix[i], cb = b.chi2pix[i], big = std::max(std::abs(ca), std::abs(cb));
    if (big > 0) max_chi2 = std::max(max_chi2, std::abs(ca - cb) / big);
  }
  for (std::size_t i = 0; i < a.mask.size() && i < b.mask.size(); ++i)
    mask_differ += a.mask[i] != b.mask[i] ? 1 : 0;
  std::printf("compared %d spectra x %d bins (%lld with ivar > 0 in both)\n", a.nspec, a.nwave, n);
  std::printf("max |pull|            %.3e\n", max_pull);
  std::printf("max |divar|/ivar      %.3e\n", max_ivar);
  std::printf("max |dR|              %.3e\n", max_res);
  std::printf("ivar > 0 in one only  %lld\n", only_one);
  std::printf("max |dchi2pix|/chi2pix %.3e\n", max_chi2);
  std::printf("mask bits differ      %lld\n", mask_differ);
  bool const agree = bad == 0 && only_one == 0 && max_pull <= args.get_double("max-pull");
  std::printf("%s (max |pull| %s %.1e)\n", agree ? "AGREE" : "DIFFER", agree ? "<=" : ">",
              args.get_double("max-pull"));
  return agree ? 0 : 1;
}

}  // namespace kspecter::cli
