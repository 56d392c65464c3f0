#include "rice_tiles.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

namespace kspecter::io {

namespace {

// Rice parameters by bytes per pixel, as the FITS tile-compression convention (and CFITSIO's
// ricecomp.c) define them: bits of the FS code, the FS that means "raw values", value bits.
struct RiceCode {
  int fsbits, fsmax, bbits;
};

RiceCode rice_code(int bytepix) {
  if (bytepix == 1) return {3, 6, 8};
  if (bytepix == 2) return {4, 14, 16};
  return {5, 25, 32};
}

int bit_length(unsigned b) {
  int n = 0;
  while (b != 0) {
    ++n;
    b >>= 1;
  }
  return n;
}

}  // namespace

bool rice_stream_fits(unsigned char const* c, long long clen, long long npix, int blocksize,
                      int bytepix) {
  RiceCode const rc = rice_code(bytepix);
  long long pos = 0;
  auto next = [&](unsigned& byte) {
    if (pos >= clen) return false;
    byte = c[pos++];
    return true;
  };
  unsigned b = 0, byte = 0;
  pos = bytepix;  // the first pixel's value, stored raw
  if (!next(b)) return false;
  int nbits = 8;
  for (long long i = 0; i < npix;) {
    nbits -= rc.fsbits;
    while (nbits < 0) {
      if (!next(byte)) return false;
      b = (b << 8) | byte;
      nbits += 8;
    }
    int const fs = int(b >> nbits) - 1;
    b &= (1u << nbits) - 1;
    long long const imax = std::min(i + blocksize, npix);
    if (fs < 0) {  // a block of zero differences
      i = imax;
    } else if (fs == rc.fsmax) {  // raw values of bbits bits
      for (; i < imax; ++i) {
        int k = rc.bbits - nbits;
        for (k -= 8; k >= 0; k -= 8)
          if (!next(b)) return false;
        if (nbits > 0) {
          if (!next(b)) return false;
          b &= (1u << nbits) - 1;
        } else {
          b = 0;
        }
      }
    } else if (fs > rc.fsmax) {
      return false;  // no encoder writes it
    } else {         // Rice codes: a unary count of leading zeros, then fs bits
      for (; i < imax; ++i) {
        while (b == 0) {
          if (!next(b)) return false;
          nbits += 8;
        }
        int const nzero = nbits - bit_length(b);
        nbits -= nzero + 1;
        b ^= 1u << nbits;
        nbits -= fs;
        while (nbits < 0) {
          if (!next(byte)) return false;
          b = (b << 8) | byte;
          nbits += 8;
        }
        b &= (1u << nbits) - 1;
      }
    }
  }
  return true;
}

namespace {

long long key_or(fitsfile* f, char const* key, long long fallback) {
  int status = 0;
  LONGLONG v = 0;
  fits_read_key(f, TLONGLONG, key, &v, nullptr, &status);
  return status == 0 ? v : fallback;
}

std::string upper_key_text(fitsfile* f, std::string const& key) {
  int status = 0;
  char value[FLEN_VALUE] = {0};
  fits_read_key(f, TSTRING, key.c_str(), value, nullptr, &status);
  std::string s = status == 0 ? value : "";
  s.erase(s.find_last_not_of(' ') + 1);
  for (char& ch : s) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

// BLOCKSIZE and BYTEPIX from the ZNAMEi/ZVALi pairs (defaults 32 and 4).
void rice_parameters(fitsfile* f, int& blocksize, int& bytepix) {
  blocksize = 32;
  bytepix = 4;
  for (int i = 1; i < 100; ++i) {
    std::string const name = upper_key_text(f, "ZNAME" + std::to_string(i));
    if (name.empty()) break;
    long long const v = key_or(f, ("ZVAL" + std::to_string(i)).c_str(), -1);
    if (name == "BLOCKSIZE") blocksize = int(v);
    if (name == "BYTEPIX") bytepix = int(v);
  }
}

std::string cfitsio_problem(int status, std::string const& doing) {
  char text[FLEN_STATUS] = {0};
  fits_get_errstatus(status, text);
  return doing + ": CFITSIO: " + text + " [status " + std::to_string(status) + "]";
}

}  // namespace

std::string rice_tiles_problem(fitsfile* f) {
  int status = 0;
  if (!fits_is_compressed_image(f, &status) || status != 0) return "";
  std::string const cmp = upper_key_text(f, "ZCMPTYPE");
  if (cmp != "RICE_1" && cmp != "RICE_ONE") return "";
  int blocksize = 0, bytepix = 0;
  rice_parameters(f, blocksize, bytepix);
  if (blocksize < 1 || (bytepix != 1 && bytepix != 2 && bytepix != 4 && bytepix != 8))
    return "RICE_1 parameters BLOCKSIZE " + std::to_string(blocksize) + ", BYTEPIX " +
           std::to_string(bytepix) + " are not valid";
  if (bytepix == 8) return "";  // CFITSIO refuses 8-byte Rice itself, before decoding

  long long const naxis = key_or(f, "ZNAXIS", 0);
  if (naxis != 1 && naxis != 2) return "";  // images are 2-D here; others are left to CFITSIO
  long long const nx = key_or(f, "ZNAXIS1", 0), ny = naxis == 2 ? key_or(f, "ZNAXIS2", 0) : 1;
  long long const tx = key_or(f, "ZTILE1", nx), ty = key_or(f, "ZTILE2", 1);
  if (nx < 1 || ny < 1 || tx < 1 || ty < 1) return "";  // CFITSIO refuses these itself
  long long const ntx = (nx + tx - 1) / tx, nty = (ny + ty - 1) / ty;
  int col = 0;
  fits_get_colnum(f, CASEINSEN, const_cast<char*>("COMPRESSED_DATA"), &col, &status);
  if (status != 0) return cfitsio_problem(status, "no COMPRESSED_DATA column");
  long long nrows = 0;
  fits_get_num_rowsll(f, &nrows, &status);
  if (status != 0) return cfitsio_problem(status, "cannot count the tiles");
  if (nrows != ntx * nty)
    return std::to_string(nrows) + " tiles where ZNAXISn/ZTILEn give " + std::to_string(ntx * nty);

  // A tile lies in the heap, whose size the header gives (PCOUNT): a corrupt descriptor must
  // not make this walk read (or allocate) more than that.
  long long const heap = key_or(f, "PCOUNT", 0);
  std::vector<unsigned char> bytes;
  for (long long row = 1; row <= nrows; ++row) {
    LONGLONG len = 0, offset = 0;
    fits_read_descriptll(f, col, row, &len, &offset, &status);
    if (status != 0) return cfitsio_problem(status, "cannot read tile " + std::to_string(row));
    if (len == 0) continue;  // stored otherwise (UNCOMPRESSED_DATA / GZIP_COMPRESSED_DATA)
    if (len < 0 || offset < 0 || len > heap || offset > heap - len)
      return "tile " + std::to_string(row) + " of " + std::to_string(nrows) + ": its " +
             std::to_string(len) + " bytes at " + std::to_string(offset) +
             " lie outside the heap of " + std::to_string(heap) + " bytes (corrupt)";
    bytes.resize(std::size_t(len));
    unsigned char nul = 0;
    int anynul = 0;
    fits_read_col(f, TBYTE, col, row, 1, len, &nul, bytes.data(), &anynul, &status);
    if (status != 0) return cfitsio_problem(status, "cannot read tile " + std::to_string(row));
    long long const t = row - 1, ix = t % ntx, iy = t / ntx;
    long long const npix = std::min(tx, nx - ix * tx) * std::min(ty, ny - iy * ty);
    if (!rice_stream_fits(bytes.data(), len, npix, blocksize, bytepix))
      return "tile " + std::to_string(row) + " of " + std::to_string(nrows) +
             ": its RICE_1 stream ends before its " + std::to_string(npix) + " pixels (corrupt)";
  }
  return "";
}

}  // namespace kspecter::io
