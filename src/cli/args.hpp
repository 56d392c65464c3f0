// A small command-line parser for kspecter's subcommands: long options (--name value or
// --name=value), short aliases (-o value), boolean flags, defaults, required options and a
// generated --help. Parse errors are ParameterError with the option named.
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
    std::string name, metavar, help, def;
    char alias = 0;
    bool is_flag = false, required = false;
    bool given = false;
    std::string value;
  };
  Spec* find(std::string const& name);
  Spec const& spec(std::string const& name) const;
  std::string command_, summary_;
  std::vector<Spec> specs_;
  std::vector<std::string> positional_;
  bool kokkos_flags_ = false;
  std::vector<std::string> kokkos_args_;
};

/// Parses "a,b,c" into `out`: false when an item is empty, not a number or out of range.
bool parse_numbers(std::string const& text, std::vector<double>& out);

/// Adds the options every subcommand takes: --threads, --device, --log-level, and passes
/// --kokkos-* flags on to Kokkos.
void add_common_options(ArgParser& p);

}  // namespace kspecter::cli
