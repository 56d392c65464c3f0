#include <kspecter/parallel/communicator.hpp>

#ifdef KSPECTER_HAVE_MPI
#include <mpi.h>
#endif

namespace kspecter::parallel {

struct Communicator::Impl {
#ifdef KSPECTER_HAVE_MPI
  MPI_Comm comm = MPI_COMM_NULL;
  bool owned = false;  // made by split: freed with the last copy (unless MPI is already down)
  ~Impl() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owned && !finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
#endif
  int rank = 0, size = 1;
};

Communicator::Communicator(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

namespace {
#ifdef KSPECTER_HAVE_MPI
bool mpi_active() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}
#endif
}  // namespace

Communicator Communicator::world() {
  auto impl = std::make_shared<Impl>();
#ifdef KSPECTER_HAVE_MPI
  if (mpi_active()) {
    impl->comm = MPI_COMM_WORLD;
    MPI_Comm_rank(MPI_COMM_WORLD, &impl->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &impl->size);
  }
#endif
  return Communicator(std::move(impl));
}

Communicator Communicator::self() {
  auto impl = std::make_shared<Impl>();
#ifdef KSPECTER_HAVE_MPI
  if (mpi_active()) impl->comm = MPI_COMM_SELF;
#endif
  return Communicator(std::move(impl));
}

Communicator Communicator::borrow(void const* mpi_comm) {
  if (!mpi_comm) return world();
  auto impl = std::make_shared<Impl>();
#ifdef KSPECTER_HAVE_MPI
  impl->comm = *static_cast<MPI_Comm const*>(mpi_comm);
  if (impl->comm != MPI_COMM_NULL) {
    MPI_Comm_rank(impl->comm, &impl->rank);
    MPI_Comm_size(impl->comm, &impl->size);
  }
#endif
  return Communicator(std::move(impl));
}

Communicator Communicator::duplicate() const {
#ifdef KSPECTER_HAVE_MPI
  if (impl_->comm != MPI_COMM_NULL) {
    auto impl = std::make_shared<Impl>();
    MPI_Comm_dup(impl_->comm, &impl->comm);
    impl->owned = true;
    impl->rank = impl_->rank;
    impl->size = impl_->size;
    return Communicator(std::move(impl));
  }
#endif
  return *this;
}

Communicator Communicator::split(int color) const {
#ifdef KSPECTER_HAVE_MPI
  if (impl_->comm != MPI_COMM_NULL) {
    auto impl = std::make_shared<Impl>();
    MPI_Comm_split(impl_->comm, color, impl_->rank, &impl->comm);
    impl->owned = true;
    MPI_Comm_rank(impl->comm, &impl->rank);
    MPI_Comm_size(impl->comm, &impl->size);
    return Communicator(std::move(impl));
  }
#endif
  (void)color;
  return self();
}

int Communicator::rank() const { return impl_->rank; }
int Communicator::size() const { return impl_->size; }

void const* Communicator::native() const {
#ifdef KSPECTER_HAVE_MPI
  if (impl_->comm != MPI_COMM_NULL) return &impl_->comm;
#endif
  return nullptr;
}

}  // namespace kspecter::parallel
