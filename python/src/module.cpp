// The extension module kspecter._kspecter. kspecter's exceptions become Python ones with the
// same messages the CLI prints: ParameterError is a ValueError, InputError an OSError, both
// kspecter.Error (a RuntimeError).
#include "module.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/core/version.hpp>

namespace kspecter::python {

using namespace pybind11::literals;

PYBIND11_MODULE(_kspecter, m) {
  m.doc() = "kspecter's C++ half; use the package kspecter.";
  m.attr("__version__") = version();
  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  // Python classes with two bases: kspecter.Error and the built-in one callers catch.
  py::object const type = py::reinterpret_borrow<py::object>((PyObject*)&PyType_Type);
  static py::object parameter_error = type(
      "ParameterError", py::make_tuple(error, py::reinterpret_borrow<py::object>(PyExc_ValueError)),
      py::dict("__module__"_a = "kspecter"));
  static py::object input_error =
      type("InputError", py::make_tuple(error, py::reinterpret_borrow<py::object>(PyExc_OSError)),
           py::dict("__module__"_a = "kspecter"));
  m.attr("ParameterError") = parameter_error;
  m.attr("InputError") = input_error;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (InputError const& e) {
      PyErr_SetObject(input_error.ptr(), py::str(e.what()).ptr());
    } catch (ParameterError const& e) {
      PyErr_SetObject(parameter_error.ptr(), py::str(e.what()).ptr());
    } catch (Error const& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });
  bind_runtime(m);
  bind_psf(m);
  bind_files(m);
  bind_extract(m);
}

}  // namespace kspecter::python
