#include "library_backends/library.h"

#include <utility>

namespace tunefleet::library_backends {

void EventRelease::operator()(cl_event event) const {
  if (event != nullptr) clReleaseEvent(event);
}

LibraryArg LibraryArg::Buffer(cl_mem mem, std::string name,
                              tunefleet::v1::Dtype dtype, uint64_t elements) {
  LibraryArg arg;
  arg.kind = Kind::kBuffer;
  arg.buffer = mem;
  arg.name = std::move(name);
  arg.dtype = dtype;
  arg.elements = elements;
  return arg;
}

LibraryArg LibraryArg::Integer(int64_t value) {
  LibraryArg arg;
  arg.kind = Kind::kInteger;
  arg.integer = value;
  return arg;
}

LibraryArg LibraryArg::Float(double value) {
  LibraryArg arg;
  arg.kind = Kind::kFloat;
  arg.real = value;
  return arg;
}

bool LibraryBackend::HasRoutine(absl::string_view routine) const {
  for (const std::string& name : routines()) {
    if (name == routine) return true;
  }
  return false;
}

}  // namespace tunefleet::library_backends
