// Gathering the spectra that ranks extracted into the whole frame on one rank, and the small
// agreements (did anyone fail? the slowest time) that keep ranks in step.
#pragma once

#include <kspecter/parallel/communicator.hpp>

#include <vector>

namespace kspecter::parallel {

/// Concatenates each rank's `local` (rows of `row_size` values) in rank order on `root` of
/// `comm`; returns the whole array there and an empty one elsewhere. One rank: `local`.
std::vector<double> gather_rows(std::vector<double> const& local, int root = 0,
                                Communicator const& comm = Communicator::world());
std::vector<unsigned> gather_rows(std::vector<unsigned> const& local, int root = 0,
                                  Communicator const& comm = Communicator::world());

/// Element-wise sum over ranks on `root` (e.g. the model image, where fibers of different
/// ranks share pixels). One rank: `local`.
std::vector<double> sum_to_root(std::vector<double> const& local, int root = 0,
                                Communicator const& comm = Communicator::world());

/// Logical OR of `flag` over the ranks of `comm` (every rank gets the answer): lets every
/// rank learn that one of them failed, so that all stop together instead of hanging.
bool any_rank(bool flag, Communicator const& comm = Communicator::world());

/// Maximum over the ranks of `comm` (every rank gets the answer).
double max_over_ranks(double value, Communicator const& comm = Communicator::world());

}  // namespace kspecter::parallel
