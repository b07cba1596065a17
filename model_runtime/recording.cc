// Recording (recording.h): the recording extensions' entry points and the
// lists of launches recorded with them.
#include "recording.h"

#include <cstddef>
#include <cstring>
#include <iterator>
#include <sstream>
#include <type_traits>
#include <utility>

#include "cl_objects.h"

namespace tunefleet_tuned {
namespace {

// CL_DEVICE_EXTENSIONS_WITH_VERSION (OpenCL 3.0) and its items
// (cl_name_version), declared here for OpenCL 1.2 headers.
constexpr cl_device_info kDeviceExtensionsWithVersion = 0x1060;
struct NameVersion {
  cl_uint version;
  char name[64];
};
constexpr cl_device_info kDeviceCommandBufferRequiredQueueProperties = 0x12AA;
constexpr cl_device_info kDeviceMutableDispatchCapabilities = 0x12B0;

using internal::DeviceText;

bool Listed(const std::string& extensions, const char* name) {
  std::istringstream in(extensions);
  std::string word;
  while (in >> word) {
    if (word == name) return true;
  }
  return false;
}

// "0.9.3" of a cl_version (CL_MAKE_VERSION: 10 bits major... as 3.0 packs
// it), or "" when the device does not list `name` with a version.
std::string VersionOf(cl_device_id device, const char* name, cl_uint* out) {
  *out = 0;
  size_t size = 0;
  if (clGetDeviceInfo(device, kDeviceExtensionsWithVersion, 0, nullptr,
                      &size) != CL_SUCCESS ||
      size < sizeof(NameVersion)) {
    return "";
  }
  std::vector<NameVersion> items(size / sizeof(NameVersion));
  if (clGetDeviceInfo(device, kDeviceExtensionsWithVersion,
                      items.size() * sizeof(NameVersion), items.data(),
                      nullptr) != CL_SUCCESS) {
    return "";
  }
  for (const NameVersion& item : items) {
    if (std::strncmp(item.name, name, sizeof(item.name)) != 0) continue;
    *out = item.version;
    return std::to_string(item.version >> 22) + "." +
           std::to_string((item.version >> 12) & 0x3ff) + "." +
           std::to_string(item.version & 0xfff);
  }
  return "";
}

constexpr cl_uint MakeVersion(cl_uint major, cl_uint minor, cl_uint patch) {
  return (major << 22) | (minor << 12) | patch;
}

cl_command_queue CreateRecordableQueue(cl_context context, cl_device_id device,
                                       cl_int* errcode_ret) {
  return clCreateCommandQueue(context, device, kQueueRecordableQcom,
                              errcode_ret);
}

std::string Code(cl_int code) { return "OpenCL error " + std::to_string(code); }

cl_int Fail(cl_int code, const std::string& message, std::string* error) {
  if (error != nullptr) *error = message;
  return code;
}

}  // namespace

const char* RecordKindName(RecordKind kind) {
  // Indexed by the enum's value (0, 1, 2: recording.h fixes them).
  constexpr const char* kNames[] = {"none", "cl_khr_command_buffer",
                                    "cl_qcom_recordable_queues"};
  const auto i = static_cast<size_t>(kind);
  return i < std::size(kNames) ? kNames[i] : "none";
}

RecordingApi LoadRecordingApi(cl_device_id device) {
  RecordingApi api;
  api.extensions = DeviceText(device, CL_DEVICE_EXTENSIONS);
  cl_platform_id platform = nullptr;
  if (clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof(platform), &platform,
                      nullptr) != CL_SUCCESS) {
    api.unusable = "CL_DEVICE_PLATFORM cannot be read";
    return api;
  }
  // Sets *entry to the platform's `name` (null when not exported); true
  // when exported.
  auto load = [platform](auto* entry, const char* name) {
    *entry = reinterpret_cast<std::remove_pointer_t<decltype(entry)>>(
        clGetExtensionFunctionAddressForPlatform(platform, name));
    return *entry != nullptr;
  };
  std::string unusable;
  // Notes that the platform lacks entry points of `extension`.
  auto not_exported = [&unusable](const char* extension_s) {
    unusable += std::string("the platform does not export ") + extension_s +
                " entry points; ";
  };
  if (Listed(api.extensions, "cl_khr_command_buffer")) {
    cl_uint version = 0;
    api.khr_version = VersionOf(device, "cl_khr_command_buffer", &version);
    // `&`, not `&&`: every entry point is looked up.
    api.khr = load(&api.create_command_buffer, "clCreateCommandBufferKHR") &
              load(&api.finalize_command_buffer, "clFinalizeCommandBufferKHR") &
              load(&api.release_command_buffer, "clReleaseCommandBufferKHR") &
              load(&api.enqueue_command_buffer, "clEnqueueCommandBufferKHR") &
              load(&api.command_ndrange_kernel, "clCommandNDRangeKernelKHR");
    if (!api.khr) not_exported("cl_khr_command_buffer's");
    cl_command_queue_properties required = 0;
    if (clGetDeviceInfo(device, kDeviceCommandBufferRequiredQueueProperties,
                        sizeof(required), &required, nullptr) == CL_SUCCESS) {
      api.khr_queue_properties = required;
    }
    if (Listed(api.extensions, "cl_khr_command_buffer_mutable_dispatch")) {
      cl_uint mutable_version = 0;
      api.khr_mutable_version = VersionOf(
          device, "cl_khr_command_buffer_mutable_dispatch", &mutable_version);
      cl_ulong caps = 0;
      clGetDeviceInfo(device, kDeviceMutableDispatchCapabilities, sizeof(caps),
                      &caps, nullptr);
      load(&api.update_mutable_commands, "clUpdateMutableCommandsKHR");
      if (mutable_version < MakeVersion(0, 9, 3)) {
        // Before 0.9.3 clUpdateMutableCommandsKHR took a linked list of
        // configs; the runtime calls the array form only.
        unusable +=
            "cl_khr_command_buffer_mutable_dispatch " +
            (api.khr_mutable_version.empty() ? std::string("of unknown version")
                                             : api.khr_mutable_version) +
            " predates the array form of clUpdateMutableCommandsKHR "
            "(0.9.3): inputs are copied; ";
      } else if ((caps & kMutableDispatchArgumentsKhr) == 0) {
        unusable +=
            "cl_khr_command_buffer_mutable_dispatch cannot update "
            "arguments: inputs are copied; ";
      } else if (api.update_mutable_commands == nullptr) {
        unusable += "clUpdateMutableCommandsKHR is not exported; ";
      } else {
        api.khr_mutable = api.khr;
      }
    }
  }
  if (Listed(api.extensions, "cl_qcom_recordable_queues")) {
    api.create_recordable_queue = &CreateRecordableQueue;
    api.qcom = load(&api.new_recording, "clNewRecordingQCOM") &
               load(&api.end_recording, "clEndRecordingQCOM") &
               load(&api.release_recording, "clReleaseRecordingQCOM") &
               load(&api.enqueue_recording, "clEnqueueRecordingQCOM");
    if (!api.qcom) not_exported("cl_qcom_recordable_queues'");
  }
  if (unusable.size() >= 2) unusable.resize(unusable.size() - 2);
  api.unusable = unusable;
  return api;
}

RecordKind ChooseRecordKind(const RecordingApi& api, std::string* why) {
  if (api.khr) return RecordKind::kKhrCommandBuffer;
  if (api.qcom && api.create_recordable_queue != nullptr) {
    return RecordKind::kQcomRecording;
  }
  if (why != nullptr) {
    *why = api.unusable.empty()
               ? "the device lists neither cl_khr_command_buffer nor "
                 "cl_qcom_recordable_queues"
               : api.unusable;
  }
  return RecordKind::kNone;
}

// One recorded list: its command buffer or recording, and (KHR mutable)
// the launches' mutable handles and the buffers they are bound to now.
struct Recording::List {
  void* handle = nullptr;
  std::vector<void*> mutable_handles;  // per launch; null: not mutable
  std::vector<Rebind> bound;           // rebinds in effect (KHR)
  cl_event last = nullptr;             // the last replay (KHR mutable)
};

cl_int Recording::Create(const RecordingApi& api, RecordKind kind,
                         cl_context context, cl_device_id device,
                         std::vector<std::vector<RecordedLaunch>> lists,
                         std::unique_ptr<Recording>* out, std::string* error) {
  std::unique_ptr<Recording> r(new Recording());
  r->api_ = api;
  r->kind_ = kind;
  r->context_ = context;
  r->device_ = device;
  r->launches_ = std::move(lists);
  cl_int err = CL_SUCCESS;
  if (kind == RecordKind::kKhrCommandBuffer) {
    r->can_rebind_ = api.khr_mutable;
    r->record_properties_ = api.khr_queue_properties;
    r->record_queue_ =
        clCreateCommandQueue(context, device, r->record_properties_, &err);
    if (err != CL_SUCCESS) {
      r->record_queue_ = nullptr;
      return Fail(err, "a queue to record on: " + Code(err), error);
    }
    err = r->RecordKhr(r->record_queue_, error);
  } else if (kind == RecordKind::kQcomRecording) {
    r->can_rebind_ = true;
    err = r->RecordQcom(error);
  } else {
    return Fail(CL_INVALID_VALUE, "no recording extension", error);
  }
  if (err != CL_SUCCESS) return err;
  *out = std::move(r);
  return CL_SUCCESS;
}

Recording::~Recording() {
  for (auto& list : lists_) {
    if (list->last != nullptr) clReleaseEvent(list->last);
    if (list->handle == nullptr) continue;
    if (kind_ == RecordKind::kKhrCommandBuffer) {
      api_.release_command_buffer(list->handle);
    } else {
      api_.release_recording(list->handle);
    }
  }
  if (record_queue_ != nullptr) clReleaseCommandQueue(record_queue_);
}

cl_int Recording::RecordKhr(cl_command_queue queue, std::string* error) {
  for (auto& list : lists_) {
    if (list->last != nullptr) clReleaseEvent(list->last);
    if (list->handle != nullptr) api_.release_command_buffer(list->handle);
  }
  lists_.clear();
  const cl_ulong mutable_buffer[] = {kCommandBufferFlagsKhr,
                                     kCommandBufferMutableKhr, 0};
  const cl_ulong mutable_args[] = {kMutableDispatchUpdatableFieldsKhr,
                                   kMutableDispatchArgumentsKhr, 0};
  for (size_t l = 0; l < launches_.size(); ++l) {
    auto list = std::make_unique<List>();
    cl_int err = CL_SUCCESS;
    list->handle = api_.create_command_buffer(
        1, &queue, can_rebind_ ? mutable_buffer : nullptr, &err);
    if (err != CL_SUCCESS || list->handle == nullptr) {
      return Fail(err != CL_SUCCESS ? err : CL_OUT_OF_RESOURCES,
                  "clCreateCommandBufferKHR: " + Code(err), error);
    }
    const std::vector<RecordedLaunch>& launches = launches_[l];
    list->mutable_handles.assign(launches.size(), nullptr);
    for (size_t i = 0; i < launches.size(); ++i) {
      for (const RecordedLaunch::Rebindable& r : launches[i].rebindable) {
        list->bound.push_back(Rebind{i, r.arg, r.recorded});
      }
    }
    for (size_t i = 0; i < launches.size(); ++i) {
      const RecordedLaunch& x = launches[i];
      const bool rebindable = can_rebind_ && !x.rebindable.empty();
      err = api_.command_ndrange_kernel(
          list->handle, nullptr, rebindable ? mutable_args : nullptr, x.kernel,
          x.work_dims, nullptr, x.global, x.local, 0, nullptr, nullptr,
          rebindable ? &list->mutable_handles[i] : nullptr);
      if (err != CL_SUCCESS) {
        api_.release_command_buffer(list->handle);
        return Fail(err,
                    "clCommandNDRangeKernelKHR (launch " + std::to_string(i) +
                        " of list " + std::to_string(l) + "): " + Code(err),
                    error);
      }
    }
    err = api_.finalize_command_buffer(list->handle);
    if (err != CL_SUCCESS) {
      api_.release_command_buffer(list->handle);
      return Fail(err, "clFinalizeCommandBufferKHR: " + Code(err), error);
    }
    lists_.push_back(std::move(list));
  }
  return CL_SUCCESS;
}

cl_int Recording::RecordQcom(std::string* error) {
  cl_int err = CL_SUCCESS;
  record_queue_ = api_.create_recordable_queue(context_, device_, &err);
  if (err != CL_SUCCESS || record_queue_ == nullptr) {
    record_queue_ = nullptr;
    return Fail(err != CL_SUCCESS ? err : CL_INVALID_QUEUE_PROPERTIES,
                "a queue with CL_QUEUE_RECORDABLE_QCOM: " + Code(err), error);
  }
  for (size_t l = 0; l < launches_.size(); ++l) {
    auto list = std::make_unique<List>();
    list->handle = api_.new_recording(record_queue_, &err);
    if (err != CL_SUCCESS || list->handle == nullptr) {
      return Fail(err != CL_SUCCESS ? err : CL_OUT_OF_RESOURCES,
                  "clNewRecordingQCOM: " + Code(err), error);
    }
    lists_.push_back(std::move(list));
    for (const RecordedLaunch& x : launches_[l]) {
      err =
          clEnqueueNDRangeKernel(record_queue_, x.kernel, x.work_dims, nullptr,
                                 x.global, x.local, 0, nullptr, nullptr);
      if (err != CL_SUCCESS) {
        return Fail(err,
                    "recording a launch (clEnqueueNDRangeKernel): " + Code(err),
                    error);
      }
    }
    err = api_.end_recording(lists_.back()->handle);
    if (err != CL_SUCCESS) {
      return Fail(err, "clEndRecordingQCOM: " + Code(err), error);
    }
  }
  return CL_SUCCESS;
}

cl_int Recording::Replay(size_t index, cl_command_queue queue,
                         const std::vector<Rebind>& rebinds,
                         std::string* error) {
  if (index >= lists_.size()) {
    return Fail(CL_INVALID_VALUE, "no recorded list " + std::to_string(index),
                error);
  }
  if (!rebinds.empty() && !can_rebind_) {
    return Fail(CL_INVALID_OPERATION, "this recording cannot rebind arguments",
                error);
  }
  if (kind_ == RecordKind::kQcomRecording) {
    std::vector<QcomArrayArg> args;
    args.reserve(rebinds.size());
    for (const Rebind& r : rebinds) {
      args.push_back(QcomArrayArg{static_cast<cl_uint>(r.launch), r.arg,
                                  sizeof(cl_mem), &r.buffer});
    }
    const cl_int err =
        api_.enqueue_recording(queue, lists_[index]->handle, args.size(),
                               args.empty() ? nullptr : args.data(), 0, nullptr,
                               0, nullptr, 0, nullptr, 0, nullptr, nullptr);
    if (err != CL_SUCCESS) {
      return Fail(err, "clEnqueueRecordingQCOM: " + Code(err), error);
    }
    return CL_SUCCESS;
  }

  List* list = lists_[index].get();
  if (can_rebind_ && !rebinds.empty()) {
    // Update the launches whose binding changes (a mutable command buffer
    // must not be pending while it is updated: wait for its last replay).
    std::vector<KhrMutableArg> args;
    std::vector<KhrMutableDispatchConfig> configs;
    args.reserve(rebinds.size());
    configs.reserve(rebinds.size());
    for (const Rebind& r : rebinds) {
      bool same = false;
      for (const Rebind& b : list->bound) {
        same = same ||
               (b.launch == r.launch && b.arg == r.arg && b.buffer == r.buffer);
      }
      if (same) continue;
      if (r.launch >= list->mutable_handles.size() ||
          list->mutable_handles[r.launch] == nullptr) {
        return Fail(CL_INVALID_VALUE,
                    "launch " + std::to_string(r.launch) +
                        " was not recorded as mutable",
                    error);
      }
      args.push_back(KhrMutableArg{r.arg, sizeof(cl_mem), &r.buffer});
      KhrMutableDispatchConfig c{};
      c.command = list->mutable_handles[r.launch];
      c.num_args = 1;
      configs.push_back(c);
    }
    if (!configs.empty()) {
      for (size_t i = 0; i < configs.size(); ++i)
        configs[i].arg_list = &args[i];
      if (list->last != nullptr) {
        clWaitForEvents(1, &list->last);
        clReleaseEvent(list->last);
        list->last = nullptr;
      }
      std::vector<cl_uint> types(configs.size(),
                                 kStructureTypeMutableDispatchConfigKhr);
      std::vector<const void*> pointers;
      for (const KhrMutableDispatchConfig& c : configs) pointers.push_back(&c);
      const cl_int err = api_.update_mutable_commands(
          list->handle, static_cast<cl_uint>(configs.size()), types.data(),
          pointers.data());
      if (err != CL_SUCCESS) {
        return Fail(err, "clUpdateMutableCommandsKHR: " + Code(err), error);
      }
      for (const Rebind& r : rebinds) {
        bool replaced = false;
        for (Rebind& b : list->bound) {
          if (b.launch == r.launch && b.arg == r.arg) {
            b.buffer = r.buffer;
            replaced = true;
          }
        }
        if (!replaced) list->bound.push_back(r);
      }
    }
  }
  cl_event* event = nullptr;
  if (can_rebind_) {
    if (list->last != nullptr) clReleaseEvent(list->last);
    list->last = nullptr;
    event = &list->last;
  }
  cl_int err = CL_SUCCESS;
  if (queue == record_queue_) {
    err = api_.enqueue_command_buffer(0, nullptr, list->handle, 0, nullptr,
                                      event);
  } else {
    cl_command_queue q = queue;
    err = api_.enqueue_command_buffer(1, &q, list->handle, 0, nullptr, event);
    if (err != CL_SUCCESS) {
      // The driver does not run the lists on this queue (other properties:
      // CL_INCOMPATIBLE_COMMAND_QUEUE_KHR): record them again for it, once.
      cl_int retain = clRetainCommandQueue(queue);
      if (retain != CL_SUCCESS) {
        return Fail(err, "clEnqueueCommandBufferKHR: " + Code(err), error);
      }
      if (record_queue_ != nullptr) clReleaseCommandQueue(record_queue_);
      record_queue_ = queue;
      clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES,
                            sizeof(record_properties_), &record_properties_,
                            nullptr);
      err = RecordKhr(queue, error);
      if (err != CL_SUCCESS) return err;
      // Now queue == record_queue_: the rebinds apply to the new lists.
      return Replay(index, queue, rebinds, error);
    }
  }
  if (err != CL_SUCCESS) {
    return Fail(err, "clEnqueueCommandBufferKHR: " + Code(err), error);
  }
  return CL_SUCCESS;
}

}  // namespace tunefleet_tuned
