#include <kspecter/core/error.hpp>
#include <kspecter/parallel/bundles.hpp>

#include <algorithm>

namespace kspecter::parallel {

std::vector<SpectrumRange> assign_bundles(int specmin, int nspec, int bundlesize, int nranks) {
  if (bundlesize <= 0 || nranks <= 0 || nspec < 0 || specmin < 0)
    throw ParameterError("assign_bundles: bundlesize and ranks must be positive");
  // Bundle boundaries inside [specmin, specmin + nspec).
  std::vector<int> edges{specmin};
  int const end = specmin + nspec;
  for (int b = (specmin / bundlesize + 1) * bundlesize; b < end; b += bundlesize)
    edges.push_back(b);
  if (nspec > 0) edges.push_back(end);
  int const nbundle = static_cast<int>(edges.size()) - 1;
  std::vector<SpectrumRange> out(nranks);
  int first = 0;
  for (int r = 0; r < nranks; ++r) {
    int const count = nbundle / nranks + (r < nbundle % nranks ? 1 : 0);
    if (count > 0) {
      out[r].specmin = edges[first];
      out[r].nspec = edges[first + count] - edges[first];
    } else {
      out[r].specmin = end;
    }
    first += count;
  }
  return out;
}

}  // namespace kspecter::parallel
