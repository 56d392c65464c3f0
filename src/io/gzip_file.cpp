#include "gzip_file.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/core/huge_pages.hpp>
#include <kspecter/core/log.hpp>
#include <kspecter/io/gzip_settings.hpp>

#include <fcntl.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#ifdef __linux__
#include <sched.h>
#endif

namespace kspecter::io {

// ------------------------------------------------------------------ settings

namespace {
std::mutex settings_mutex;
GzipSettings current_settings;
}  // namespace

void set_gzip_settings(GzipSettings const& s) {
  if (s.level < gzip_min_level || s.level > gzip_max_level)
    throw ParameterError("gzip level must be " + std::to_string(gzip_min_level) + " to " +
                         std::to_string(gzip_max_level) + " (ISA-L's levels), not " +
                         std::to_string(s.level));
  if (s.threads < 0)
    throw ParameterError("gzip threads must be 0 (every CPU) or more, not " +
                         std::to_string(s.threads));
  std::lock_guard<std::mutex> lock(settings_mutex);
  current_settings = s;
}

GzipSettings gzip_settings() {
  std::lock_guard<std::mutex> lock(settings_mutex);
  return current_settings;
}

int gzip_threads() {
  int n = gzip_settings().threads;
  if (n > 0) return n;
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
#endif
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, n);
}

// ------------------------------------------------------------------ reading

namespace {

// reserve_huge (core/huge_pages.hpp) for a vector of any allocator.
template <class V>
void reserve_huge_any(V& v, std::size_t n) {
  v.clear();
  v.reserve(n);
  detail::advise_huge_pages(v.data(), v.capacity() * sizeof(typename V::value_type));
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// A file's bytes as they arrive: a thread of its own reads them into one buffer (huge-page
// hinted, like the inflated bytes': first-touch faults on 4 KiB pages cost more than the
// inflation) and publishes how many are there, so that the inflation starts on the first
// megabytes instead of after the whole file (even from the page cache, a full-frame
// preproc's 117 MB take a good part of the inflation's time to read).
class ArrivingBytes {
 public:
  explicit ArrivingBytes(std::string const& path) : path_(path) {
    fd_.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_.fd < 0) throw InputError(path, "", std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_.fd, &st) != 0)
      throw InputError(path, "", std::string("cannot read its size: ") + std::strerror(errno));
    size_ = static_cast<std::size_t>(st.st_size);
    try {
      buf_.reset(new unsigned char[std::max<std::size_t>(size_, 1)]);
    } catch (std::bad_alloc const&) {
      throw InputError(path, "", "cannot hold its " + std::to_string(size_) + " bytes in memory");
    }
    detail::advise_huge_pages(buf_.get(), size_);
    // gzip's ISIZE, for the first output size to try (size_hint), before the rest arrives.
    if (size_ >= 4 && ::pread(fd_.fd, last4_, 4, off_t(size_ - 4)) != 4) std::memset(last4_, 0, 4);
    reader_ = std::thread([this] { read_all(); });
  }
  ~ArrivingBytes() {
    stop_ = true;
    reader_.join();
  }
  ArrivingBytes(ArrivingBytes const&) = delete;
  ArrivingBytes& operator=(ArrivingBytes const&) = delete;

  unsigned char const* data() const { return buf_.get(); }
  std::size_t size() const { return size_; }
  /// The file's last 4 bytes as they were when it was opened (zeros when it has fewer).
  unsigned char const* last4() const { return last4_; }
  /// Waits until more than `n` bytes have arrived or the file has ended; returns how many
  /// have arrived. Rethrows the read's error once it has ended.
  std::size_t wait_beyond(std::size_t n) {
    std::unique_lock<std::mutex> lock(m_);
    more_.wait(lock, [&] { return arrived_ > n || ended_; });
    if (ended_ && error_) std::rethrow_exception(error_);
    return arrived_;
  }
  /// Waits for the whole file (what it has, if it shrank while read).
  std::size_t wait_all() { return wait_beyond(size_); }

 private:
  void read_all() {
    constexpr std::size_t chunk = std::size_t(4) << 20;
    std::size_t done = 0;
    std::exception_ptr error;
    while (done < size_ && !stop_) {
      ssize_t const got = ::read(fd_.fd, buf_.get() + done, std::min(chunk, size_ - done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        error = std::make_exception_ptr(
            InputError(path_, "", std::string("cannot read: ") + std::strerror(errno)));
        break;
      }
      if (got == 0) break;  // shrank while read: what is there is inflated, and found short
      done += std::size_t(got);
      std::lock_guard<std::mutex> lock(m_);
      arrived_ = done;
      more_.notify_one();
    }
    std::lock_guard<std::mutex> lock(m_);
    ended_ = true;
    error_ = error;
    more_.notify_one();
  }

  std::string path_;
  Fd fd_;
  std::size_t size_ = 0;
  unsigned char last4_[4] = {0, 0, 0, 0};
  std::unique_ptr<unsigned char[]> buf_;  // not zero-filled: only arrived bytes are read
  std::mutex m_;
  std::condition_variable more_;
  std::size_t arrived_ = 0;
  bool ended_ = false;
  std::exception_ptr error_;
  std::atomic<bool> stop_{false};
  std::thread reader_;
};

std::string inflate_reason(int rc) {
  switch (rc) {
    case ISAL_INVALID_BLOCK: return "an invalid deflate block";
    case ISAL_INVALID_SYMBOL: return "an invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK: return "an invalid back-reference distance";
    case ISAL_INVALID_WRAPPER: return "an invalid gzip header";
    case ISAL_UNSUPPORTED_METHOD: return "a compression method other than deflate";
    case ISAL_INCORRECT_CHECKSUM:
      return "a trailer whose CRC-32 or length (ISIZE) does not match the data";
    default: return "ISA-L inflate error " + std::to_string(rc);
  }
}

// The first output size to try: gzip's trailer (ISIZE, the last member's size modulo 2^32),
// capped at what deflate can make of the file's bytes (at most 1032 to 1), so that a small
// corrupt file cannot reserve gigabytes (the fuzz smoke test found one that did).
std::size_t size_hint(unsigned char const* last4, std::size_t size) {
  if (size < 18) return 1 << 16;
  unsigned char const* b = last4;
  std::size_t const isize = std::size_t(b[0]) | std::size_t(b[1]) << 8 | std::size_t(b[2]) << 16 |
                            std::size_t(b[3]) << 24;
  constexpr std::size_t max_deflate_ratio = 1032;
  return std::max<std::size_t>(std::min(isize, size * max_deflate_ratio), 1 << 16);
}

bool all_zero(unsigned char const* p, std::size_t n) {
  return std::all_of(p, p + n, [](unsigned char c) { return c == 0; });
}

// Grows `out` (a gzip bomb's growth ends here, with the file named).
void grow(FileBytes& out, std::string const& path) {
  std::size_t const want = out.size() + std::max<std::size_t>(out.size(), 1 << 20);
  try {
    FileBytes bigger;
    reserve_huge_any(bigger, want);
    bigger.resize(want);
    std::copy(out.begin(), out.end(), bigger.begin());
    out.swap(bigger);
  } catch (std::bad_alloc const&) {
    throw InputError(path, "",
                     "inflates to more than " + std::to_string(out.size()) +
                         " bytes, more than this process can hold in memory (a gzip bomb?)");
  }
}

}  // namespace

bool is_gzip_file(std::string const& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char b[2] = {0, 0};
  return in.read(reinterpret_cast<char*>(b), 2) && b[0] == 0x1f && b[1] == 0x8b;
}

namespace {

// Inflates the gzip bytes at `data` as they arrive: `wait_beyond(n)` returns how many bytes
// are there once more than n are, or all of them once the input has ended (SIZE_MAX: wait for
// the end). `hint` is the first output size to try (size_hint).
template <class WaitBeyond>
FileBytes inflate_arriving(std::string const& path, unsigned char const* data, std::size_t hint,
                           WaitBeyond&& wait_beyond) {
  FileBytes out;
  try {
    reserve_huge_any(out, hint);
    out.resize(hint);
  } catch (std::bad_alloc const&) {
    throw InputError(path, "", "cannot hold its inflated bytes in memory");
  }
  // ISA-L counts in 32 bits: input and output are handed over at most 1 GiB at a time.
  constexpr std::size_t step = std::size_t(1) << 30;
  constexpr std::size_t the_end = std::numeric_limits<std::size_t>::max();
  auto state = std::make_unique<inflate_state>();
  isal_inflate_init(state.get());
  state->crc_flag = ISAL_GZIP;
  state->next_in = const_cast<unsigned char*>(data);
  state->avail_in = static_cast<std::uint32_t>(std::min(wait_beyond(0), step));
  std::size_t produced = 0;
  int members = 0;
  for (;;) {
    if (produced == out.size()) grow(out, path);
    auto* const at = reinterpret_cast<unsigned char*>(out.data()) + produced;
    state->next_out = at;
    state->avail_out = static_cast<std::uint32_t>(std::min(out.size() - produced, step));
    int const rc = isal_inflate(state.get());
    produced += std::size_t(state->next_out - at);
    if (rc < 0)
      throw InputError(path, "",
                       "corrupt gzip stream after " + std::to_string(produced) +
                           " decompressed bytes: " + inflate_reason(rc));
    unsigned char const* const next = state->next_in;
    std::size_t const used = std::size_t(next - data);  // what was fed, less what is left
    if (state->block_state == ISAL_BLOCK_FINISH) {
      ++members;
      std::size_t const rest = wait_beyond(the_end) - used;
      if (rest == 0) break;
      if (rest >= 2 && next[0] == 0x1f && next[1] == 0x8b) {  // another member follows
        isal_inflate_reset(state.get());
        state->crc_flag = ISAL_GZIP;
        state->next_in = const_cast<unsigned char*>(next);
        state->avail_in = static_cast<std::uint32_t>(std::min(rest, step));
        continue;
      }
      if (!all_zero(next, rest))
        warn(path + ": " + std::to_string(rest) + " bytes of trailing garbage after gzip member " +
             std::to_string(members) + " ignored, as gzip ignores them");
      break;
    }
    if (state->avail_in > 0) continue;  // the output was full
    std::size_t const unfed = wait_beyond(used) - used;
    if (unfed > 0) {
      state->avail_in = static_cast<std::uint32_t>(std::min(unfed, step));
    } else if (state->avail_out > 0) {
      throw InputError(path, "",
                       "truncated gzip stream: it ends after " + std::to_string(produced) +
                           " decompressed bytes, before its last member's end");
    }
  }
  out.resize(produced);  // not shrunk to fit: that would copy it
  return out;
}

}  // namespace

FileBytes inflate_gzip(std::string const& path, unsigned char const* data, std::size_t size) {
  std::size_t const hint = size_hint(size >= 4 ? data + size - 4 : data, size);
  return inflate_arriving(path, data, hint, [size](std::size_t) { return size; });
}

FileBytes read_gzip(std::string const& path) {
  ArrivingBytes in(path);
  return inflate_arriving(path, in.data(), size_hint(in.last4(), in.size()),
                          [&](std::size_t n) { return in.wait_beyond(n); });
}

// ------------------------------------------------------------------ writing

namespace {

// A piece of the data, deflated alone: the same bytes whatever the thread count. 2 MiB keeps
// the sync flushes' 5 bytes and the lost back-references at a piece's start negligible
// (perf/bench_gzip) and still gives a frame ~30 pieces to share between threads.
constexpr std::size_t piece_bytes = std::size_t(2) << 20;
// Room for a deflated piece: deflate's worst case (static codes of 9 bits a byte) and a block
// header or two. A piece that would need more gets a buffer of its own.
constexpr std::size_t slot_bytes = piece_bytes + piece_bytes / 8 + 4096;

std::uint32_t level_buffer_size(int level) {
  switch (level) {
    case 1: return ISAL_DEF_LVL1_DEFAULT;
    case 2: return ISAL_DEF_LVL2_DEFAULT;
    case 3: return ISAL_DEF_LVL3_DEFAULT;
    default: return 0;
  }
}

// One thread's deflater, reused from piece to piece.
class PieceDeflater {
 public:
  explicit PieceDeflater(int level) : level_(level), level_buf_(level_buffer_size(level)) {}

  // Raw deflate of `n` bytes into `out`: a piece that is not the last ends with a sync flush
  // (byte-aligned, not final), so that the next piece's blocks follow it in one stream; the
  // last one ends the stream. Returns the bytes written, or 0 when `room` was too small.
  std::size_t run(unsigned char const* data, std::size_t n, bool last, unsigned char* out,
                  std::size_t room) {
    isal_deflate_init(&s_);
    s_.level = static_cast<std::uint32_t>(level_);
    s_.level_buf = level_buf_.empty() ? nullptr : level_buf_.data();
    s_.level_buf_size = static_cast<std::uint32_t>(level_buf_.size());
    s_.gzip_flag = IGZIP_DEFLATE;
    s_.flush = last ? NO_FLUSH : SYNC_FLUSH;
    s_.end_of_stream = last ? 1 : 0;
    s_.next_in = const_cast<unsigned char*>(data);
    s_.avail_in = static_cast<std::uint32_t>(n);
    s_.next_out = out;
    s_.avail_out = static_cast<std::uint32_t>(room);
    int const rc = isal_deflate(&s_);
    if (rc != COMP_OK) throw Error("cannot deflate: ISA-L deflate error " + std::to_string(rc));
    bool const finished = last ? s_.internal_state.state == ZSTATE_END
                               : s_.avail_in == 0 && s_.internal_state.state == ZSTATE_NEW_HDR;
    return finished ? std::size_t(s_.next_out - out) : 0;
  }

 private:
  int level_;
  std::vector<unsigned char> level_buf_;
  isal_zstream s_{};
};

// Deflates `src` piece by piece on up to gzip_threads() threads and hands each deflated piece
// to `put` on the calling thread, in order. A piece's slot is taken again once `put` has had
// it, so the output is never whole in memory: a frame's write then touches no fresh pages
// beyond a few slots a thread (a whole-output buffer made the kernel zero as many pages as
// the file has). Returns the CRC-32 of the source's bytes.
template <class Put>
std::uint32_t deflate_pieces(ByteSource const& src, Put&& put) {
  std::size_t const size = src.size;
  std::size_t const npieces = std::max<std::size_t>(1, (size + piece_bytes - 1) / piece_bytes);
  auto piece_size = [&](std::size_t i) {
    return std::min(piece_bytes, size - std::min(size, i * piece_bytes));
  };
  std::size_t const nthreads = std::min<std::size_t>(std::size_t(gzip_threads()), npieces);
  std::size_t const nslots = std::min(npieces, 2 * nthreads + 2);
  struct Slot {
    std::vector<unsigned char> spill;  // the rare piece larger than its slot
    std::size_t size = 0;
    std::uint32_t crc = 0;
    bool done = false;
  };
  std::vector<Slot> slots(nslots);
  // Slots, then a scratch piece a thread; not zero-filled: every byte used is written first.
  std::size_t const block = nslots * slot_bytes + nthreads * piece_bytes;
  std::unique_ptr<unsigned char[]> memory(new unsigned char[block]);
  detail::advise_huge_pages(memory.get(), block);
  auto slot_out = [&](std::size_t k) { return memory.get() + k * slot_bytes; };

  int const level = gzip_settings().level;
  std::mutex m;
  std::condition_variable changed;
  std::size_t next = 0, written = 0;  // guarded by m
  std::exception_ptr error;           // guarded by m
  auto fail = [&](std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(m);
    if (!error) error = e;
    changed.notify_all();
  };
  auto work = [&](std::size_t t) {
    try {
      PieceDeflater deflater(level);
      unsigned char* const scratch = memory.get() + nslots * slot_bytes + t * piece_bytes;
      for (;;) {
        std::size_t i = 0;
        {
          std::unique_lock<std::mutex> lock(m);
          changed.wait(lock, [&] { return error || next == npieces || next < written + nslots; });
          if (error || next == npieces) return;
          i = next++;
        }
        Slot& s = slots[i % nslots];
        std::size_t const n = piece_size(i);
        bool const last = i + 1 == npieces;
        unsigned char const* in = n > 0 ? src.bytes(i * piece_bytes, n, scratch) : scratch;
        s.crc = crc32_gzip_refl(0, in, n);
        s.spill.clear();
        s.size = deflater.run(in, n, last, slot_out(i % nslots), slot_bytes);
        for (std::size_t room = 2 * slot_bytes; s.size == 0; room *= 2) {
          s.spill.resize(room);
          s.size = deflater.run(in, n, last, s.spill.data(), room);
        }
        std::lock_guard<std::mutex> lock(m);
        s.done = true;
        changed.notify_all();
      }
    } catch (...) {
      fail(std::current_exception());
    }
  };
  std::vector<std::thread> workers;
  for (std::size_t t = 0; t < nthreads; ++t) workers.emplace_back(work, t);
  std::uint32_t crc = 0;
  try {
    for (std::size_t w = 0; w < npieces; ++w) {
      Slot& s = slots[w % nslots];
      {
        std::unique_lock<std::mutex> lock(m);
        changed.wait(lock, [&] { return error || s.done; });
        if (error) break;
      }
      put(s.spill.empty() ? slot_out(w % nslots) : s.spill.data(), s.size);
      crc = static_cast<std::uint32_t>(
          crc32_combine(crc, s.crc, static_cast<z_off_t>(piece_size(w))));
      std::lock_guard<std::mutex> lock(m);
      s.done = false;
      written = w + 1;
      changed.notify_all();
    }
  } catch (...) {
    fail(std::current_exception());
  }
  for (auto& t : workers) t.join();
  if (error) std::rethrow_exception(error);
  return crc;
}

// gzip's header (RFC 1952): deflate, no flags, no time, no extra flags, Unix.
constexpr unsigned char gzip_header[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};

std::array<unsigned char, 8> gzip_trailer(std::uint32_t crc, std::size_t size) {
  std::array<unsigned char, 8> t{};
  auto const isize = static_cast<std::uint32_t>(size);  // the size modulo 2^32
  for (int i = 0; i < 4; ++i) {
    t[std::size_t(i)] = static_cast<unsigned char>(crc >> (8 * i));
    t[std::size_t(4 + i)] = static_cast<unsigned char>(isize >> (8 * i));
  }
  return t;
}

}  // namespace

ByteSource memory_source(void const* data, std::size_t size) {
  auto const* bytes = static_cast<unsigned char const*>(data);
  return {size,
          [bytes](std::size_t offset, std::size_t, unsigned char*) { return bytes + offset; }};
}

std::vector<unsigned char> deflate_gzip(ByteSource const& source) {
  std::vector<unsigned char> out(std::begin(gzip_header), std::end(gzip_header));
  std::uint32_t const crc = deflate_pieces(
      source, [&](unsigned char const* p, std::size_t n) { out.insert(out.end(), p, p + n); });
  auto const t = gzip_trailer(crc, source.size);
  out.insert(out.end(), t.begin(), t.end());
  return out;
}

std::vector<unsigned char> deflate_gzip(void const* data, std::size_t size) {
  return deflate_gzip(memory_source(data, size));
}

std::string write_gzip(int fd, ByteSource const& source) {
  Fd f{fd};
  try {
    auto put = [&](unsigned char const* p, std::size_t n) {
      while (n > 0) {
        ssize_t const w = ::write(f.fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) throw Error(std::strerror(errno));
        p += w;
        n -= std::size_t(w);
      }
    };
    put(gzip_header, sizeof gzip_header);
    std::uint32_t const crc = deflate_pieces(source, put);
    auto const t = gzip_trailer(crc, source.size);
    put(t.data(), t.size());
  } catch (std::exception const& e) {
    return e.what();
  }
  f.fd = -1;
  if (::close(fd) != 0) return std::strerror(errno);
  return {};
}

std::string write_gzip(int fd, void const* data, std::size_t size) {
  return write_gzip(fd, memory_source(data, size));
}

}  // namespace kspecter::io
