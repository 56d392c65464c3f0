// What extract_frame does when an allocation fails: tell running out of memory from other
// errors, choose smaller batches to try again with, and say plainly what did not fit when
// nothing smaller is left.
#pragma once

#include <kspecter/core/error.hpp>
#include <kspecter/extract/frame.hpp>

#include <cstddef>
#include <exception>
#include <optional>
#include <string>

namespace kspecter::extract::detail {

/// True for a std::bad_alloc: kspecter::OutOfMemory from allocate() (core/allocate.hpp), where
/// every View sized from the input is made, or a failed operator new on the host. Decided by
/// the type, never by Kokkos' wording, which differs between versions.
bool is_out_of_memory(std::exception const& e);

/// What an allocation failure says, without anything after its first line.
std::string failure_text(std::exception const& e);

/// A memory budget under which the largest batch of `opt`'s plan is about half as big, never
/// below one patch with its bundle's spots; nullopt when every batch already holds a single
/// patch.
std::optional<std::size_t> smaller_budget(ExtractOptions const& opt, SpotGeometry const& geometry);

/// The error for an allocation `e` that failed with one patch per batch (`requested` is the
/// caller's budget, `last` the budget of the last try).
Error out_of_memory_error(std::exception const& e, std::size_t requested, std::size_t last);

}  // namespace kspecter::extract::detail
