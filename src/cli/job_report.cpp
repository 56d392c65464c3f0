#include "job_report.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/core/version.hpp>
#include <kspecter/extract/mask_bits.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

namespace kspecter::cli {

namespace {

constexpr int max_fiber_lines = 20;
constexpr int max_ranges = 4;

// The wavelength ranges of the bins of fiber `i` where `bad(k)` holds: "5760.0-5802.4 A, ...".
template <class Bad>
std::string ranges(extract::FrameResult const& f, int i, Bad bad, long long& count) {
  std::string out;
  int nranges = 0;
  count = 0;
  for (int k = 0; k < f.nwave;) {
    if (!bad(std::size_t(i) * f.nwave + k)) {
      ++k;
      continue;
    }
    int const k0 = k;
    while (k < f.nwave && bad(std::size_t(i) * f.nwave + k)) ++k;
    count += k - k0;
    if (nranges++ < max_ranges) {
      char b[64];
      std::snprintf(b, sizeof b, "%s%.1f-%.1f A", out.empty() ? "" : ", ", f.wavelength[k0],
                    f.wavelength[k - 1]);
      out += b;
    }
  }
  if (nranges > max_ranges) out += " and " + std::to_string(nranges - max_ranges) + " more";
  return out;
}

std::string json_string(std::string const& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else {
      o += c;
    }
  }
  return o + "\"";
}

std::string json_number(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6f", x);
  return b;
}

}  // namespace

void warn_about_frame(Logger const& log, extract::FrameResult const& f, std::string const& name,
                      double masked_fraction) {
  if (!log.enabled(LogLevel::warning) || f.nwave == 0) return;
  if (f.stats.nfailed > 0)
    log.warning(name + ": " + std::to_string(f.stats.nfailed) + " of " +
                std::to_string(f.stats.npatch) +
                " patches failed their Cholesky factorisation: their bins have ivar = 0 and "
                "BAD2DFIT");
  auto lost = [&](std::size_t j) {
    return f.ivar[j] == 0 && (f.mask[j] & extract::specmask::BAD2DFIT);
  };
  auto masked = [&](std::size_t j) { return f.ivar[j] == 0; };
  int lines_lost = 0, more_lost = 0, lines_masked = 0, more_masked = 0;
  for (int i = 0; i < f.nspec; ++i) {
    long long n = 0;
    std::string const where = ranges(f, i, lost, n);
    if (n == 0) continue;
    if (lines_lost++ >= max_fiber_lines) {
      ++more_lost;
      continue;
    }
    log.warning(name + ": fiber " + std::to_string(f.specmin + i) + ": " + std::to_string(n) +
                " bins with BAD2DFIT and ivar = 0 (a failed patch or numbers beyond float32) at " +
                where);
  }
  if (more_lost > 0)
    log.warning(name + ": and " + std::to_string(more_lost) +
                " more fibers with BAD2DFIT bins at ivar = 0");
  for (int i = 0; i < f.nspec; ++i) {
    long long n = 0;
    std::string const where = ranges(f, i, masked, n);
    double const frac = double(n) / f.nwave;
    if (n == 0 || frac <= masked_fraction) continue;
    if (lines_masked++ >= max_fiber_lines) {
      ++more_masked;
      continue;
    }
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.1f%%", 100 * frac);
    log.warning(name + ": fiber " + std::to_string(f.specmin + i) + ": " + pct + " of its bins (" +
                std::to_string(n) + ") have ivar = 0, at " + where);
  }
  if (more_masked > 0)
    log.warning(name + ": and " + std::to_string(more_masked) + " more fibers with more than " +
                json_number(100 * masked_fraction) + "% of their bins at ivar = 0");
}

void write_timing_json(std::string const& path, parallel::JobOutcome const& out, int nframes,
                       int nranks, double startup_seconds) {
  std::ostringstream o;
  o << "{\n  \"kspecter\": " << json_string(version()) << ",\n";
  o << "  \"ok\": " << (out.ok() ? "true" : "false") << ",\n";
  o << "  \"frames\": " << nframes << ",\n  \"frames_done\": " << out.summary.frames_done
    << ",\n  \"ranks\": " << nranks << ",\n";
  o << "  \"space\": " << json_string(out.space) << ",\n";
  o << "  \"startup_seconds\": " << json_number(startup_seconds) << ",\n";
  o << "  \"job_wall_seconds\": " << json_number(out.wall_seconds) << ",\n";
  o << "  \"busiest_rank_seconds\": " << json_number(out.summary.max_busy_seconds) << ",\n";
  o << "  \"total_seconds\": " << json_number(seconds_since_start()) << ",\n";
  o << "  \"stages\": {";
  bool first = true;
  for (auto const& e : out.times.entries()) {
    o << (first ? "\n" : ",\n") << "    " << json_string(e.stage) << ": " << json_number(e.seconds);
    first = false;
  }
  o << (first ? "}\n" : "\n  }\n") << "}\n";
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << o.str();
  f.close();
  if (!f) throw Error("--timing-json: cannot write " + path);
}

}  // namespace kspecter::cli
