#include "fits_support.hpp"

namespace kspecter::io {

std::string fits_message(int status) {
  char text[FLEN_STATUS] = {0};
  fits_get_errstatus(status, text);
  std::string msg = std::string("CFITSIO: ") + text;
  char detail[FLEN_ERRMSG] = {0};
  if (fits_read_errmsg(detail) && detail[0] && msg.find(detail) == std::string::npos)
    msg += std::string(" (") + detail + ")";
  fits_clear_errmsg();
  return msg + " [status " + std::to_string(status) + "]";
}

}  // namespace kspecter::io
