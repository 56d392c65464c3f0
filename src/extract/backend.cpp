// extract_frame on a backend named at run time, with the caller's image arrays brought to it.
#include <kspecter/core/allocate.hpp>
#include <kspecter/core/error.hpp>
#include <kspecter/core/huge_pages.hpp>
#include <kspecter/extract/backend.hpp>
#include <kspecter_backend_list.hpp>

#include <Kokkos_Core.hpp>
#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace kspecter::extract {

namespace {

template <class Mem>
using DeviceImage = Kokkos::View<double**, Kokkos::LayoutRight, Mem>;

// Offsets of the lowest and highest element of an array (strides may be negative or zero).
std::pair<std::ptrdiff_t, std::ptrdiff_t> span_of(ImageArray const& a) {
  std::ptrdiff_t const ey = std::ptrdiff_t(a.ny - 1) * a.row_stride;
  std::ptrdiff_t const ex = std::ptrdiff_t(a.nx - 1) * a.col_stride;
  return {std::min<std::ptrdiff_t>(0, ey) + std::min<std::ptrdiff_t>(0, ex),
          std::max<std::ptrdiff_t>(0, ey) + std::max<std::ptrdiff_t>(0, ex)};
}

// Pixels of any layout in Space's memory into a row-major image of doubles there: a team per
// row, its threads along the row (coalesced on a GPU, one contiguous loop on a CPU thread).
template <class Space, class T>
void convert_in_space(Space const& space, ImageArray const& a,
                      DeviceImage<typename Space::memory_space> const& out) {
  using Policy = Kokkos::TeamPolicy<Space>;
  T const* const p = static_cast<T const*>(a.data);
  std::ptrdiff_t const row_stride = a.row_stride, col_stride = a.col_stride;
  int const nx = a.nx;
  Kokkos::parallel_for(
      "kspecter::extract::convert_image", Policy(space, a.ny, Kokkos::AUTO),
      KOKKOS_LAMBDA(typename Policy::member_type const& team) {
        int const y = team.league_rank();
        T const* const row = p + std::ptrdiff_t(y) * row_stride;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nx), [&](int x) {
          out(y, x) = static_cast<double>(row[std::ptrdiff_t(x) * col_stride]);
        });
      });
}

template <class Space>
void convert_in_space(Space const& space, ImageArray const& a,
                      DeviceImage<typename Space::memory_space> const& out) {
  if (a.type == ImageArray::Type::f32)
    convert_in_space<Space, float>(space, a, out);
  else
    convert_in_space<Space, double>(space, a, out);
}

#ifdef KOKKOS_ENABLE_CUDA
using DeviceArraySpace = Kokkos::CudaSpace;

// A device array's elements, copied to the host as they lie (for a host backend).
std::vector<char> device_span_to_host(ImageArray const& a) {
  auto const [lo, hi] = span_of(a);
  std::size_t const esize = a.type == ImageArray::Type::f32 ? sizeof(float) : sizeof(double);
  std::size_t const bytes = std::size_t(hi - lo + 1) * esize;
  std::vector<char> host(bytes);
  using Bytes = Kokkos::View<char*, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::View<char const*, DeviceArraySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> dev(
      static_cast<char const*>(a.data) + lo * std::ptrdiff_t(esize), bytes);
  Kokkos::deep_copy(Bytes(host.data(), bytes), dev);
  return host;
}
#endif

// Host memory page-locked for the time of one copy to a GPU, so that the copy engine reads it
// directly: from pageable memory the driver stages it through its own buffers, at 4-5 GB/s
// for a frame's image with four ranks of a node copying (perf/gpu_runs.md, session 22). When
// the pages cannot be locked (already registered, a limit), the copy is made as it was.
class PinnedForCopy {
 public:
  PinnedForCopy(void const* data, std::size_t bytes) {
#ifdef KOKKOS_ENABLE_CUDA
    if (cudaHostRegister(const_cast<void*>(data), bytes, cudaHostRegisterDefault) == cudaSuccess)
      data_ = data;
    else
      (void)cudaGetLastError();  // the copy goes on from pageable memory
#else
    (void)data;
    (void)bytes;
#endif
  }
  ~PinnedForCopy() {
#ifdef KOKKOS_ENABLE_CUDA
    if (data_) cudaHostUnregister(const_cast<void*>(data_));
#endif
  }
  PinnedForCopy(PinnedForCopy const&) = delete;
  PinnedForCopy& operator=(PinnedForCopy const&) = delete;

 private:
  void const* data_ = nullptr;
};

// A host array's elements copied, as they lie, into Space's memory and converted there: a
// DESI image (float32) crosses the bus at half the bytes of the doubles it becomes, and no
// host copy of doubles is made (perf/gpu_runs.md, the CLI's upload).
template <class Space>
void upload_and_convert(Space const& space, ImageArray const& a,
                        DeviceImage<typename Space::memory_space> const& out) {
  auto const [lo, hi] = span_of(a);
  std::size_t const esize = a.type == ImageArray::Type::f32 ? sizeof(float) : sizeof(double);
  std::size_t const bytes = std::size_t(hi - lo + 1) * esize;
  auto elements = allocate<Kokkos::View<char*, typename Space::memory_space>>(
      space, "kspecter::extract::image_elements", bytes);
  Kokkos::View<char const*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(
      static_cast<char const*>(a.data) + lo * std::ptrdiff_t(esize), bytes);
  PinnedForCopy const pinned(host.data(), bytes);
  Kokkos::deep_copy(space, elements, host);
  ImageArray there = a;
  there.data = elements.data() - lo * std::ptrdiff_t(esize);
  convert_in_space(space, there, out);
  space.fence();  // before `elements` is freed
}

// A host array converted into a new row-major image of doubles in Space's memory.
template <class Space>
DeviceImage<typename Space::memory_space> from_host(Space const& space, ImageArray const& a,
                                                    char const* label) {
  using Mem = typename Space::memory_space;
  auto d = allocate<DeviceImage<Mem>>(space, label, a.ny, a.nx);
  if constexpr (Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible) {
    // Written whole at once, by the backend's threads: huge pages (core/allocate.hpp).
    advise_huge_pages(d);
    convert_in_space(space, a, d);
  } else {
    upload_and_convert(space, a, d);
  }
  return d;
}

// `a` as a row-major image of doubles in Space's memory: `a` itself when it already is one
// there, else a converted copy.
template <class Space>
Kokkos::View<const double**, Kokkos::LayoutRight, typename Space::memory_space> to_space(
    Space const& space, ImageArray const& a, char const* label) {
  using Mem = typename Space::memory_space;
  constexpr bool host_reach = Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible;
  if (a.on_device) {
#ifdef KOKKOS_ENABLE_CUDA
    constexpr bool device_reach = Kokkos::SpaceAccessibility<Space, DeviceArraySpace>::accessible;
    if constexpr (device_reach) {
      if (a.contiguous_f64())
        return Kokkos::View<const double**, Kokkos::LayoutRight, Mem,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
            static_cast<double const*>(a.data), a.ny, a.nx);
      auto d = allocate<DeviceImage<Mem>>(space, label, a.ny, a.nx);
      convert_in_space(space, a, d);
      return d;
    } else {
      // A host backend given a GPU array: one copy of its elements to the host, then as below.
      std::vector<char> const host = device_span_to_host(a);
      std::size_t const esize = a.type == ImageArray::Type::f32 ? sizeof(float) : sizeof(double);
      ImageArray h = a;
      h.on_device = false;
      h.data = host.data() - span_of(a).first * std::ptrdiff_t(esize);
      return from_host(space, h, label);
    }
#else
    throw ParameterError("extract: a GPU array was given but this build has no GPU backend");
#endif
  }
  if constexpr (host_reach) {
    if (a.contiguous_f64())
      return Kokkos::View<const double**, Kokkos::LayoutRight, Mem,
                          Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
          static_cast<double const*>(a.data), a.ny, a.nx);
  }
  return from_host(space, a, label);
}

// True when `a` is row-major doubles in memory Space can read: used where it is.
template <class Space>
bool usable_in_place(ImageArray const& a) {
  if (!a.contiguous_f64()) return false;
#ifdef KOKKOS_ENABLE_CUDA
  if (a.on_device) return Kokkos::SpaceAccessibility<Space, DeviceArraySpace>::accessible;
#endif
  return !a.on_device && Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible;
}

template <class Space>
FrameResult extract_on(psf::GaussHermitePsf const& psf, ImageArray const& image,
                       ImageArray const& ivar, ExtractOptions const& opt, StageTimes* times,
                       ExtractHooks const& hooks) {
  Space space;
  Kokkos::View<const double**, Kokkos::LayoutRight, typename Space::memory_space> dimage, divar;
  if (usable_in_place<Space>(image) && usable_in_place<Space>(ivar)) {
    // No copy, so no upload stage: its absence from `times` tells that none was made.
    dimage = to_space(space, image, "kspecter::image");
    divar = to_space(space, ivar, "kspecter::ivar");
  } else {
    StageTimer<Space> t(space, "kspecter::extract::upload", times);
    dimage = to_space(space, image, "kspecter::image");
    divar = to_space(space, ivar, "kspecter::ivar");
  }
  return extract_frame(space, psf, dimage, divar, opt, times, hooks);
}

[[noreturn]] void unknown_backend(std::string const& backend) {
  throw ParameterError("extract: backend '" + backend +
                       "' is not enabled in this build (see `kspecter info`)");
}

// f(BackendTag<ExecSpace>{}) for the named backend ("auto": Kokkos' default execution space)
// of the build's backend list.
template <class F>
auto on_backend(std::string const& backend, F&& f) {
  using Result = decltype(f(detail::BackendTag<Kokkos::DefaultExecutionSpace>{}));
  if (backend == "auto") return f(detail::BackendTag<Kokkos::DefaultExecutionSpace>{});
  std::optional<Result> result;
  detail::for_each_backend([&](char const* name, auto tag) {
    if (!result && backend == name) result = f(tag);
  });
  if (!result) unknown_backend(backend);
  return std::move(*result);
}

}  // namespace

std::vector<double> host_copy(ImageArray const& a) {
  std::size_t const n = std::size_t(a.ny) * std::size_t(a.nx);
  // Huge-page hinted and not zeroed first: a full CCD is 136 MB, whose 4 KiB page faults and
  // zeroing cost more than the copy (outlier rejection copies the image and the weights).
  std::vector<double> out;
  reserve_huge(out, n);
  ImageArray h = a;
#ifdef KOKKOS_ENABLE_CUDA
  std::vector<char> elements;
  if (a.on_device) {
    elements = device_span_to_host(a);
    std::size_t const esize = a.type == ImageArray::Type::f32 ? sizeof(float) : sizeof(double);
    h.on_device = false;
    h.data = elements.data() - span_of(a).first * std::ptrdiff_t(esize);
  }
#else
  if (a.on_device)
    throw ParameterError("extract: a GPU array was given but this build has no GPU backend");
#endif
  if (h.col_stride == 1 && h.row_stride == h.nx) {  // row-major: one loop the compiler vectorizes
    if (h.type == ImageArray::Type::f32) {
      auto const* p = static_cast<float const*>(h.data);
      out.assign(p, p + n);
    } else {
      auto const* p = static_cast<double const*>(h.data);
      out.assign(p, p + n);
    }
    return out;
  }
  out.resize(n);
  for (int y = 0; y < h.ny; ++y)
    for (int x = 0; x < h.nx; ++x) {
      std::ptrdiff_t const at = std::ptrdiff_t(y) * h.row_stride + std::ptrdiff_t(x) * h.col_stride;
      out[std::size_t(y) * std::size_t(h.nx) + std::size_t(x)] =
          h.type == ImageArray::Type::f32 ? double(static_cast<float const*>(h.data)[at])
                                          : static_cast<double const*>(h.data)[at];
    }
  return out;
}

std::vector<std::string> backend_list() {
  std::vector<std::string> names;
  detail::for_each_backend([&](char const* name, auto) { names.emplace_back(name); });
  return names;
}

std::string backend_names() {
  std::string s = "auto";
  for (std::string const& name : backend_list()) s += ", " + name;
  return s;
}

namespace {
template <class Space>
constexpr bool on_gpu(detail::BackendTag<Space>) {
  return !Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible;
}
}  // namespace

bool backend_on_host(std::string const& backend) {
  if (backend == "auto") return !on_gpu(detail::BackendTag<Kokkos::DefaultExecutionSpace>{});
  bool host = false;
  detail::for_each_backend(
      [&](char const* n, auto tag) { host = host || (backend == n && !on_gpu(tag)); });
  return host;
}

std::string host_backend() {
  std::string name;
  detail::for_each_backend([&](char const* n, auto tag) {
    if (!on_gpu(tag)) name = n;
  });
  return name;
}

std::string gpu_backend() {
  std::string name;
  detail::for_each_backend([&](char const* n, auto tag) {
    if (on_gpu(tag) && name.empty()) name = n;
  });
  return name;
}

std::string resolved_backend(std::string const& backend) {
  if (backend != "auto") {
    backend_space_name(backend);  // a ParameterError for one the build lacks
    return backend;
  }
  std::string name;
  detail::for_each_backend([&](char const* n, auto tag) {
    if (name.empty() &&
        std::is_same_v<typename decltype(tag)::space, Kokkos::DefaultExecutionSpace>)
      name = n;
  });
  return name.empty() ? backend : name;
}

std::string backend_space_name(std::string const& backend) {
  return on_backend(backend, [](auto tag) -> std::string { return decltype(tag)::space::name(); });
}

void copy_to_backend(std::string const& backend, void* dst, void const* src, std::size_t bytes) {
  on_backend(backend, [&](auto tag) {
    using Space = typename decltype(tag)::space;
    using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
    Kokkos::View<char*, typename Space::memory_space, Unmanaged> to(static_cast<char*>(dst), bytes);
    Kokkos::View<char const*, Kokkos::HostSpace, Unmanaged> from(static_cast<char const*>(src),
                                                                 bytes);
    Kokkos::deep_copy(to, from);
    return 0;
  });
}

FrameResult extract_frame(std::string const& backend, psf::GaussHermitePsf const& psf,
                          ImageArray const& image, ImageArray const& ivar,
                          ExtractOptions const& opt, StageTimes* times, ExtractHooks const& hooks) {
  if (image.ny != ivar.ny || image.nx != ivar.nx)
    throw ParameterError("extract: the inverse variance is " + std::to_string(ivar.nx) + " x " +
                         std::to_string(ivar.ny) + ", the image " + std::to_string(image.nx) +
                         " x " + std::to_string(image.ny) + " (columns x rows)");
  return on_backend(backend, [&](auto tag) {
    return extract_on<typename decltype(tag)::space>(psf, image, ivar, opt, times, hooks);
  });
}

}  // namespace kspecter::extract
