// numpy and __cuda_array_interface__ arrays as the library's ImageArray, without copies where
// their type allows.
#include "module.hpp"

#include <kspecter/core/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>

#include <limits>
#include <vector>

namespace kspecter::python {

namespace {

int checked_extent(py::ssize_t n, std::string const& what) {
  if (n < 1 || n > std::numeric_limits<int>::max())
    throw py::value_error(what + " has an axis of length " + std::to_string(n));
  return static_cast<int>(n);
}

#ifdef KOKKOS_ENABLE_CUDA
// The producer's stream must be done with the array before the library reads it
// (__cuda_array_interface__ v3: 1 is the legacy default stream, 2 the per-thread one).
void wait_for_stream(py::dict const& cai) {
  if (!cai.contains("stream") || cai["stream"].is_none()) return;
  auto const s = cai["stream"].cast<std::uintptr_t>();
  cudaStream_t const stream = s == 1   ? cudaStreamLegacy
                              : s == 2 ? cudaStreamPerThread
                                       : reinterpret_cast<cudaStream_t>(s);
  if (cudaStreamSynchronize(stream) != cudaSuccess)
    throw std::runtime_error("cannot wait for the GPU array's stream");
}

void check_device(void const* p, std::string const& what) {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess || attr.type != cudaMemoryTypeDevice) {
    cudaGetLastError();  // clear it
    if (attr.type == cudaMemoryTypeManaged) return;
    throw py::value_error(what + ": __cuda_array_interface__ does not point to device memory");
  }
  int const ours = compat::device_id();
  if (attr.device != ours)
    throw py::value_error(what + " is on GPU " + std::to_string(attr.device) +
                          " but kspecter runs on GPU " + std::to_string(ours) +
                          " (kspecter.initialize(device=...) before the first call picks it)");
}
#endif

// A tuple of integers (__cuda_array_interface__'s shape and strides).
std::vector<py::ssize_t> ints(py::handle tuple) {
  std::vector<py::ssize_t> v;
  for (py::handle x : tuple) v.push_back(x.cast<py::ssize_t>());
  return v;
}

BorrowedImage borrow_cuda(py::handle obj, std::string const& what) {
  py::dict const cai = obj.attr("__cuda_array_interface__");
  auto const shape = ints(cai["shape"]);
  if (shape.size() != 2)
    throw py::value_error(what + " must be 2-D, got " + std::to_string(shape.size()) +
                          " dimensions");
  auto const typestr = cai["typestr"].cast<std::string>();
  BorrowedImage b;
  std::size_t itemsize = 0;
  if (typestr == "<f8") {
    b.array.type = extract::ImageArray::Type::f64;
    itemsize = 8;
  } else if (typestr == "<f4") {
    b.array.type = extract::ImageArray::Type::f32;
    itemsize = 4;
  } else {
    throw py::type_error(what + ": a GPU array must be float32 or float64, got '" + typestr + "'");
  }
  b.array.ny = checked_extent(shape[0], what);
  b.array.nx = checked_extent(shape[1], what);
  b.array.data = reinterpret_cast<void const*>(py::tuple(cai["data"])[0].cast<std::uintptr_t>());
  b.array.row_stride = b.array.nx;
  b.array.col_stride = 1;
  if (cai.contains("strides") && !cai["strides"].is_none()) {
    auto const strides = ints(cai["strides"]);
    if (strides[0] % py::ssize_t(itemsize) || strides[1] % py::ssize_t(itemsize))
      throw py::value_error(what + ": strides are not whole elements");
    b.array.row_stride = strides[0] / py::ssize_t(itemsize);
    b.array.col_stride = strides[1] / py::ssize_t(itemsize);
  }
  b.array.on_device = true;
  b.owner = py::reinterpret_borrow<py::object>(obj);
#ifdef KOKKOS_ENABLE_CUDA
  check_device(b.array.data, what);
  wait_for_stream(cai);
#endif
  return b;
}

}  // namespace

namespace {

std::string shape_text(std::vector<py::ssize_t> const& shape) {
  std::string t = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) t += (i ? ", " : "") + std::to_string(shape[i]);
  return t + (shape.size() == 1 ? ",)" : ")");
}

// Whether `strides` (bytes) are those of a C-contiguous array of `shape` and `itemsize`.
bool c_contiguous(std::vector<py::ssize_t> const& shape, std::vector<py::ssize_t> const& strides,
                  py::ssize_t itemsize) {
  py::ssize_t step = itemsize;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] > 1 && strides[i] != step) return false;
    step *= shape[i];
  }
  return true;
}

}  // namespace

void* output_array(py::handle obj, std::string const& what, std::string const& typestr,
                   std::vector<py::ssize_t> const& shape, bool on_device) {
  std::vector<py::ssize_t> got, strides;
  std::string type;
  void* data = nullptr;
  bool readonly = false;
  py::ssize_t const itemsize = std::stoi(typestr.substr(2));
  if (on_device) {
    if (py::isinstance<py::array>(obj) || !py::hasattr(obj, "__cuda_array_interface__"))
      throw py::type_error(what + " must be a device array (__cuda_array_interface__)");
    py::dict const cai = obj.attr("__cuda_array_interface__");
    got = ints(cai["shape"]);
    type = cai["typestr"].cast<std::string>();
    py::tuple const d = cai["data"];
    data = reinterpret_cast<void*>(d[0].cast<std::uintptr_t>());
    readonly = d[1].cast<bool>();
    if (cai.contains("strides") && !cai["strides"].is_none()) strides = ints(cai["strides"]);
  } else {
    if (!py::isinstance<py::array>(obj)) throw py::type_error(what + " must be a numpy array");
    py::array a = py::reinterpret_borrow<py::array>(obj);
    got.assign(a.shape(), a.shape() + a.ndim());
    strides.assign(a.strides(), a.strides() + a.ndim());
    type = py::str(a.dtype().attr("str")).cast<std::string>();
    readonly = !a.writeable();
    data = readonly ? nullptr : a.mutable_data();
  }
  if (type != typestr) throw py::type_error(what + " must be of type " + typestr + ", not " + type);
  if (got != shape)
    throw py::value_error(what + " must have the shape " + shape_text(shape) + ", not " +
                          shape_text(got));
  if (!strides.empty() && !c_contiguous(got, strides, itemsize))
    throw py::value_error(what + " must be C-contiguous");
  if (readonly) throw py::value_error(what + " is read-only");
#ifdef KOKKOS_ENABLE_CUDA
  if (on_device) check_device(data, what);
#endif
  return data;
}

int device_of(py::handle obj) {
  if (obj.is_none() || py::isinstance<py::array>(obj) ||
      !py::hasattr(obj, "__cuda_array_interface__"))
    return -1;
#ifdef KOKKOS_ENABLE_CUDA
  py::dict const cai = obj.attr("__cuda_array_interface__");
  auto const* p = reinterpret_cast<void const*>(py::tuple(cai["data"])[0].cast<std::uintptr_t>());
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess || attr.type != cudaMemoryTypeDevice) {
    cudaGetLastError();  // clear it: borrow_image reports the array
    return -1;
  }
  return attr.device;
#else
  return -1;
#endif
}

BorrowedImage borrow_image(py::handle obj, std::string const& what) {
  if (obj.is_none()) throw py::value_error(what + " is missing (None)");
  if (!py::isinstance<py::array>(obj) && py::hasattr(obj, "__cuda_array_interface__"))
    return borrow_cuda(obj, what);
  py::array a = py::array::ensure(obj);
  if (!a) throw py::type_error(what + " is not an array");
  if (a.ndim() != 2)
    throw py::value_error(what + " must be 2-D, got " + std::to_string(a.ndim()) + " dimensions");
  // numpy would cast complex to float64 dropping the imaginary part (with only a
  // ComplexWarning), and objects, strings or dates are no pixels.
  std::string const kind = a.dtype().attr("kind").cast<std::string>();
  if (kind != "f" && kind != "i" && kind != "u" && kind != "b")
    throw py::type_error(what + " must be an array of real numbers, got dtype " +
                         py::str(a.dtype()).cast<std::string>() +
                         (kind == "c" ? " (complex: pass its .real, or abs(), as meant)" : ""));
  BorrowedImage b;
  // Native float32/float64 as they are; anything else (integers, big-endian FITS data) once
  // to float64.
  if (py::array_t<double>::check_(a)) {
    b.array.type = extract::ImageArray::Type::f64;
  } else if (py::array_t<float>::check_(a)) {
    b.array.type = extract::ImageArray::Type::f32;
  } else {
    a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
    if (!a) throw py::type_error(what + " cannot be converted to float64");
    b.array.type = extract::ImageArray::Type::f64;
  }
  py::ssize_t const item = a.itemsize();
  if (a.strides(0) % item || a.strides(1) % item) {  // odd byte strides: one aligned copy
    a = py::array::ensure(py::module_::import("numpy").attr("ascontiguousarray")(a));
  }
  b.array.ny = checked_extent(a.shape(0), what);
  b.array.nx = checked_extent(a.shape(1), what);
  b.array.row_stride = a.strides(0) / item;
  b.array.col_stride = a.strides(1) / item;
  b.array.data = a.data();
  b.array.on_device = false;
  b.owner = a;
  return b;
}

}  // namespace kspecter::python
