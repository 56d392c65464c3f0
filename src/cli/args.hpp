// A small command-line parser for kspecter's subcommands, with argparse's (desispec's, spex's)
// spellings: long options (--name value, --name=value), short aliases (-n 5, -n5, -n=5),
// other tools' long names for the same option (--loglevel), boolean flags, defaults, required
// options, options refused with a reason, and a generated --help in groups. Every argument that
// is not an option of the command, a malformed one or a missing value is a ParameterError that
// names it (exit status 2). Why not CLI11: see args.cpp.
#pragma once

#include <kspecter/core/error.hpp>

#include <string>
#include <vector>

namespace kspecter::cli {

class ArgParser {
 public:
  ArgParser(std::string command, std::string summary);

  /// A boolean switch: present or absent.
  void flag(std::string const& name, char alias, std::string const& help);
  /// An option with a value; `def` empty and `required` false means "unset unless given".
  void option(std::string const& name, char alias, std::string const& metavar,
              std::string const& help, std::string const& def = "", bool required = false);

  /// Options declared from now on are listed under `title` in --help.
  void group(std::string const& title) { group_ = title; }
  /// `other` (without the dashes: another tool's spelling) means option `name`.
  void alias(std::string const& other, std::string const& name);
  /// Another tool's option that kspecter does not take: giving it is an error that says
  /// `reason`. `takes_value`: its value is named in the message, not taken for a positional.
  void refuse(std::string const& name, bool takes_value, std::string const& reason);
  /// The command takes `min`..`max` arguments that are not options (none unless declared).
  void positionals(std::string const& metavar, int min, int max);

  /// Parses argv[first..argc). Returns false when --help was asked for (help printed).
  bool parse(int argc, char** argv, int first = 2);

  bool declares(std::string const& name) const;  // an option or flag of this command
  bool has(std::string const& name) const;       // given, or has a default
  bool is_set(std::string const& flag_name) const;
  std::string get(std::string const& name) const;
  int get_int(std::string const& name) const;
  long long get_int64(std::string const& name) const;
  double get_double(std::string const& name) const;
  /// "a,b,c" as doubles; `count` > 0 demands exactly that many.
  std::vector<double> get_doubles(std::string const& name, int count = 0) const;
  /// Arguments that are not options, in order.
  std::vector<std::string> const& positional() const { return positional_; }

  /// From now on --kokkos-* arguments are not options of this parser but Kokkos' own:
  /// parse() collects them, as given, for Kokkos::initialize.
  void pass_kokkos_flags() { kokkos_flags_ = true; }
  std::vector<std::string> const& kokkos_args() const { return kokkos_args_; }

  std::string help() const;

 private:
  struct Spec {
    std::string name, metavar, help, def, group;
    char alias = 0;
    bool is_flag = false, required = false;
    bool given = false;
    std::string value;
    std::vector<std::string> aliases;  // other tools' spellings
    std::string refused;               // non-empty: the reason it is refused
  };
  Spec* find(std::string const& name);
  Spec* find_short(char c);
  std::string group_ = "options";
  std::string positional_metavar_;
  int positional_min_ = 0, positional_max_ = 0;
  Spec const& spec(std::string const& name) const;
  std::string command_, summary_;
  std::vector<Spec> specs_;
  std::vector<std::string> positional_;
  bool kokkos_flags_ = false;
  std::vector<std::string> kokkos_args_;
};

/// Parses "a,b,c" into `out`: false when an item is empty, not a number or out of range.
bool parse_numbers(std::string const& text, std::vector<double>& out);

/// `v` as printf's %g writes it, with as many digits (6 at least) as it takes to parse back to
/// exactly `v` ("0.8", "5760"): defaults shown in --help and parsed like a given value.
std::string number_text(double v);

/// Adds the options every subcommand takes: --threads, --device, --log-level (--loglevel),
/// --log-format, --gzip-level, --io-threads, and passes --kokkos-* flags on to Kokkos.
void add_common_options(ArgParser& p);

}  // namespace kspecter::cli
