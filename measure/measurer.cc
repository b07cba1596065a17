#include "measure/measurer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/enum_names.h"
#include "base/time.h"
#include "contract/timing_policy.h"
#include "kernel_policy/build_options.h"
#include "kernel_policy/source_check.h"
#include "measure/library_trial.h"
#include "measure/verify.h"

namespace tunefleet::measure {

absl::string_view FillSource();  // embedded fill.cl

namespace {

using tunefleet::v1::KernelLaunch;
using tunefleet::v1::Measurement;
using tunefleet::v1::MeasureRequest;
using tunefleet::v1::TimingPolicy;

constexpr size_t kProgramCacheCapacity = 256;
constexpr size_t kMaxWorkloads = 4;

// Checks the NDRange of a launch against OpenCL 1.2 rules and the device.
absl::Status CheckGeometry(const KernelLaunch& launch,
                           const tunefleet::v1::DeviceInfo& info) {
  const int dims = launch.global_size_size();
  if (dims < 1 || dims > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("global size has ", dims, " dimensions; expected 1..3"));
  }
  if (launch.local_size_size() != 0 && launch.local_size_size() != dims) {
    return absl::InvalidArgumentError(
        "local size and global size have different dimensions");
  }
  uint64_t group = 1;
  for (int d = 0; d < dims; ++d) {
    if (launch.global_size(d) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("global size[", d, "] is 0"));
    }
    if (launch.local_size_size() == 0) continue;
    const uint64_t local = launch.local_size(d);
    if (local == 0 || launch.global_size(d) % local != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("local size[", d, "]=", local,
                       " does not divide global size ", launch.global_size(d)));
    }
    if (d < info.max_work_item_sizes_size() &&
        local > info.max_work_item_sizes(d)) {
      return absl::InvalidArgumentError(
          absl::StrCat("local size[", d, "]=", local, " exceeds the device's ",
                       info.max_work_item_sizes(d)));
    }
    group *= local;
  }
  if (group > info.max_work_group_size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "work-group of ", group, " work-items exceeds the device's ",
        info.max_work_group_size()));
  }
  return absl::OkStatus();
}

// clSetKernelArg of a value argument (a number, a cl_mem).
template <typename T>
cl_int SetValueArg(cl_kernel kernel, cl_uint index, T value) {
  return clSetKernelArg(kernel, index, sizeof(value), &value);
}

absl::Status SetArgs(cl_kernel kernel, const KernelLaunch& launch,
                     WorkloadState& state) {
  for (int i = 0; i < launch.args_size(); ++i) {
    const tunefleet::v1::KernelArg& arg = launch.args(i);
    cl_int err = CL_SUCCESS;
    switch (arg.value_case()) {
      case tunefleet::v1::KernelArg::kBuffer: {
        auto it = state.buffers.find(arg.buffer());
        if (it == state.buffers.end()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "argument ", i, " names unknown buffer '", arg.buffer(), "'"));
        }
        err = SetValueArg(kernel, i, it->second.get());
        break;
      }
      case tunefleet::v1::KernelArg::kI32:
        err = SetValueArg(kernel, i, cl_int{arg.i32()});
        break;
      case tunefleet::v1::KernelArg::kU32:
        err = SetValueArg(kernel, i, cl_uint{arg.u32()});
        break;
      case tunefleet::v1::KernelArg::kF32:
        err = SetValueArg(kernel, i, cl_float{arg.f32()});
        break;
      case tunefleet::v1::KernelArg::kLocalBytes:
        err = clSetKernelArg(kernel, i, arg.local_bytes(), nullptr);
        break;
      case tunefleet::v1::KernelArg::kImage: {
        // Made by Measurer::PrepareImages before the kernel.
        auto it = state.images.find(KeyOf(arg.image()));
        if (it == state.images.end()) {
          return absl::InvalidArgumentError(
              absl::StrCat("argument ", i, ": no image over buffer '",
                           arg.image().buffer(), "'"));
        }
        err = SetValueArg(kernel, i, it->second.image.get());
        break;
      }
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("argument ", i, " has no value"));
    }
    if (err != CL_SUCCESS) {
      return absl::InvalidArgumentError(
          absl::StrCat("clSetKernelArg(", i, "): ", opencl::ClErrorName(err)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<double> EventNs(cl_event event) {
  cl_ulong start = 0, end = 0;
  cl_int err = clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START,
                                       sizeof(start), &start, nullptr);
  err |= clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof(end),
                                 &end, nullptr);
  if (err != CL_SUCCESS) return opencl::ClError("clGetEventProfilingInfo", err);
  return static_cast<double>(end - start);
}

// The device time of finished commands (image copies and packs), ns.
absl::StatusOr<double> SumEventNs(const std::vector<opencl::ClEvent>& events) {
  double ns = 0;
  for (const opencl::ClEvent& e : events) {
    absl::StatusOr<double> t = EventNs(e.get());
    if (!t.ok()) return t.status();
    ns += *t;
  }
  return ns;
}

tunefleet::v1::Measurement::ProgramSource SourceOf(
    opencl::ProgramCache::Origin o) {
  switch (o) {
    case opencl::ProgramCache::Origin::kBuiltFromSource:
      return Measurement::BUILT_FROM_SOURCE;
    case opencl::ProgramCache::Origin::kMemory:
      return Measurement::MEMORY_CACHE;
    case opencl::ProgramCache::Origin::kBinaryCache:
      return Measurement::BINARY_CACHE;
    case opencl::ProgramCache::Origin::kPrefetched:
      return Measurement::PREFETCHED;
  }
  return Measurement::PROGRAM_SOURCE_UNSPECIFIED;
}

// The NDRange of a launch as arrays for clEnqueueNDRangeKernel.
struct NdRange {
  cl_uint dims = 0;
  size_t global[3] = {0, 0, 0};
  size_t local[3] = {0, 0, 0};
  bool has_local = false;
  explicit NdRange(const KernelLaunch& launch)
      : dims(static_cast<cl_uint>(launch.global_size_size())),
        has_local(launch.local_size_size() != 0) {
    for (cl_uint d = 0; d < dims && d < 3; ++d) {
      global[d] = launch.global_size(d);
      if (has_local) local[d] = launch.local_size(d);
    }
  }
  const size_t* local_or_null() const { return has_local ? local : nullptr; }
};

constexpr base::EnumNames<MeasurerOptions::Prefetch, 3> kPrefetchNames{
    {{{MeasurerOptions::Prefetch::kAuto, "auto"},
      {MeasurerOptions::Prefetch::kOn, "on"},
      {MeasurerOptions::Prefetch::kOff, "off"}}}};

}  // namespace

const char* PrefetchName(MeasurerOptions::Prefetch mode) {
  return kPrefetchNames.Name(mode, "auto");
}

MeasurerOptions::Prefetch ParsePrefetch(absl::string_view name) {
  return kPrefetchNames.Parse(name).value_or(MeasurerOptions::Prefetch::kAuto);
}

bool PrefetchEnabled(MeasurerOptions::Prefetch mode,
                     const tunefleet::v1::DeviceInfo& device) {
  return mode == MeasurerOptions::Prefetch::kOn ||
         (mode == MeasurerOptions::Prefetch::kAuto &&
          device.device_type() != "CPU");
}

RoundPlan PlanRounds(const TimingPolicy& policy, double first_launch_ns) {
  // A field left 0 reads as the default the server would have set.
  const TimingPolicy defaults = contract::DefaultTimingPolicy();
  RoundPlan plan;
  plan.warmup = policy.warmup();
  plan.repeat = policy.repeat() ? policy.repeat() : defaults.repeat();
  const uint32_t max_launches =
      policy.max_launches() ? policy.max_launches() : defaults.max_launches();
  plan.max_total_ns = (policy.max_total_ms() > 0 ? policy.max_total_ms()
                                                 : defaults.max_total_ms()) *
                      1e6;
  const double first = std::max(first_launch_ns, 1.0);

  // number: at least policy.number, raised until a round lasts min_repeat_ms,
  // then capped so that all rounds stay within both hard caps.
  double number = std::max<uint32_t>(policy.number(), 1);
  if (policy.min_repeat_ms() > 0) {
    number = std::max(number, std::ceil(policy.min_repeat_ms() * 1e6 / first));
  }
  number = std::min(
      number, std::floor(static_cast<double>(max_launches) / plan.repeat));
  number =
      std::min(number, std::floor(plan.max_total_ns / (first * plan.repeat)));
  plan.number = static_cast<uint32_t>(std::max(number, 1.0));
  return plan;
}

Measurement FailedMeasurement(Measurement::Error code,
                              absl::string_view message) {
  Measurement m;
  m.set_error(code);
  m.set_error_message(std::string(message));
  return m;
}

absl::Status CheckCompilable(const MeasureRequest& request) {
  const std::pair<const char*, const KernelLaunch*> launches[] = {
      {"kernel", &request.kernel()},
      {"reference kernel", &request.verification().reference()}};
  for (const auto& [what, launch] : launches) {
    if (launch->source().empty()) continue;
    if (absl::Status s = kernel_policy::CheckKernelSource(launch->source());
        !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " source refused: ", s.message()));
    }
    if (absl::Status s =
            kernel_policy::CheckBuildOptions(launch->build_options());
        !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

Measurement::Error MakeKernelError(const absl::Status& status) {
  return absl::IsFailedPrecondition(status) ? Measurement::INVALID_CONFIG
                                            : Measurement::COMPILE_ERROR;
}

absl::StatusOr<std::unique_ptr<Measurer>> Measurer::Create(
    opencl::ClDevice device, MeasurerOptions options) {
  cl_int err = CL_SUCCESS;
  const std::string source(FillSource());
  const char* text = source.c_str();
  const size_t length = source.size();
  opencl::ClProgram program(
      clCreateProgramWithSource(device.context.get(), 1, &text, &length, &err));
  if (err != CL_SUCCESS) return opencl::ClError("fill program", err);
  err = clBuildProgram(program.get(), 1, &device.device, "", nullptr, nullptr);
  if (err != CL_SUCCESS)
    return opencl::ClError("building the fill kernel", err);
  opencl::ClKernel fill_float(
      clCreateKernel(program.get(), "tunefleet_fill_uniform", &err));
  if (err != CL_SUCCESS) return opencl::ClError("fill kernel", err);
  opencl::ClKernel fill_half(
      clCreateKernel(program.get(), "tunefleet_fill_uniform_half", &err));
  if (err != CL_SUCCESS) return opencl::ClError("fp16 fill kernel", err);
  return std::make_unique<Measurer>(PrivateTag{}, std::move(device),
                                    std::move(program), std::move(fill_float),
                                    std::move(fill_half), std::move(options));
}

Measurer::Measurer(PrivateTag, opencl::ClDevice device,
                   opencl::ClProgram fill_program, opencl::ClKernel fill_float,
                   opencl::ClKernel fill_half, MeasurerOptions options)
    : device_(std::move(device)),
      info_(opencl::QueryDeviceInfo(device_.platform, device_.device)),
      fill_program_(std::move(fill_program)),
      fill_float_(std::move(fill_float)),
      fill_half_(std::move(fill_half)),
      programs_(device_.context.get(), device_.device,
                opencl::ProgramCache::Options{
                    .capacity = kProgramCacheCapacity,
                    .binary_dir = options.binary_cache_dir,
                    // Each trial hints its kernel and its reference.
                    .max_queued_prefetches = std::max<size_t>(
                        4, 2 * static_cast<size_t>(options.prefetch_threads)),
                    .prefetch_threads = options.prefetch_threads}),
      workloads_(
          device_.context.get(), device_.queue.get(), fill_float_.get(),
          fill_half_.get(),
          std::min<uint64_t>(info_.global_mem_bytes() / 2, uint64_t{8} << 30),
          kMaxWorkloads),
      images_(device_.context.get(), device_.device) {
  prefetch_ = PrefetchEnabled(options.prefetch, info_);
  if (!options.replay) {
    replay_unavailable_ = "turned off";
    return;
  }
  cl_command_queue_properties queue_properties = 0;
  clGetCommandQueueInfo(device_.queue.get(), CL_QUEUE_PROPERTIES,
                        sizeof(queue_properties), &queue_properties, nullptr);
  absl::StatusOr<opencl::CommandBufferApi> api = opencl::LoadCommandBufferApi(
      device_.platform, device_.device, queue_properties);
  if (api.ok()) {
    replay_api_ = *api;
  } else {
    replay_unavailable_ = std::string(api.status().message());
  }
}

void Measurer::Prefetch(const KernelLaunch& launch) {
  if (!prefetch_ || launch.source().empty()) return;
  programs_.Prefetch(launch.source(), launch.build_options());
}

void Measurer::Prefetch(const MeasureRequest& request) {
  Prefetch(request.kernel());
  Prefetch(request.verification().reference());
}

absl::StatusOr<opencl::ClEvent> Measurer::Enqueue(
    cl_kernel kernel, const KernelLaunch& launch,
    std::vector<opencl::ClEvent>* image_events) {
  if (absl::Status s = EnqueueImageRefresh(image_events); !s.ok()) return s;
  const NdRange range(launch);
  cl_event raw = nullptr;
  cl_int err = clEnqueueNDRangeKernel(device_.queue.get(), kernel, range.dims,
                                      nullptr, range.global,
                                      range.local_or_null(), 0, nullptr, &raw);
  if (err != CL_SUCCESS) return opencl::ClError("clEnqueueNDRangeKernel", err);
  return opencl::ClEvent(raw);
}

absl::StatusOr<double> Measurer::LaunchOnce(cl_kernel kernel,
                                            const KernelLaunch& launch) {
  std::vector<opencl::ClEvent> image_events;
  absl::StatusOr<opencl::ClEvent> event =
      Enqueue(kernel, launch, &image_events);
  if (!event.ok()) return event.status();
  cl_event raw = event->get();
  cl_int err = clWaitForEvents(1, &raw);
  if (err != CL_SUCCESS) return opencl::ClError("kernel execution", err);
  absl::StatusOr<double> ns = EventNs(raw);
  if (!ns.ok()) return ns.status();
  absl::StatusOr<double> image_ns = SumEventNs(image_events);
  if (!image_ns.ok()) return image_ns.status();
  return *ns + *image_ns;
}

absl::Status Measurer::PrepareImages(const KernelLaunch& launch,
                                     WorkloadState& state) {
  launch_images_.clear();
  for (const tunefleet::v1::KernelArg& arg : launch.args()) {
    if (arg.value_case() != tunefleet::v1::KernelArg::kImage) continue;
    const ImageKey key = KeyOf(arg.image());
    auto it = state.images.find(key);
    if (it == state.images.end()) {
      const tunefleet::v1::BufferSpec* spec =
          WorkloadBuffers::FindSpec(state, key.buffer);
      auto buffer = state.buffers.find(key.buffer);
      if (spec == nullptr || buffer == state.buffers.end()) {
        return CheckImageArg(arg.image(), nullptr, images_.caps()).status();
      }
      absl::StatusOr<WorkloadImage> image =
          images_.Make(arg.image(), *spec, buffer->second.get());
      if (!image.ok()) return image.status();
      if (absl::Status s = workloads_.Reserve(state, image->bytes()); !s.ok()) {
        return s;
      }
      it = state.images.emplace(key, *std::move(image)).first;
    }
    const WorkloadImage* image = &it->second;
    if (image->mode != ImageMode::kView &&
        std::find(launch_images_.begin(), launch_images_.end(), image) ==
            launch_images_.end()) {
      launch_images_.push_back(image);
    }
  }
  return absl::OkStatus();
}

absl::Status Measurer::EnqueueImageRefresh(
    std::vector<opencl::ClEvent>* events) {
  for (const WorkloadImage* image : launch_images_) {
    if (absl::Status s = images_.Refresh(device_.queue.get(), *image, events);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<opencl::ClKernel> Measurer::MakeKernel(
    const KernelLaunch& launch, WorkloadState& state, KernelInfo* info) {
  EnterPhase(MeasurePhase::kBuild);
  absl::StatusOr<opencl::ProgramCache::Built> built =
      programs_.Get(launch.source(), launch.build_options());
  if (!built.ok()) return built.status();
  if (info != nullptr) {
    info->compile_ms = built->compile_ms;
    info->source = SourceOf(built->origin);
  }
  cl_int err = CL_SUCCESS;
  opencl::ClKernel kernel(
      clCreateKernel(built->program.get(), launch.kernel_name().c_str(), &err));
  if (err != CL_SUCCESS) {
    return absl::InvalidArgumentError(
        absl::StrCat("clCreateKernel(", launch.kernel_name(),
                     "): ", opencl::ClErrorName(err)));
  }
  if (absl::Status s = SetArgs(kernel.get(), launch, state); !s.ok()) {
    return absl::FailedPreconditionError(s.message());
  }
  return kernel;
}

absl::Status Measurer::EnsureReference(WorkloadState& state,
                                       const MeasureRequest& request) {
  const tunefleet::v1::Verification& v = request.verification();
  if (state.reference_key == v.reference_key() && !v.reference_key().empty()) {
    return absl::OkStatus();
  }
  state.reference_key.clear();
  state.reference_outputs.clear();
  if (absl::Status s = CheckGeometry(v.reference(), info_); !s.ok()) return s;
  if (absl::Status s = PrepareImages(v.reference(), state); !s.ok()) return s;
  absl::StatusOr<opencl::ClKernel> kernel =
      MakeKernel(v.reference(), state, nullptr);
  if (!kernel.ok()) return kernel.status();
  EnterPhase(MeasurePhase::kRun);
  if (absl::Status s = workloads_.PoisonOutputs(state); !s.ok()) return s;
  if (absl::StatusOr<double> t = LaunchOnce(kernel->get(), v.reference());
      !t.ok()) {
    return t.status();
  }
  for (const tunefleet::v1::BufferSpec& spec : state.specs) {
    if (!spec.output()) continue;
    absl::StatusOr<std::vector<float>> out =
        workloads_.Read(state, spec.name());
    if (!out.ok()) return out.status();
    state.reference_outputs[spec.name()] = *std::move(out);
  }
  state.reference_key = v.reference_key();
  return absl::OkStatus();
}

Measurement Measurer::Measure(const MeasureRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  phase_ = MeasurePhase::kBuild;  // every trial starts there, unannounced
  // Sources and options this agent does not compile (docs/SECURITY.md),
  // refused before anything is built (ProgramCache::Build checks again).
  if (absl::Status s = CheckCompilable(request); !s.ok()) {
    return FailedMeasurement(Measurement::COMPILE_ERROR, s.message());
  }
  // A library call alone has no NDRange (library/library_trial.h).
  if (absl::Status s = IsLibraryOnly(request.kernel())
                           ? absl::OkStatus()
                           : CheckGeometry(request.kernel(), info_);
      !s.ok()) {
    return FailedMeasurement(Measurement::INVALID_CONFIG, s.message());
  }
  absl::StatusOr<WorkloadState*> state =
      workloads_.Get(request.workload_key(), request.buffers());
  if (!state.ok()) {
    return FailedMeasurement(absl::IsInvalidArgument(state.status())
                                 ? Measurement::INVALID_CONFIG
                                 : Measurement::RUNTIME_ERROR,
                             state.status().message());
  }
  if (absl::Status s = EnsureReference(**state, request); !s.ok()) {
    return FailedMeasurement(Measurement::RUNTIME_ERROR,
                             absl::StrCat("reference kernel: ", s.message()));
  }
  Measurement m = MeasureInState(**state, request);
  if (m.error() != Measurement::OK) {
    // A failed kernel may have written anywhere in its buffers.
    if (absl::Status s = workloads_.Refill(**state); !s.ok()) {
      m.set_error_message(
          absl::StrCat(m.error_message(), "; refilling inputs: ", s.message()));
    }
  }
  const double cooldown = request.timing().cooldown_ms();
  if (cooldown > 0) {
    std::this_thread::sleep_for(
        std::chrono::microseconds(static_cast<int64_t>(cooldown * 1000)));
  }
  m.set_wall_ms(base::MsSince(start));
  return m;
}

Measurement Measurer::MeasureInState(WorkloadState& state,
                                     const MeasureRequest& request) {
  const KernelLaunch& launch = request.kernel();
  if (absl::Status s = PrepareImages(launch, state); !s.ok()) {
    return FailedMeasurement(absl::IsInvalidArgument(s)
                                 ? Measurement::INVALID_CONFIG
                                 : Measurement::RUNTIME_ERROR,
                             s.message());
  }
  if (launch.has_library()) return MeasureLibraryTrial(state, request);
  KernelInfo kernel_info;
  absl::StatusOr<opencl::ClKernel> kernel =
      MakeKernel(launch, state, &kernel_info);
  if (!kernel.ok()) {
    return FailedMeasurement(MakeKernelError(kernel.status()),
                             kernel.status().message());
  }
  size_t kernel_wg = 0;
  clGetKernelWorkGroupInfo(kernel->get(), device_.device,
                           CL_KERNEL_WORK_GROUP_SIZE, sizeof(kernel_wg),
                           &kernel_wg, nullptr);
  Measurement m =
      MeasureBuiltKernel(kernel->get(), kernel_wg, kernel_info, state, request);
  m.set_kernel_work_group_limit(kernel_wg);
  return m;
}

Measurement Measurer::MeasureBuiltKernel(cl_kernel kernel, size_t kernel_wg,
                                         const KernelInfo& kernel_info,
                                         WorkloadState& state,
                                         const MeasureRequest& request) {
  const KernelLaunch& launch = request.kernel();
  cl_ulong kernel_local = 0;
  clGetKernelWorkGroupInfo(kernel, device_.device, CL_KERNEL_LOCAL_MEM_SIZE,
                           sizeof(kernel_local), &kernel_local, nullptr);
  uint64_t group = 1;
  for (uint64_t l : launch.local_size()) group *= l;
  if (kernel_wg != 0 && group > kernel_wg) {
    return FailedMeasurement(
        Measurement::INVALID_CONFIG,
        absl::StrCat("work-group of ", group,
                     " exceeds this kernel's maximum of ", kernel_wg,
                     " (CL_KERNEL_WORK_GROUP_SIZE)"));
  }
  if (kernel_local > info_.local_mem_bytes()) {
    return FailedMeasurement(
        Measurement::INVALID_CONFIG,
        absl::StrCat("kernel uses ", kernel_local,
                     " bytes of local memory; the device has ",
                     info_.local_mem_bytes()));
  }

  // Verification run (also the first warm-up launch).
  EnterPhase(MeasurePhase::kRun);
  if (absl::Status s = workloads_.PoisonOutputs(state); !s.ok()) {
    return FailedMeasurement(Measurement::RUNTIME_ERROR, s.message());
  }
  absl::StatusOr<double> first_ns = LaunchOnce(kernel, launch);
  if (!first_ns.ok()) {
    return FailedMeasurement(Measurement::RUNTIME_ERROR,
                             first_ns.status().message());
  }
  double rtol = 0;
  Measurement m = VerifiedOutput(state, request, kernel_info.compile_ms,
                                 kernel_info.source, &rtol);
  if (m.error() != Measurement::ERROR_UNSPECIFIED) return m;
  if (absl::Status s =
          Time(kernel, launch, request.timing(), *first_ns, rtol, state, &m);
      !s.ok()) {
    return FailedMeasurement(Measurement::RUNTIME_ERROR, s.message());
  }
  m.set_error(Measurement::OK);
  return m;
}

absl::Status Measurer::Time(cl_kernel kernel, const KernelLaunch& launch,
                            const TimingPolicy& policy, double first_launch_ns,
                            double rtol, WorkloadState& state,
                            Measurement* result) {
  const RoundPlan plan = PlanRounds(policy, first_launch_ns);
  const uint32_t repeat = plan.repeat;
  const uint32_t n = plan.number;
  const double max_total_ns = plan.max_total_ns;
  result->set_number(n);

  for (uint32_t w = 0; w < plan.warmup; ++w) {
    if (absl::StatusOr<double> t = LaunchOnce(kernel, launch); !t.ok()) {
      return t.status();
    }
  }
  last_timing_ = TimingStats{};
  // A round with image copies or packs is not replayed: the recorded
  // launches alone would not refresh the images.
  if (replay_api_.has_value() && launch_images_.empty()) {
    absl::Status replayed = TimeReplayed(kernel, launch, repeat, n,
                                         max_total_ns, rtol, state, result);
    if (replayed.ok()) {
      result->set_replayed(true);
      last_timing_.replayed = true;
      return absl::OkStatus();
    }
    // Whatever went wrong, the plain path still gives a valid measurement.
    ++replay_fallbacks_;
    result->clear_times_ns();
    last_timing_ = TimingStats{};
    last_timing_.replay_error = std::string(replayed.message());
  }
  return TimePlain(kernel, launch, repeat, n, max_total_ns, result);
}

Measurement Measurer::VerifiedOutput(WorkloadState& state,
                                     const MeasureRequest& request,
                                     double compile_ms,
                                     Measurement::ProgramSource source,
                                     double* rtol) {
  absl::StatusOr<double> worst_or = WorstOutputError(state);
  if (!worst_or.ok()) {
    return FailedMeasurement(Measurement::RUNTIME_ERROR,
                             worst_or.status().message());
  }
  const double worst = *worst_or;
  Measurement m;
  m.set_compile_ms(compile_ms);
  m.set_program_source(source);
  m.set_max_rel_error(std::isfinite(worst) ? worst : 1e308);
  *rtol =
      request.verification().rtol() > 0 ? request.verification().rtol() : 1e-4;
  if (!(worst <= *rtol)) {
    m.set_error(Measurement::WRONG_ANSWER);
    m.set_error_message(absl::StrFormat(
        "output differs from the reference: max relative error %g > %g", worst,
        *rtol));
  }
  return m;
}

absl::StatusOr<double> Measurer::WorstOutputError(WorkloadState& state) {
  double worst = 0;
  for (const auto& [name, reference] : state.reference_outputs) {
    absl::StatusOr<std::vector<float>> out = workloads_.Read(state, name);
    if (!out.ok()) return out.status();
    worst = std::max(worst, MaxRelativeError(*out, reference));
  }
  return worst;
}

absl::Status Measurer::TimeRounds(uint32_t repeat, uint32_t n,
                                  double max_total_ns, Measurement* result,
                                  Round round) {
  double total_ns = 0;
  double submit_ms = 0, wall_ms = 0;
  uint32_t rounds = 0;
  for (uint32_t r = 0; r < repeat; ++r) {
    if (r > 0 && total_ns > max_total_ns) break;  // hard cap on total time
    const auto round_start = std::chrono::steady_clock::now();
    absl::StatusOr<double> round_ns = round(round_start, &submit_ms);
    if (!round_ns.ok()) return round_ns.status();
    wall_ms += base::MsSince(round_start);
    ++rounds;
    total_ns += *round_ns;
    result->add_times_ns(*round_ns / n);
  }
  last_timing_.submit_ms_per_round = submit_ms / std::max(rounds, 1u);
  last_timing_.wall_ms_per_round = wall_ms / std::max(rounds, 1u);
  return absl::OkStatus();
}

absl::Status Measurer::TimePlain(cl_kernel kernel, const KernelLaunch& launch,
                                 uint32_t repeat, uint32_t n,
                                 double max_total_ns, Measurement* result) {
  double image_ns = 0;  // of the images' copies and packs, all rounds
  uint64_t launches = 0;
  absl::Status timed = TimeRounds(
      repeat, n, max_total_ns, result,
      [&](std::chrono::steady_clock::time_point round_start,
          double* submit_ms) -> absl::StatusOr<double> {
        std::vector<opencl::ClEvent> events, image_events;
        events.reserve(n);
        for (uint32_t i = 0; i < n; ++i) {
          absl::StatusOr<opencl::ClEvent> event =
              Enqueue(kernel, launch, &image_events);
          if (!event.ok()) return event.status();
          events.push_back(*std::move(event));
        }
        cl_int err = clFlush(device_.queue.get());
        *submit_ms += base::MsSince(round_start);
        err |= clFinish(device_.queue.get());
        if (err != CL_SUCCESS) return opencl::ClError("clFinish", err);
        absl::StatusOr<double> kernel_ns = SumEventNs(events);
        if (!kernel_ns.ok()) return kernel_ns.status();
        absl::StatusOr<double> round_image_ns = SumEventNs(image_events);
        if (!round_image_ns.ok()) return round_image_ns.status();
        image_ns += *round_image_ns;
        launches += n;
        return *kernel_ns + *round_image_ns;
      });
  if (timed.ok() && launches > 0) {
    result->set_pack_ns(image_ns / static_cast<double>(launches));
  }
  return timed;
}

absl::StatusOr<opencl::ClCommandBuffer> Measurer::RecordLaunches(
    cl_kernel kernel, const KernelLaunch& launch, uint32_t n) {
  const opencl::CommandBufferApi& api = *replay_api_;
  cl_command_queue queue = device_.queue.get();
  cl_int err = CL_SUCCESS;
  opencl::ClCommandBuffer buffer(api.create(1, &queue, nullptr, &err),
                                 api.release);
  if (err != CL_SUCCESS || buffer.get() == nullptr) {
    return opencl::ClError("clCreateCommandBufferKHR", err);
  }
  // Arguments are captured when a command is recorded (the kernel's are
  // set once in MakeKernel and not changed).
  const NdRange range(launch);
  for (uint32_t i = 0; i < n; ++i) {
    err = api.ndrange_kernel(buffer.get(), nullptr, nullptr, kernel, range.dims,
                             nullptr, range.global, range.local_or_null(), 0,
                             nullptr, nullptr, nullptr);
    if (err != CL_SUCCESS)
      return opencl::ClError("clCommandNDRangeKernelKHR", err);
  }
  err = api.finalize(buffer.get());
  if (err != CL_SUCCESS)
    return opencl::ClError("clFinalizeCommandBufferKHR", err);
  return buffer;
}

// The replay's own event should span its commands, but some
// implementations (PoCL 3.1) attach it to a trailing marker only: the
// replay is also bracketed by two markers on the in-order queue, and their
// END-to-END span is used when the event covers less than half of it.
absl::StatusOr<double> Measurer::ReplayRound(
    const opencl::ClCommandBuffer& buffer,
    std::chrono::steady_clock::time_point round_start, double* submit_ms) {
  cl_command_queue queue = device_.queue.get();
  cl_event raw_before = nullptr, raw = nullptr, raw_after = nullptr;
  cl_int err = clEnqueueMarkerWithWaitList(queue, 0, nullptr, &raw_before);
  opencl::ClEvent before(raw_before);
  if (err != CL_SUCCESS)
    return opencl::ClError("clEnqueueMarkerWithWaitList", err);
  err = replay_api_->enqueue(1, &queue, buffer.get(), 0, nullptr, &raw);
  if (err != CL_SUCCESS)
    return opencl::ClError("clEnqueueCommandBufferKHR", err);
  opencl::ClEvent event(raw);
  err = clEnqueueMarkerWithWaitList(queue, 0, nullptr, &raw_after);
  opencl::ClEvent after(raw_after);
  if (err != CL_SUCCESS)
    return opencl::ClError("clEnqueueMarkerWithWaitList", err);
  err = clFlush(queue);
  *submit_ms += base::MsSince(round_start);
  err |= clWaitForEvents(1, &raw_after);
  if (err != CL_SUCCESS)
    return opencl::ClError("replaying the command buffer", err);
  absl::StatusOr<double> event_ns = EventNs(raw);
  if (!event_ns.ok()) return event_ns.status();
  cl_ulong before_end = 0, after_end = 0;
  double round_ns = *event_ns;
  if (clGetEventProfilingInfo(raw_before, CL_PROFILING_COMMAND_END,
                              sizeof(before_end), &before_end,
                              nullptr) == CL_SUCCESS &&
      clGetEventProfilingInfo(raw_after, CL_PROFILING_COMMAND_END,
                              sizeof(after_end), &after_end,
                              nullptr) == CL_SUCCESS &&
      after_end > before_end) {
    const double bracket_ns = static_cast<double>(after_end - before_end);
    if (round_ns < 0.5 * bracket_ns) {
      round_ns = bracket_ns;
      last_timing_.replay_clock = "markers around the replay";
    } else {
      last_timing_.replay_clock = "command-buffer event";
    }
  }
  if (!(round_ns > 0)) {
    return absl::InternalError("the replay's profiling times are empty");
  }
  return round_ns;
}

absl::Status Measurer::TimeReplayed(cl_kernel kernel,
                                    const KernelLaunch& launch, uint32_t repeat,
                                    uint32_t n, double max_total_ns,
                                    double rtol, WorkloadState& state,
                                    Measurement* result) {
  const auto record_start = std::chrono::steady_clock::now();
  absl::StatusOr<opencl::ClCommandBuffer> buffer =
      RecordLaunches(kernel, launch, n);
  if (!buffer.ok()) return buffer.status();
  last_timing_.record_ms = base::MsSince(record_start);
  if (absl::Status s = workloads_.PoisonOutputs(state); !s.ok()) return s;
  absl::Status timed =
      TimeRounds(repeat, n, max_total_ns, result,
                 [&](std::chrono::steady_clock::time_point round_start,
                     double* submit_ms) {
                   return ReplayRound(*buffer, round_start, submit_ms);
                 });
  if (!timed.ok()) return timed;
  // Outputs were poisoned before the first replay: they must equal the
  // reference again, or the replay did not run the kernel as recorded.
  absl::StatusOr<double> error = WorstOutputError(state);
  if (!error.ok()) return error.status();
  if (!(*error <= rtol)) {
    return absl::InternalError(absl::StrFormat(
        "output after replay differs from the reference (%g > %g)", *error,
        rtol));
  }
  return absl::OkStatus();
}

}  // namespace tunefleet::measure
