#include "frame_list.hpp"

#include "args.hpp"

#include <kspecter/core/error.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace kspecter::cli {

namespace {
// "WMIN,WMAX,DW" as three finite numbers.
std::vector<double> parse_grid(std::string const& text, std::string const& where) {
  std::vector<double> w;
  bool const ok = parse_numbers(text, w) && w.size() == 3 && std::isfinite(w[0]) &&
                  std::isfinite(w[1]) && std::isfinite(w[2]);
  if (!ok)
    throw ParameterError("extract: " + where + ": the wavelength grid must be WMIN,WMAX,DW, got '" +
                         text + "'");
  return w;
}
}  // namespace

std::vector<parallel::JobFrame> read_frame_list(std::string const& path) {
  std::ifstream in(path);
  if (!in) throw ParameterError("extract: cannot read the batch list " + path);
  std::vector<parallel::JobFrame> frames;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string s; words >> s;) w.push_back(s);
    if (w.empty() || w[0][0] == '#') continue;
    std::string const where = path + ":" + std::to_string(number);
    if (w.size() < 3 || w.size() > 4)
      throw ParameterError("extract: " + where +
                           ": expected `image psf output [WMIN,WMAX,DW]`, found " +
                           std::to_string(w.size()) + " field" + (w.size() == 1 ? "" : "s"));
    parallel::JobFrame f;
    f.image = w[0];
    f.psf = w[1];
    f.output = w[2];
    if (w.size() == 4) f.grid = parse_grid(w[3], where);
    f.origin = where;
    frames.push_back(std::move(f));
  }
  if (in.bad()) throw ParameterError("extract: error while reading the batch list " + path);
  if (frames.empty()) throw ParameterError("extract: the batch list " + path + " names no frame");
  check_distinct_outputs(frames);
  return frames;
}

void check_distinct_outputs(std::vector<parallel::JobFrame> const& frames) {
  std::map<std::string, std::string> seen;
  for (auto const& f : frames) {
    auto const key = std::filesystem::absolute(f.output).lexically_normal().string();
    auto const [it, fresh] = seen.emplace(key, f.origin);
    if (!fresh)
      throw ParameterError("extract: " + f.origin + ": output " + f.output +
                           " is also written by " + it->second);
  }
}

}  // namespace kspecter::cli
