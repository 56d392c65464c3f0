// FITS header records carried from an input file to an output one as they are (the preproc
// IMAGE header becomes the frame's FLUX header, as desispec makes it), with the typed
// look-ups and updates desispec makes on them. Plain strings: no fitsio.h here.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kspecter::io {

/// A header as its 80-character records (keywords, COMMENT, HISTORY, CONTINUE, blank), in
/// order, without the records a writer makes itself: SIMPLE, XTENSION, BITPIX, NAXIS, NAXISn,
/// EXTEND, PCOUNT, GCOUNT, EXTNAME, BSCALE, BZERO, CHECKSUM, DATASUM, END (structural_key).
class FitsHeader {
 public:
  std::vector<std::string> const& records() const { return records_; }
  /// Appends a record as read (cut or padded to 80 characters); structural ones are dropped.
  void add_record(std::string record);

  bool has(std::string const& key) const { return find(key) >= 0; }
  /// The keywords that have a value, in order.
  std::vector<std::string> keys() const;
  /// The value text of `key` as written (a string keeps its quotes), nullopt when absent.
  std::optional<std::string> value_text(std::string const& key) const;

  /// Typed look-ups: nullopt when `key` is absent; InputError naming `file`, `hdu`, the key
  /// and its value when it holds another type. A string is unquoted, its trailing blanks
  /// dropped and its CONTINUE records joined; a number may be an integer or a real.
  std::optional<std::string> get_string(std::string const& key, std::string const& file,
                                        std::string const& hdu) const;
  std::optional<double> get_number(std::string const& key, std::string const& file,
                                   std::string const& hdu) const;
  std::optional<long long> get_integer(std::string const& key, std::string const& file,
                                       std::string const& hdu) const;

  /// Sets `key`: replaces its record (with the CONTINUE records of a long string) where it is,
  /// or appends one. Strings longer than one record continue on CONTINUE records (the long
  /// string convention). Throws ParameterError for a key that is not a FITS keyword of 1 to 8
  /// characters or is structural.
  void set_string(std::string const& key, std::string const& value,
                  std::string const& comment = "");
  void set_integer(std::string const& key, long long value, std::string const& comment = "");
  void set_number(std::string const& key, double value, std::string const& comment = "");
  void set_logical(std::string const& key, bool value, std::string const& comment = "");
  /// Removes `key` (and its CONTINUE records) when present.
  void erase(std::string const& key);

 private:
  int find(std::string const& key) const;  // index of its record, -1 when absent
  int extent(int at) const;                // records of the keyword at `at` (CONTINUEs too)
  void put(std::string const& key, std::vector<std::string> records);
  std::vector<std::string> records_;
};

/// True for the keywords a FITS writer sets from the data itself (see FitsHeader).
bool structural_key(std::string const& key);

/// Records desiutil.depend's way: DEPNAMnn = name, DEPVERnn = version, in the pair that
/// already names `name`, else in the first free nn (00..99). Throws ParameterError when all
/// 100 are taken.
void set_dependency(FitsHeader& header, std::string const& name, std::string const& version);

}  // namespace kspecter::io
