// `kspecter make-psf`: writes the synthetic DESI-r-like GaussHermite PSF.
#include "args.hpp"
#include "commands.hpp"
#include "session.hpp"

#include <kspecter/io/psf_file.hpp>
#include <kspecter/psf/synthetic_psf.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <utility>

namespace kspecter::cli {

int run_make_psf(int argc, char** argv) {
  psf::SyntheticPsfOptions const d;
  auto num = [](double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", x);
    return std::string(b);
  };
  ArgParser args("make-psf",
                 "Writes a synthetic GaussHermite PSF (specex format, PSFVER 3) with the geometry "
                 "of a DESI r camera: fibers in bundles of 25 (7.3 px pitch, ~20 px between "
                 "bundles), curved traces, widths and Gauss-Hermite terms varying with "
                 "wavelength. The defaults are the PSF kspecter uses when none is given.");
  args.option("output", 'o', "FILE", "the PSF file to write", "", true);
  args.option("nfiber", 0, "N", "number of fibers", std::to_string(d.nfiber));
  args.option("fibermin", 0, "N", "absolute number of the first fiber", std::to_string(d.fibermin));
  args.option("seed", 0, "N", "seed of the fiber-to-fiber scatter", std::to_string(d.seed));
  args.option("wave-range", 'w', "WMIN,WMAX", "Legendre range of the PSF, Angstrom",
              num(d.wavemin) + "," + num(d.wavemax));
  args.option("ccd", 0, "NX,NY", "CCD columns and rows",
              std::to_string(d.npix_x) + "," + std::to_string(d.npix_y));
  args.option("hsize", 0, "HX,HY", "spot half sizes (spots of 2HY+1 rows x 2HX+1 columns)",
              std::to_string(d.hsizex) + "," + std::to_string(d.hsizey));
  args.option("ghdeg", 0, "DX,DY", "Gauss-Hermite degrees in x and y",
              std::to_string(d.ghdegx) + "," + std::to_string(d.ghdegy));
  args.option("legdeg", 0, "N", "Legendre degree (in wavelength) of the PSF parameters",
              std::to_string(d.legdeg));
  args.option("tailamp", 0, "A", "amplitude of the power-law tails (0: none)", num(d.tailamp));
  args.option("psferr", 0, "E", "PSFERR, the fractional PSF model error", num(d.psferr));
  add_common_options(args);
  if (!args.parse(argc, argv)) return 0;

  psf::SyntheticPsfOptions o;
  o.nfiber = args.get_int("nfiber");
  o.fibermin = args.get_int("fibermin");
  long long const seed = args.get_int64("seed");
  if (seed < 0) throw ParameterError("make-psf: --seed must be >= 0");
  o.seed = static_cast<std::uint64_t>(seed);
  auto const wr = args.get_doubles("wave-range", 2);
  o.wavemin = wr[0];
  o.wavemax = wr[1];
  auto ints = [&](char const* name) {
    auto const v = args.get_doubles(name, 2);
    for (double x : v)
      if (x != static_cast<int>(x))
        throw ParameterError(std::string("make-psf: --") + name + " expects integers");
    return std::pair<int, int>(static_cast<int>(v[0]), static_cast<int>(v[1]));
  };
  std::tie(o.npix_x, o.npix_y) = ints("ccd");
  std::tie(o.hsizex, o.hsizey) = ints("hsize");
  std::tie(o.ghdegx, o.ghdegy) = ints("ghdeg");
  o.legdeg = args.get_int("legdeg");
  o.tailamp = args.get_double("tailamp");
  o.psferr = args.get_double("psferr");

  psf::GaussHermitePsf const p = psf::make_synthetic_psf(o);  // option errors before start-up
  Session s(argc, argv, args, /*use_mpi=*/false);
  std::string const out = args.get("output");
  if (s.env->rank() == 0) io::write_psf(out, p);
  s.log.info("make-psf: wrote " + out + " (" + std::to_string(p.nfiber) + " fibers, " +
             std::to_string(p.params.size()) + " parameters, spots " + std::to_string(p.spot_ny()) +
             " x " + std::to_string(p.spot_nx()) + " px, " + num(p.wavemin()) + "-" +
             num(p.wavemax()) + " A)");
  return 0;
}

}  // namespace kspecter::cli
