// A bounds-checked walk over the RICE_1 tiles of a tile-compressed image, before CFITSIO
// decodes them. CFITSIO's Rice decoder (fits_rdecomp*) checks the end of a tile's byte stream
// only after each block of pixels, and its run of leading zeros reads on until a non-zero
// byte: on corrupt tiles it reads past its buffer, and under AddressSanitizer it was seen to
// fault. kspecter refuses such tiles first (README, "Bad inputs").
#pragma once

#include <fitsio.h>

#include <string>

namespace kspecter::io {

/// True when a RICE_1 byte stream `c` of `clen` bytes holds its `npix` pixels (blocks of
/// `blocksize`, `bytepix` bytes a value: 1, 2 or 4) without a byte beyond `clen`: the walk
/// CFITSIO's decoder makes, every read checked.
bool rice_stream_fits(unsigned char const* c, long long clen, long long npix, int blocksize,
                      int bytepix);

/// For the current HDU of `f`, when it is a RICE_1 tile-compressed image: "" when every
/// tile's bit stream decodes its pixels within its own bytes, else what is wrong ("tile 5 of
/// 64: its RICE_1 stream ends before its 4128 pixels"). "" for any other HDU or compression.
/// A CFITSIO error while reading the tile table is returned as the problem.
std::string rice_tiles_problem(fitsfile* f);

}  // namespace kspecter::io
