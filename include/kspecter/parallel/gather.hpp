// Gathering the spectra that ranks extracted into the whole frame on one rank.
#pragma once

#include <vector>

namespace kspecter::parallel {

/// Concatenates each rank's `local` (rows of `row_size` values) in rank order on `root`;
/// returns the whole array there and an empty one elsewhere. Without MPI: returns `local`.
std::vector<double> gather_rows(std::vector<double> const& local, int root = 0);
std::vector<unsigned> gather_rows(std::vector<unsigned> const& local, int root = 0);

/// Element-wise sum over ranks on `root` (e.g. the model image, where fibers of different
/// ranks share pixels). Without MPI: returns `local`.
std::vector<double> sum_to_root(std::vector<double> const& local, int root = 0);

/// Logical OR of `flag` over all ranks (every rank gets the answer): lets every rank learn
/// that one of them failed, so that all stop together instead of hanging.
bool any_rank(bool flag);

/// Maximum over all ranks (every rank gets the answer).
double max_over_ranks(double value);

}  // namespace kspecter::parallel
