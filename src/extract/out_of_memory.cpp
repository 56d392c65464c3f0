#include "out_of_memory.hpp"

#include <kspecter/core/byte_size.hpp>

#include <kspecter/extract/patch_plan.hpp>

#include <algorithm>
#include <new>

namespace kspecter::extract::detail {

bool is_out_of_memory(std::exception const& e) {
  return dynamic_cast<std::bad_alloc const*>(&e) != nullptr;
}

std::optional<std::size_t> smaller_budget(ExtractOptions const& opt, SpotGeometry const& geometry) {
  PatchPlan const plan =
      make_patch_plan(opt, geometry.nfiber, 2 * geometry.hsizey + 1, 2 * geometry.hsizex + 1);
  BatchFootprint const fp =
      batch_footprint(plan, opt.bundlesize, 2 * geometry.hsizey + 1, 2 * geometry.hsizex + 1);
  std::size_t largest = 0;
  for (Batch const& b : plan.batches) largest = std::max(largest, batch_bytes(b, fp));
  std::size_t const one_patch = fp.per_bundle_fixed + fp.per_patch;  // fits the budget: no overflow
  if (largest <= one_patch) return std::nullopt;
  return std::max(largest / 2, one_patch);
}

std::string failure_text(std::exception const& e) {
  std::string const what = e.what();
  return what.substr(0, what.find('\n'));
}

Error out_of_memory_error(std::exception const& e, std::size_t requested, std::size_t last) {
  return Error("extract: out of device memory even with one patch per batch (memory budget " +
               byte_size(requested) + ", last tried " + byte_size(last) + "): " + failure_text(e) +
               " Free the device, share it among fewer processes, or make patches smaller "
               "(nwavestep, wavepad).");
}

}  // namespace kspecter::extract::detail
