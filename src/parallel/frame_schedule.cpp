#include <kspecter/parallel/frame_schedule.hpp>

#include <kspecter/core/error.hpp>

#include <algorithm>
#include <numeric>

namespace kspecter::parallel {

std::vector<std::vector<FrameTask>> schedule_frames(std::vector<double> const& cost, int nranks) {
  if (nranks < 1) throw ParameterError("schedule_frames: need at least one rank");
  int const nframes = static_cast<int>(cost.size());
  std::vector<std::vector<FrameTask>> work(static_cast<std::size_t>(nranks));
  if (nframes == 0) return work;

  if (nframes < nranks) {
    // Groups of ranks, the first nranks % nframes of them one rank larger.
    int const base = nranks / nframes, extra = nranks % nframes;
    int first = 0;
    for (int g = 0; g < nframes; ++g) {
      int const size = base + (g < extra ? 1 : 0);
      for (int k = 0; k < size; ++k) work[std::size_t(first + k)].push_back({g, g, k, size});
      first += size;
    }
    return work;
  }

  std::vector<int> order(static_cast<std::size_t>(nframes));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return cost[std::size_t(a)] > cost[std::size_t(b)]; });
  std::vector<double> load(static_cast<std::size_t>(nranks), 0.0);
  for (int f : order) {
    auto const r =
        static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[r] += cost[std::size_t(f)];
    work[r].push_back({f, f, 0, 1});
  }
  for (auto& w : work)
    std::sort(w.begin(), w.end(),
              [](FrameTask const& a, FrameTask const& b) { return a.frame < b.frame; });
  return work;
}

}  // namespace kspecter::parallel
