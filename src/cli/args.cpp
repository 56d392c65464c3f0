#include "args.hpp"

#include <kspecter/io/gzip_settings.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace kspecter::cli {

// Why this parser and not CLI11 (Debian's libcli11-dev 2.1.2, Spack's cli11), measured on the
// 2-core build machine: a file that includes CLI/CLI.hpp for one option takes 11.8 s and 327 MB
// to compile (g++ -O2), one with this parser's headers 0.7 s. And CLI11 2.1.2 reads argparse's
// `-n=5` as the value "=5", and answers `-o -n 5` with "The following argument was not
// expected: 5" where argparse (and this parser) say "-o needs a value"; desispec's and spex's
// command lines are argparse's (tests/cli/tst_cli_spellings.cpp). The rules below are
// argparse's.

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
  s.group = group_;
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
  s.group = group_;
  specs_.push_back(s);
}

void ArgParser::alias(std::string const& other, std::string const& name) {
  for (auto& s : specs_)
    if (s.name == name) {
      s.aliases.push_back(other);
      return;
    }
  throw Error("internal: alias --" + other + " of undeclared --" + name);
}

void ArgParser::refuse(std::string const& name, bool takes_value, std::string const& reason) {
  Spec s;
  s.name = name;
  s.is_flag = !takes_value;
  s.metavar = takes_value ? "X" : "";
  s.refused = reason;
  s.group = group_;
  specs_.push_back(s);
}

void ArgParser::positionals(std::string const& metavar, int min, int max) {
  positional_metavar_ = metavar;
  positional_min_ = min;
  positional_max_ = max;
}

ArgParser::Spec* ArgParser::find(std::string const& name) {
  for (auto& s : specs_) {
    if (s.name == name) return &s;
    for (auto const& a : s.aliases)
      if (a == name) return &s;
  }
  return nullptr;
}

ArgParser::Spec* ArgParser::find_short(char c) {
  for (auto& s : specs_)
    if (s.alias == c) return &s;
  return nullptr;
}

ArgParser::Spec const& ArgParser::spec(std::string const& name) const {
  for (auto const& s : specs_)
    if (s.name == name) return s;
  throw Error("internal: option --" + name + " is not declared for '" + command_ + "'");
}

namespace {

// "-5", "-0.5", "-.5", "-1e3": a negative number, never an option (no option is a digit).
bool negative_number(std::string const& a) {
  return a.size() > 1 && a[0] == '-' &&
         ((a[1] >= '0' && a[1] <= '9') || (a[1] == '.' && a.size() > 2));
}

}  // namespace

bool ArgParser::parse(int argc, char** argv, int first) {
  std::string const cmd = command_ + ": ";
  for (int i = first; i < argc; ++i) {
    std::string const a = argv[i];
    Spec* s = nullptr;
    std::string shown;  // the option as given, for messages
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
      shown = "--" + name;
      if (!s) throw ParameterError(cmd + "unknown option '" + shown + "' (see --help)");
    } else if (a.size() >= 2 && a[0] == '-' && a[1] != '-' && !negative_number(a)) {
      // -n 5, -n5, -n=5 (argparse's three spellings of a short option's value).
      shown = a.substr(0, 2);
      s = find_short(a[1]);
      if (!s) throw ParameterError(cmd + "unknown option '" + shown + "' (see --help)");
      if (a.size() > 2) {
        value = a.compare(2, 1, "=") == 0 ? a.substr(3) : a.substr(2);
        inline_value = true;
      }
    } else {
      if (positional_max_ == 0)
        throw ParameterError(cmd + "unexpected argument '" + a +
                             "': this command takes options only (see --help)");
      if (static_cast<int>(positional_.size()) >= positional_max_)
        throw ParameterError(cmd + "unexpected argument '" + a + "' (it takes at most " +
                             std::to_string(positional_max_) + " " + positional_metavar_ + ")");
      positional_.push_back(a);
      continue;
    }
    if (!s->refused.empty()) throw ParameterError(cmd + shown + " is not supported: " + s->refused);
    if (s->is_flag) {
      if (inline_value) throw ParameterError(cmd + shown + " takes no value, got '" + a + "'");
      s->given = true;
      if (s->name == "help") {
        std::fputs(help().c_str(), stdout);
        return false;
      }
      continue;
    }
    if (!inline_value) {
      // argparse: a value may not look like an option (a negative number may).
      bool const missing = i + 1 >= argc || (argv[i + 1][0] == '-' && argv[i + 1][1] != '\0' &&
                                             !negative_number(argv[i + 1]));
      if (missing)
        throw ParameterError(
            cmd + shown + " needs a value" +
            (i + 1 < argc ? std::string(", got the option '") + argv[i + 1] + "'" : std::string()));
      value = argv[++i];
    }
    s->given = true;
    s->value = value;
  }
  for (auto const& s : specs_)
    if (s.required && !s.given)
      throw ParameterError(cmd + "--" + s.name + " is required (see --help)");
  if (static_cast<int>(positional_.size()) < positional_min_)
    throw ParameterError(cmd + "expects " + std::to_string(positional_min_) + " arguments (" +
                         positional_metavar_ + "), got " + std::to_string(positional_.size()));
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

namespace {

// `text` in lines of at most `width` columns, the second and later indented by `indent` (the
// first starts there already).
std::string wrap(std::string const& text, std::size_t indent, std::size_t width) {
  std::string out, word;
  std::size_t column = indent;
  std::istringstream words(text);
  bool first = true;
  while (words >> word) {
    if (!first && column + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else if (!first) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    first = false;
  }
  return out;
}

}  // namespace

std::string ArgParser::help() const {
  std::ostringstream o;
  o << "usage: kspecter " << command_ << " [options]";
  if (positional_max_ > 0) o << " " << positional_metavar_;
  o << "\n\n" << wrap(summary_, 0, 100) << "\n";
  std::vector<std::string> groups;
  for (auto const& s : specs_)
    if (std::find(groups.begin(), groups.end(), s.group) == groups.end()) groups.push_back(s.group);
  for (auto const& g : groups) {
    o << "\n" << g << ":\n";
    for (auto const& s : specs_) {
      if (s.group != g) continue;
      std::string lhs = "  ";
      lhs += s.alias ? std::string("-") + s.alias + ", " : "    ";
      lhs += "--" + s.name;
      for (auto const& a : s.aliases) lhs += ", --" + a;
      if (!s.is_flag) lhs += " " + s.metavar;
      o << lhs;
      if (lhs.size() >= 34)
        o << "\n" << std::string(34, ' ');
      else
        o << std::string(34 - lhs.size(), ' ');
      std::string text = s.refused.empty() ? s.help : "refused: " + s.refused;
      if (s.required) text += " (required)";
      if (!s.def.empty()) text += " [default: " + s.def + "]";
      o << wrap(text, 34, 100) << "\n";
    }
    if (kokkos_flags_ && g == specs_.back().group)
      o << "  --kokkos-*=...                  passed to Kokkos, e.g. --kokkos-tools-libs=LIB, "
           "--kokkos-print-configuration (--kokkos-help lists them)\n";
  }
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
  p.group("run time and logging");
  p.option("threads", 0, "N", "host threads per rank (OpenMP)", "");
  p.option("device", 0, "ID", "GPU ordinal (default: node-local rank modulo GPUs)", "");
  p.option("log-level", 0, "LEVEL",
           "DEBUG, INFO, WARNING, ERROR or CRITICAL (any case; quiet = WARNING); overrides "
           "$DESI_LOGLEVEL (default: $DESI_LOGLEVEL, else INFO)");
  p.alias("loglevel", "log-level");  // spex
  p.option("log-format", 0, "FORMAT",
           "elapsed: '[kspecter 1.234 s] message'; desi: desiutil's "
           "'LEVEL:file:line:function: message'",
           "elapsed");
  p.option("gzip-level", 0, "N",
           "igzip level of the .gz files written: 0 (fastest) to 3 (smallest)",
           std::to_string(io::GzipSettings{}.level));
  p.option("io-threads", 0, "N",
           "threads for gzip (inflating inputs ahead, deflating outputs); 0: --threads when "
           "given, else the CPUs this rank may use, shared with the node's other ranks when "
           "they are not bound",
           "0");
  p.pass_kokkos_flags();
}

}  // namespace kspecter::cli
