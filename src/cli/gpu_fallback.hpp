// A GPU build of kspecter on a node without a usable GPU: its CPU twin (the same kspecter
// built against a host-only Kokkos) takes the command over, or a clear error says why it
// cannot. Decided before MPI and Kokkos start, the same way on every rank of a job.
#pragma once

#include <kspecter/core/gpu_probe.hpp>

#include <string>

namespace kspecter::cli {

/// The CPU twin this executable falls back to, empty when there is none:
/// $KSPECTER_CPU_FALLBACK when set ("none": no twin), else kspecter-host installed beside this
/// executable (<prefix>/libexec/kspecter/kspecter-host) or built beside it (build folder).
std::string cpu_fallback();

/// Called by each command before MPI and Kokkos start. Returns at once in a build without a
/// GPU backend or with a usable GPU. Otherwise: for backend "auto", "serial" or "openmp",
/// re-executes this command line in the CPU twin and does not return (one line on stderr,
/// from the launcher's rank 0 unless `quiet`, names the reason and the twin); a GPU backend
/// named is a ParameterError, and no twin an Error, each giving the reason.
void hand_over_without_gpu(char** argv, std::string const& backend, bool quiet);

}  // namespace kspecter::cli
