#include "device_agent/program_cache.h"

#include <chrono>

#include "absl/strings/str_cat.h"

namespace tunefleet::agent {
namespace {

constexpr size_t kMaxLogBytes = 8192;

std::string BuildLog(cl_program program, cl_device_id device) {
  size_t size = 0;
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr,
                        &size);
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(),
                        nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) {
    log.pop_back();
  }
  if (log.size() > kMaxLogBytes) {
    log.resize(kMaxLogBytes);
    log += "\n[build log truncated]";
  }
  return log;
}

}  // namespace

ProgramCache::ProgramCache(cl_context context, cl_device_id device,
                           size_t capacity)
    : context_(context), device_(device), capacity_(capacity) {}

absl::StatusOr<ProgramCache::Built> ProgramCache::Get(
    const std::string& source, const std::string& options) {
  std::string key = absl::StrCat(options, "\n", source);
  if (auto it = programs_.find(key); it != programs_.end()) {
    ++hits_;
    return Built{it->second.get(), 0.0, true};
  }
  ++misses_;
  const char* text = source.c_str();
  const size_t length = source.size();
  cl_int err = CL_SUCCESS;
  ClProgram program(
      clCreateProgramWithSource(context_, 1, &text, &length, &err));
  if (err != CL_SUCCESS) return ClError("clCreateProgramWithSource", err);

  const auto start = std::chrono::steady_clock::now();
  err = clBuildProgram(program.get(), 1, &device_, options.c_str(), nullptr,
                       nullptr);
  const double compile_ms = std::chrono::duration<double, std::milli>(
                                std::chrono::steady_clock::now() - start)
                                .count();
  if (err != CL_SUCCESS) {
    return absl::InvalidArgumentError(
        absl::StrCat("clBuildProgram: ", ClErrorName(err), "\n",
                     BuildLog(program.get(), device_)));
  }
  if (programs_.size() >= capacity_ && !order_.empty()) {
    programs_.erase(order_.front());
    order_.pop_front();
  }
  cl_program raw = program.get();
  order_.push_back(key);
  programs_.emplace(std::move(key), std::move(program));
  return Built{raw, compile_ms, false};
}

}  // namespace tunefleet::agent
