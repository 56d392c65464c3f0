// Ways to break a good FITS file, for the bad-input corpus: rename, drop or replace an HDU,
// overwrite single values, rewrite a header card's bytes, cut the file short. Each makes a new
// file and leaves its source alone.
#pragma once

#include <fitsio.h>

#include <test_data.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace kspecter::test::fits_edit {

inline void check(int status, std::string const& doing) {
  if (status) {
    char text[FLEN_STATUS] = {0};
    fits_get_errstatus(status, text);
    fits_clear_errmsg();
    throw std::runtime_error("fits_edit: " + doing + ": " + text);
  }
}

inline std::string extname_of(fitsfile* f) {
  char value[FLEN_VALUE] = {0};
  int st = 0;
  if (fits_read_key(f, TSTRING, "EXTNAME", value, nullptr, &st)) {
    fits_clear_errmsg();
    return "";
  }
  return value;
}

/// Copies `from` into `to` HDU by HDU; `edit(extname, in, out)` may write its own HDU into
/// `out` instead of the copy (returning true) or skip it (writing nothing, returning true).
inline void rewrite(std::string const& from, std::string const& to,
                    std::function<bool(std::string const&, fitsfile*, fitsfile*)> const& edit) {
  std::filesystem::remove(to);
  int st = 0;
  fitsfile *in = nullptr, *out = nullptr;
  check(fits_open_diskfile(&in, from.c_str(), READONLY, &st), "open " + from);
  check(fits_create_diskfile(&out, to.c_str(), &st), "create " + to);
  int nhdu = 0;
  fits_get_num_hdus(in, &nhdu, &st);
  for (int i = 1; i <= nhdu; ++i) {
    int type = 0;
    check(fits_movabs_hdu(in, i, &type, &st), "move");
    if (!edit(extname_of(in), in, out)) check(fits_copy_hdu(in, out, 0, &st), "copy");
  }
  fits_close_file(in, &st);
  check(fits_close_file(out, &st), "close " + to);
}

/// Writes a new image HDU named `extname` into `out`.
inline void write_image(fitsfile* out, std::string const& extname, int bitpix,
                        std::vector<long> naxes, std::vector<double> const& values) {
  int st = 0;
  check(fits_create_img(out, bitpix, int(naxes.size()), naxes.data(), &st), "create image");
  check(fits_update_key(out, TSTRING, "EXTNAME", const_cast<char*>(extname.c_str()), nullptr, &st),
        "EXTNAME");
  if (!values.empty())
    check(fits_write_img(out, TDOUBLE, 1, LONGLONG(values.size()),
                         const_cast<double*>(values.data()), &st),
          "write image");
}

/// Copies the header cards of `in`'s current HDU that do not describe the data layout
/// (WAVEMIN, BUNIT, ...) into `out`'s current HDU.
inline void copy_user_cards(fitsfile* in, fitsfile* out) {
  int st = 0, nkeys = 0;
  fits_get_hdrspace(in, &nkeys, nullptr, &st);
  for (int k = 1; k <= nkeys; ++k) {
    char card[FLEN_CARD] = {0}, key[FLEN_KEYWORD] = {0};
    int len = 0;
    fits_read_record(in, k, card, &st);
    fits_get_keyname(card, key, &len, &st);
    std::string const kw = key;
    if (fits_get_keyclass(card) == TYP_STRUC_KEY || kw == "EXTNAME" || kw == "END" || kw.empty() ||
        kw == "CHECKSUM" || kw == "DATASUM")
      continue;
    fits_write_record(out, card, &st);
  }
  check(st, "copy header cards");
}

/// `to` = `from` with HDU `hdu` renamed `new_name`.
inline void rename_hdu(std::string const& from, std::string const& to, std::string const& hdu,
                       std::string const& new_name) {
  rewrite(from, to, [&](std::string const& name, fitsfile* in, fitsfile* out) {
    if (name != hdu) return false;
    int st = 0;
    check(fits_copy_hdu(in, out, 0, &st), "copy");
    check(
        fits_update_key(out, TSTRING, "EXTNAME", const_cast<char*>(new_name.c_str()), nullptr, &st),
        "rename");
    return true;
  });
}

/// `to` = `from` without HDU `hdu`.
inline void drop_hdu(std::string const& from, std::string const& to, std::string const& hdu) {
  rewrite(from, to, [&](std::string const& name, fitsfile*, fitsfile*) { return name == hdu; });
}

/// `to` = `from` with image HDU `hdu` replaced by one of the given BITPIX, shape and values
/// (and the other header cards of the original).
inline void replace_image(std::string const& from, std::string const& to, std::string const& hdu,
                          int bitpix, std::vector<long> const& naxes,
                          std::vector<double> const& values) {
  rewrite(from, to, [&](std::string const& name, fitsfile* in, fitsfile* out) {
    if (name != hdu) return false;
    write_image(out, hdu, bitpix, naxes, values);
    copy_user_cards(in, out);
    return true;
  });
}

/// The values of image HDU `hdu` of `path`, as doubles, and its shape (fastest axis first).
inline std::vector<double> read_image(std::string const& path, std::string const& hdu,
                                      std::vector<long>* naxes = nullptr) {
  int st = 0;
  fitsfile* f = nullptr;
  check(fits_open_diskfile(&f, path.c_str(), READONLY, &st), "open " + path);
  check(fits_movnam_hdu(f, IMAGE_HDU, const_cast<char*>(hdu.c_str()), 0, &st), "move to " + hdu);
  int naxis = 0;
  fits_get_img_dim(f, &naxis, &st);
  std::vector<long> ax(std::size_t(naxis), 0);
  fits_get_img_size(f, naxis, ax.data(), &st);
  long long n = naxis > 0 ? 1 : 0;
  for (long a : ax) n *= a;
  std::vector<double> v(static_cast<std::size_t>(n));
  int anynul = 0;
  if (n > 0) fits_read_img(f, TDOUBLE, 1, n, nullptr, v.data(), &anynul, &st);
  fits_close_file(f, &st);
  check(st, "read " + hdu);
  if (naxes) *naxes = ax;
  return v;
}

/// Overwrites the current image of `out` with `v`, converted to the image's own type: CFITSIO
/// converts types only for images that are not tile-compressed (desispec's MASK is).
inline void write_native(fitsfile* out, std::vector<double> const& v) {
  int st = 0, type = 0;
  check(fits_get_img_type(out, &type, &st), "image type");
  auto put = [&](int datatype, auto const& values) {
    check(fits_write_img(out, datatype, 1, LONGLONG(values.size()),
                         const_cast<void*>(static_cast<void const*>(values.data())), &st),
          "write image");
  };
  switch (type) {
    case BYTE_IMG: put(TBYTE, std::vector<unsigned char>(v.begin(), v.end())); break;
    case SHORT_IMG: put(TSHORT, std::vector<short>(v.begin(), v.end())); break;
    case LONG_IMG: put(TINT, std::vector<int>(v.begin(), v.end())); break;
    case FLOAT_IMG: put(TFLOAT, std::vector<float>(v.begin(), v.end())); break;
    default: put(TDOUBLE, v);
  }
}

/// `to` = `from` with image HDU `hdu` transformed by `change(values, naxes)`, its header
/// cards kept, in the same BITPIX unless `bitpix` is given.
inline void edit_image(
    std::string const& from, std::string const& to, std::string const& hdu,
    std::function<void(std::vector<double>&, std::vector<long> const&)> const& change,
    int bitpix = 0) {
  std::vector<long> ax;
  std::vector<double> v = read_image(from, hdu, &ax);
  change(v, ax);
  rewrite(from, to, [&](std::string const& name, fitsfile* in, fitsfile* out) {
    if (name != hdu) return false;
    int st = 0;
    if (!bitpix) {  // the same HDU with new values
      check(fits_copy_hdu(in, out, 0, &st), "copy");
      write_native(out, v);
      char datasum[FLEN_VALUE] = {0};
      if (fits_read_keyword(out, "DATASUM", datasum, nullptr, &st) == 0)  // still true
        check(fits_write_chksum(out, &st), "checksum");
      fits_clear_errmsg();
      return true;
    }
    write_image(out, hdu, bitpix, ax, v);
    copy_user_cards(in, out);
    return true;
  });
}

/// `to` = `from` with element `element` (1-based) of row `row` (1-based) of column `column`
/// of table `hdu` set to `value`.
inline void set_table_value(std::string const& from, std::string const& to, std::string const& hdu,
                            std::string const& column, long row, long element, double value) {
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
  int st = 0, col = 0;
  fitsfile* f = nullptr;
  check(fits_open_diskfile(&f, to.c_str(), READWRITE, &st), "open " + to);
  check(fits_movnam_hdu(f, BINARY_TBL, const_cast<char*>(hdu.c_str()), 0, &st), "move to " + hdu);
  check(fits_get_colnum(f, CASEINSEN, const_cast<char*>(column.c_str()), &col, &st), column);
  check(fits_write_col(f, TDOUBLE, col, row, element, 1, &value, &st), "write " + column);
  check(fits_close_file(f, &st), "close " + to);
}

/// `to` = the first `bytes` bytes of `from`.
inline void truncate_copy(std::string const& from, std::string const& to, std::size_t bytes) {
  std::ifstream in(from, std::ios::binary);
  std::string data(bytes, '\0');
  in.read(data.data(), std::streamsize(bytes));
  std::ofstream(to, std::ios::binary).write(data.data(), in.gcount());
}

/// Byte offset where the header of HDU `hdu` starts and where its data end (padded).
inline std::pair<long long, long long> hdu_extent(std::string const& path, std::string const& hdu) {
  int st = 0;
  fitsfile* f = nullptr;
  check(fits_open_diskfile(&f, path.c_str(), READONLY, &st), "open " + path);
  check(fits_movnam_hdu(f, ANY_HDU, const_cast<char*>(hdu.c_str()), 0, &st), "move to " + hdu);
  LONGLONG head = 0, data = 0, end = 0;
  fits_get_hduaddrll(f, &head, &data, &end, &st);
  fits_close_file(f, &st);
  check(st, "address of " + hdu);
  return {head, end};
}

/// `to` = `from` with the 80-byte card starting with `key` in the header of HDU `hdu`
/// replaced by `card` (padded to 80 bytes), byte for byte: for headers CFITSIO would refuse
/// to write.
inline void patch_card(std::string const& from, std::string const& to, std::string const& hdu,
                       std::string const& key, std::string card) {
  auto const [head, end] = hdu_extent(from, hdu);
  std::string bytes = file_bytes(from);
  std::string k = key;
  k.resize(8, ' ');
  card.resize(80, ' ');
  for (long long p = head; p + 80 <= end; p += 80)
    if (bytes.compare(std::size_t(p), 8, k) == 0) {
      bytes.replace(std::size_t(p), 80, card);
      std::ofstream(to, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
      return;
    }
  throw std::runtime_error("fits_edit: no card " + key + " in HDU " + hdu + " of " + from);
}

}  // namespace kspecter::test::fits_edit
