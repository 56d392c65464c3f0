// A background thread that runs file reads and writes in the order they were submitted,
// so that the next frame's input is read and the last frame's output written while the
// device extracts. The job runs two for reads and two for writes where CFITSIO is reentrant
// (io::files_on_several_threads; HDF5 frames are written one at a time), and one for all of
// it otherwise; the caller's thread keeps MPI (MPI_THREAD_FUNNELED) and Kokkos to itself.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <type_traits>

namespace kspecter::parallel {

class IoWorker {
 public:
  IoWorker() : thread_([this] { loop(); }) {}
  /// Finishes the work already submitted (a write in flight must reach its rename), then joins.
  ~IoWorker() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  IoWorker(IoWorker const&) = delete;
  IoWorker& operator=(IoWorker const&) = delete;

  /// Queues `task`; its result or exception arrives through the future. A `droppable` task
  /// (a read ahead) may be dropped by cancel_droppable(); others (writes) always run.
  template <class F>
  auto submit(F task, bool droppable = false) -> std::future<std::invoke_result_t<F>> {
    using R = std::invoke_result_t<F>;
    auto job = std::make_shared<std::packaged_task<R()>>(std::move(task));
    auto result = job->get_future();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back({[job] { (*job)(); }, droppable});
    }
    wake_.notify_one();
    return result;
  }

  /// Drops the droppable tasks not yet started (their futures report std::future_error): the
  /// reads ahead of a job that is stopping. Running tasks and writes finish.
  void cancel_droppable() {
    std::deque<Job> dropped;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      std::deque<Job> kept;
      for (auto& j : queue_) (j.droppable ? dropped : kept).push_back(std::move(j));
      queue_.swap(kept);
    }
  }

 private:
  struct Job {
    std::function<void()> run;
    bool droppable = false;
  };
  void loop() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        job = std::move(queue_.front().run);
        queue_.pop_front();
      }
      job();
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts after the members it uses exist
};

}  // namespace kspecter::parallel
