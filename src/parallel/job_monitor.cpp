#include <kspecter/parallel/job_monitor.hpp>

#include "mpi_support.hpp"

#include <algorithm>

namespace kspecter::parallel {

namespace {
// Message tags of the monitor; the job's other traffic is collective, so no clash.
constexpr int kTagDone = 7101;  // to rank 0: int frame
constexpr int kTagFail = 7102;  // to every other rank: the failure message
constexpr int kTagEnd = 7103;   // to rank 0: double[3] {busy seconds, frames written, failed}
}  // namespace

struct JobMonitor::Pending {
  std::vector<char> text;
  int frame = 0;
#ifdef KSPECTER_HAVE_MPI
  MPI_Request request = MPI_REQUEST_NULL;
#endif
};

JobMonitor::JobMonitor(Communicator comm, std::function<void(FrameDone const&)> on_done)
    : comm_(std::move(comm)),
      on_done_(std::move(on_done)),
      errors_(static_cast<std::size_t>(comm_.size())),
      notice_from_(static_cast<std::size_t>(comm_.size()), 0) {}

JobMonitor::~JobMonitor() {
#ifdef KSPECTER_HAVE_MPI
  // finish() completes every send; this only matters when an exception skipped it.
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    for (auto& p : pending_)
      if (p->request != MPI_REQUEST_NULL) MPI_Request_free(&p->request);
#endif
}

void JobMonitor::frame_done(int frame) {
  ++frames_done_;
  if (comm_.rank() == 0) {
    if (on_done_) on_done_({frame, 0, frames_done_});
    return;
  }
#ifdef KSPECTER_HAVE_MPI
  auto p = std::make_unique<Pending>();
  p->frame = frame;
  MPI_Isend(&p->frame, 1, MPI_INT, 0, kTagDone, detail::mpi_comm(comm_), &p->request);
  pending_.push_back(std::move(p));
#endif
}

void JobMonitor::fail(std::string const& message) {
  if (!own_error_.empty()) return;
  own_error_ = message.empty() ? "unknown error" : message;
  errors_[std::size_t(comm_.rank())] = own_error_;
#ifdef KSPECTER_HAVE_MPI
  MPI_Comm const comm = detail::mpi_comm(comm_);
  if (comm == MPI_COMM_NULL) return;
  for (int r = 0; r < comm_.size(); ++r) {
    if (r == comm_.rank()) continue;
    auto p = std::make_unique<Pending>();
    p->text.assign(own_error_.begin(), own_error_.end());
    MPI_Isend(p->text.data(), static_cast<int>(p->text.size()), MPI_CHAR, r, kTagFail, comm,
              &p->request);
    pending_.push_back(std::move(p));
  }
#endif
}

void JobMonitor::handle_one(int source, int tag) {
#ifdef KSPECTER_HAVE_MPI
  MPI_Comm const comm = detail::mpi_comm(comm_);
  MPI_Status st;
  if (tag == kTagDone) {
    int frame = 0;
    MPI_Recv(&frame, 1, MPI_INT, source, kTagDone, comm, &st);
    ++frames_done_;
    if (on_done_) on_done_({frame, source, frames_done_});
  } else if (tag == kTagFail) {
    int n = 0;
    MPI_Probe(source, kTagFail, comm, &st);
    MPI_Get_count(&st, MPI_CHAR, &n);
    std::vector<char> text(static_cast<std::size_t>(n));
    MPI_Recv(text.data(), n, MPI_CHAR, source, kTagFail, comm, &st);
    errors_[std::size_t(source)].assign(text.begin(), text.end());
    notice_from_[std::size_t(source)] = 1;
    heard_failure_ = true;
  }
#else
  (void)source;
  (void)tag;
#endif
}

bool JobMonitor::poll() {
#ifdef KSPECTER_HAVE_MPI
  MPI_Comm const comm = detail::mpi_comm(comm_);
  if (comm != MPI_COMM_NULL && comm_.size() > 1) {
    // Rank 0 takes progress and failures; the others only failures. End messages wait for
    // finish().
    for (int tag : {kTagFail, kTagDone}) {
      if (tag == kTagDone && comm_.rank() != 0) continue;
      for (;;) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &flag, &st);
        if (!flag) break;
        handle_one(st.MPI_SOURCE, tag);
      }
    }
  }
#endif
  return heard_failure_ || !own_error_.empty();
}

JobSummary JobMonitor::finish(double busy_seconds) {
  JobSummary s;
  int const size = comm_.size(), rank = comm_.rank();
  std::vector<char> failed(static_cast<std::size_t>(size), 0);
  failed[std::size_t(rank)] = own_error_.empty() ? 0 : 1;
  double busiest = busy_seconds;
  int done = frames_done_;
#ifdef KSPECTER_HAVE_MPI
  MPI_Comm const comm = detail::mpi_comm(comm_);
  if (comm != MPI_COMM_NULL && size > 1) {
    if (rank == 0) {
      // Every rank's end message comes after its frame and failure messages (MPI keeps the
      // order of one sender's messages), so when all ends are in, everything is.
      int ends = 0;
      while (ends < size - 1) {
        MPI_Status st;
        MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
        if (st.MPI_TAG != kTagEnd) {
          handle_one(st.MPI_SOURCE, st.MPI_TAG);
          continue;
        }
        double end[3];
        MPI_Recv(end, 3, MPI_DOUBLE, st.MPI_SOURCE, kTagEnd, comm, MPI_STATUS_IGNORE);
        busiest = std::max(busiest, end[0]);
        failed[std::size_t(st.MPI_SOURCE)] = end[2] != 0 ? 1 : 0;
        ++ends;
      }
      done = frames_done_;
    } else {
      double end[3] = {busy_seconds, double(frames_done_), own_error_.empty() ? 0.0 : 1.0};
      MPI_Send(end, 3, MPI_DOUBLE, 0, kTagEnd, comm);
    }
    // Rank 0 tells everybody the outcome: who failed, the first message, the totals.
    MPI_Bcast(failed.data(), size, MPI_CHAR, 0, comm);
    double totals[2] = {busiest, double(done)};
    MPI_Bcast(totals, 2, MPI_DOUBLE, 0, comm);
    busiest = totals[0];
    done = static_cast<int>(totals[1]);
    // Collect the failure notices still on their way to this rank, then complete our sends.
    for (int r = 0; r < size; ++r)
      if (r != rank && failed[std::size_t(r)] && !notice_from_[std::size_t(r)])
        handle_one(r, kTagFail);
    for (auto& p : pending_) MPI_Wait(&p->request, MPI_STATUS_IGNORE);
    pending_.clear();
  }
#endif
  s.frames_done = done;
  s.max_busy_seconds = busiest;
  for (int r = 0; r < size; ++r)
    if (failed[std::size_t(r)]) {
      s.failed_ranks.push_back(r);
      if (!s.failed) s.error = errors_[std::size_t(r)];
      s.failed = true;
    }
  return s;
}

}  // namespace kspecter::parallel
