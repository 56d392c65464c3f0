#include "gzip_file.hpp"

#include <kspecter/io/gzip_prefetch.hpp>

#include <cstdint>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace kspecter::io {

namespace {

// The file as it was when the prefetch started: a file replaced since is inflated afresh.
struct Stamp {
  std::uintmax_t size = 0;
  std::filesystem::file_time_type time{};
  bool operator==(Stamp const& o) const { return size == o.size && time == o.time; }
};

bool stamp_of(std::string const& path, Stamp& s) {
  std::error_code ec;
  s.size = std::filesystem::file_size(path, ec);
  if (ec) return false;
  s.time = std::filesystem::last_write_time(path, ec);
  return !ec;
}

struct Pending {
  Stamp stamp;
  std::future<FileBytes> bytes;
};

std::mutex registry_mutex;
std::map<std::string, Pending>& registry() {
  static std::map<std::string, Pending> pending;
  return pending;
}

}  // namespace

void prefetch_gzip(std::string const& path) {
  Stamp stamp;
  if (!stamp_of(path, stamp) || !is_gzip_file(path)) return;
  std::lock_guard<std::mutex> lock(registry_mutex);
  auto& pending = registry();
  if (pending.count(path)) return;
  pending[path] = {stamp, std::async(std::launch::async, [path] { return read_gzip(path); })};
}

std::optional<FileBytes> take_prefetched_gzip(std::string const& path) {
  Pending p;
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    auto it = registry().find(path);
    if (it == registry().end()) return std::nullopt;
    p = std::move(it->second);
    registry().erase(it);
  }
  Stamp now;
  if (!stamp_of(path, now) || !(now == p.stamp)) {
    p.bytes.wait();  // inflated a file since replaced: let it finish, then read afresh
    return std::nullopt;
  }
  return p.bytes.get();  // rethrows the inflation's InputError
}

void drop_gzip_prefetches() {
  std::map<std::string, Pending> dropped;
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    dropped.swap(registry());
  }
  for (auto& [path, p] : dropped) p.bytes.wait();
}

}  // namespace kspecter::io
