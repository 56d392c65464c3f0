#include "args.hpp"

#include <kspecter/io/gzip_settings.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace kspecter::cli {

ArgParser::ArgParser(std::string command, std::string summary)
    : command_(std::move(command)), summary_(std::move(summary)) {
  flag("help", 'h', "show this help and exit");
}

void ArgParser::flag(std::string const& name, char alias, std::string const& help) {
  Spec s;
  s.name = name;
  s.alias = alias;
  s.help = help;
  s.is_flag = true;
  specs_.push_back(s);
}

void ArgParser::option(std::string const& name, char alias, std::string const& metavar,
                       std::string const& help, std::string const& def, bool required) {
  Spec s;
  s.name = name;
  s.alias = alias;
  s.metavar = metavar;
  s.help = help;
  s.def = def;
  s.required = required;
  specs_.push_back(s);
}

ArgParser::Spec* ArgParser::find(std::string const& name) {
  for (auto& s : specs_)
    if (s.name == name) return &s;
  return nullptr;
}

ArgParser::Spec const& ArgParser::spec(std::string const& name) const {
  for (auto const& s : specs_)
    if (s.name == name) return s;
  throw Error("internal: option --" + name + " is not declared for '" + command_ + "'");
}

bool ArgParser::parse(int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    Spec* s = nullptr;
    std::string value;
    bool inline_value = false;
    if (a.size() > 2 && a.compare(0, 2, "--") == 0) {
      std::string name = a.substr(2);
      auto const eq = name.find('=');
      if (eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        inline_value = true;
      }
      if (kokkos_flags_ && name.rfind("kokkos-", 0) == 0) {
        kokkos_args_.push_back(a);  // Kokkos parses it (compat::initialize)
        continue;
      }
      s = find(name);
      if (!s) throw ParameterError(command_ + ": unknown option '--" + name + "' (see --help)");
    } else if (a.size() == 2 && a[0] == '-' && a[1] != '-' && !(a[1] >= '0' && a[1] <= '9')) {
      for (auto& sp : specs_)
        if (sp.alias == a[1]) s = &sp;
      if (!s) throw ParameterError(command_ + ": unknown option '" + a + "' (see --help)");
    } else {
      positional_.push_back(a);
      continue;
    }
    if (s->is_flag) {
      if (inline_value) throw ParameterError(command_ + ": --" + s->name + " takes no value");
      s->given = true;
      if (s->name == "help") {
        std::fputs(help().c_str(), stdout);
        return false;
      }
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argc) throw ParameterError(command_ + ": --" + s->name + " needs a value");
      value = argv[++i];
    }
    s->given = true;
    s->value = value;
  }
  for (auto const& s : specs_)
    if (s.required && !s.given)
      throw ParameterError(command_ + ": --" + s.name + " is required (see --help)");
  return true;
}

bool ArgParser::declares(std::string const& name) const {
  for (auto const& s : specs_)
    if (s.name == name) return true;
  return false;
}

bool ArgParser::has(std::string const& name) const {
  auto const& s = spec(name);
  return s.given || !s.def.empty();
}

bool ArgParser::is_set(std::string const& flag_name) const { return spec(flag_name).given; }

std::string ArgParser::get(std::string const& name) const {
  auto const& s = spec(name);
  return s.given ? s.value : s.def;
}

long long ArgParser::get_int64(std::string const& name) const {
  std::string const v = get(name);
  errno = 0;
  char* end = nullptr;
  long long const x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || errno != 0 || *end != '\0')
    throw ParameterError(command_ + ": --" + name + " expects an integer, got '" + v + "'");
  return x;
}

int ArgParser::get_int(std::string const& name) const {
  long long const x = get_int64(name);
  if (x < -2147483647LL || x > 2147483647LL)
    throw ParameterError(command_ + ": --" + name + " is out of range: " + get(name));
  return static_cast<int>(x);
}

static bool to_double(std::string const& v, double& x) {
  errno = 0;
  char* end = nullptr;
  x = std::strtod(v.c_str(), &end);
  return !v.empty() && errno == 0 && *end == '\0';
}

double ArgParser::get_double(std::string const& name) const {
  std::string const v = get(name);
  double x;
  if (!to_double(v, x))
    throw ParameterError(command_ + ": --" + name + " expects a number, got '" + v + "'");
  return x;
}

bool parse_numbers(std::string const& text, std::vector<double>& out) {
  out.clear();
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    double x;
    if (!to_double(item, x)) return false;
    out.push_back(x);
  }
  return true;
}

std::vector<double> ArgParser::get_doubles(std::string const& name, int count) const {
  std::string const v = get(name);
  std::vector<double> out;
  if (!parse_numbers(v, out))
    throw ParameterError(command_ + ": --" + name + " expects numbers separated by commas, got '" +
                         v + "'");
  if (count > 0 && static_cast<int>(out.size()) != count)
    throw ParameterError(command_ + ": --" + name + " expects " + std::to_string(count) +
                         " comma-separated numbers, got '" + v + "'");
  return out;
}

std::string ArgParser::help() const {
  std::ostringstream o;
  o << "usage: kspecter " << command_ << " [options]\n\n" << summary_ << "\n\noptions:\n";
  for (auto const& s : specs_) {
    std::string lhs = "  ";
    lhs += s.alias ? std::string("-") + s.alias + ", " : "    ";
    lhs += "--" + s.name;
    if (!s.is_flag) lhs += " " + s.metavar;
    o << lhs;
    o << std::string(lhs.size() < 34 ? 34 - lhs.size() : 1, ' ') << s.help;
    if (s.required) o << " (required)";
    if (!s.def.empty()) o << " [default: " << s.def << "]";
    o << "\n";
  }
  if (kokkos_flags_)
    o << "  --kokkos-*=...                   passed to Kokkos, e.g. --kokkos-tools-libs=LIB, "
         "--kokkos-print-configuration (--kokkos-help lists them)\n";
  return o.str();
}

std::string number_text(double v) {
  char s[32];
  // From printf's default 6 significant digits up: "5760" rather than "5.76e+03".
  for (int digits = 6; digits < 17; ++digits) {
    std::snprintf(s, sizeof s, "%.*g", digits, v);
    if (std::strtod(s, nullptr) == v) return s;
  }
  std::snprintf(s, sizeof s, "%.17g", v);
  return s;
}

void add_common_options(ArgParser& p) {
  p.option("threads", 0, "N", "host threads per rank (OpenMP)", "");
  p.option("device", 0, "ID", "GPU ordinal (default: node-local rank modulo GPUs)", "");
  p.option("log-level", 0, "LEVEL", "quiet, info or debug", "info");
  p.option("gzip-level", 0, "N",
           "igzip level of the .gz files written: 0 (fastest) to 3 (smallest)",
           std::to_string(io::GzipSettings{}.level));
  p.option("io-threads", 0, "N",
           "threads for gzip (inflating inputs ahead, deflating outputs); 0: the CPUs this rank "
           "may use, shared with the node's other ranks when they are not bound",
           "0");
  p.pass_kokkos_flags();
}

}  // namespace kspecter::cli
