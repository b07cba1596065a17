// Recording a model's commands once and replaying them per run (issue 36):
// the entry points of the two OpenCL recording extensions the model runtime
// (tunefleet_model.h) uses, and Recording, which records lists of kernel
// launches with one of them and replays them on a queue. Plain C++17 and
// the OpenCL 1.2 host API (copied into every emitted library).
//
// - cl_khr_command_buffer: each list becomes one command buffer, recorded
//   on a queue of the Model's own at load and replayed on the caller's
//   queue (queue substitution; a queue the driver refuses gets the lists
//   recorded again for it, once). Only the calls whose signature is the
//   same in every provisional version, 0.9.0 to 0.9.8, are used (create,
//   finalize, release, enqueue, clCommandNDRangeKernelKHR): image fills are
//   recorded as the packing kernel, not as a copy command.
//   cl_khr_command_buffer_mutable_dispatch (its array form of
//   clUpdateMutableCommandsKHR, versions 0.9.3 on) lets a replay rebind
//   kernel arguments (a RunBuffers input) instead of copying into them.
// - cl_qcom_recordable_queues (Adreno): each list becomes a recording
//   (clNewRecordingQCOM on a queue made with CL_QUEUE_RECORDABLE_QCOM, the
//   launches enqueued on it, clEndRecordingQCOM), replayed with
//   clEnqueueRecordingQCOM on the caller's queue with the changed
//   arguments. No such device has run this code (tests drive it through a
//   fake RecordingApi).
//
// Entry points come from clGetExtensionFunctionAddressForPlatform of the
// device's platform; the types are declared here (handles as void*), so
// that the runtime builds with OpenCL headers that lack the extensions.
#ifndef TUNEFLEET_MODEL_RUNTIME_RECORDING_H_
#define TUNEFLEET_MODEL_RUNTIME_RECORDING_H_

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tunefleet_tuned {

// Whether Load records the plan (ModelLoadOptions::record): never; always
// (Load fails, naming the missing extension, where the device cannot);
// where the device can.
enum class RecordMode { kOff = 0, kOn = 1, kAuto = 2 };

// The mechanism a Model's runs replay.
enum class RecordKind { kNone = 0, kKhrCommandBuffer = 1, kQcomRecording = 2 };

// "cl_khr_command_buffer", "cl_qcom_recordable_queues" or "none".
const char* RecordKindName(RecordKind kind);

// cl_qcom_recordable_queues' structures (Qualcomm's cl_ext_qcom.h).
struct QcomArrayArg {
  cl_uint dispatch_index;  // the launch's index in the recording
  cl_uint arg_index;
  size_t arg_size;
  const void* arg_value;
};
struct QcomOffset {
  cl_uint dispatch_index;
  size_t offsets[3];
};
struct QcomWorkgroup {
  cl_uint dispatch_index;
  const size_t* workgroup_size;
};
// cl_khr_command_buffer_mutable_dispatch's structures (array form).
struct KhrMutableArg {
  cl_uint arg_index;
  size_t arg_size;
  const void* arg_value;
};
struct KhrMutableDispatchConfig {
  void* command;  // cl_mutable_command_khr
  cl_uint num_args;
  cl_uint num_svm_args;
  cl_uint num_exec_infos;
  cl_uint work_dim;
  const KhrMutableArg* arg_list;
  const KhrMutableArg* arg_svm_list;
  const void* exec_info_list;
  const size_t* global_work_offset;
  const size_t* global_work_size;
  const size_t* local_work_size;
};

// The queue property that makes a queue recordable (cl_qcom_recordable_
// queues), and the extensions' enums the runtime passes.
inline constexpr cl_command_queue_properties kQueueRecordableQcom =
    cl_command_queue_properties{1} << 30;
inline constexpr cl_ulong kCommandBufferFlagsKhr = 0x1293;
inline constexpr cl_ulong kCommandBufferMutableKhr = cl_ulong{1} << 1;
inline constexpr cl_ulong kMutableDispatchUpdatableFieldsKhr = 0x12B1;
inline constexpr cl_ulong kMutableDispatchArgumentsKhr = cl_ulong{1} << 3;
inline constexpr cl_uint kStructureTypeMutableDispatchConfigKhr = 0;
inline constexpr cl_int kIncompatibleCommandQueueKhr = -1140;

// The entry points and what the device lists. A test gives Load a fake one
// (ModelLoadOptions::recording_api).
struct RecordingApi {
  // cl_khr_command_buffer.
  void*(CL_API_CALL* create_command_buffer)(cl_uint num_queues,
                                            const cl_command_queue* queues,
                                            const cl_ulong* properties,
                                            cl_int* errcode_ret) = nullptr;
  cl_int(CL_API_CALL* finalize_command_buffer)(void* command_buffer) = nullptr;
  cl_int(CL_API_CALL* release_command_buffer)(void* command_buffer) = nullptr;
  cl_int(CL_API_CALL* enqueue_command_buffer)(
      cl_uint num_queues, cl_command_queue* queues, void* command_buffer,
      cl_uint num_events, const cl_event* wait_list, cl_event* event) = nullptr;
  cl_int(CL_API_CALL* command_ndrange_kernel)(
      void* command_buffer, cl_command_queue queue, const cl_ulong* properties,
      cl_kernel kernel, cl_uint work_dim, const size_t* global_offset,
      const size_t* global_size, const size_t* local_size,
      cl_uint num_sync_points, const cl_uint* sync_points, cl_uint* sync_point,
      void** mutable_handle) = nullptr;
  // cl_khr_command_buffer_mutable_dispatch (array form).
  cl_int(CL_API_CALL* update_mutable_commands)(void* command_buffer,
                                               cl_uint num_configs,
                                               const cl_uint* config_types,
                                               const void** configs) = nullptr;
  // cl_qcom_recordable_queues.
  void*(CL_API_CALL* new_recording)(cl_command_queue queue,
                                    cl_int* errcode_ret) = nullptr;
  cl_int(CL_API_CALL* end_recording)(void* recording) = nullptr;
  cl_int(CL_API_CALL* release_recording)(void* recording) = nullptr;
  cl_int(CL_API_CALL* enqueue_recording)(
      cl_command_queue queue, void* recording, size_t num_args,
      const QcomArrayArg* args, size_t num_offsets, const QcomOffset* offsets,
      size_t num_global, const QcomWorkgroup* global, size_t num_local,
      const QcomWorkgroup* local, cl_uint num_events, const cl_event* wait_list,
      cl_event* event) = nullptr;
  // Makes the queue a QCOM recording is made on (default: clCreateCommand
  // Queue with kQueueRecordableQcom); tests give a plain queue.
  cl_command_queue (*create_recordable_queue)(cl_context context,
                                              cl_device_id device,
                                              cl_int* errcode_ret) = nullptr;

  // The device's CL_DEVICE_EXTENSIONS.
  std::string extensions;
  // Usable: listed, and every entry point above of the extension found.
  bool khr = false;
  bool khr_mutable = false;  // also arguments updatable (capabilities)
  bool qcom = false;
  // Versions from CL_DEVICE_EXTENSIONS_WITH_VERSION ("0.9.0"; "" where the
  // device does not say).
  std::string khr_version, khr_mutable_version;
  // CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR.
  cl_command_queue_properties khr_queue_properties = 0;
  // Why an extension the device lists is not usable ("" when all are).
  std::string unusable;
};

// The recording API of `device`: its extensions, versions and entry points
// (clGetExtensionFunctionAddressForPlatform of CL_DEVICE_PLATFORM).
RecordingApi LoadRecordingApi(cl_device_id device);

// Which mechanism `api` offers (KHR before QCOM), and in *why the reason
// when none: "the device lists neither cl_khr_command_buffer nor
// cl_qcom_recordable_queues", or why a listed one cannot be used.
RecordKind ChooseRecordKind(const RecordingApi& api, std::string* why);

// One launch of a recorded list, as the Model set it up at load (its
// kernel object is the launch's own: arguments are set once and never
// changed, which recording relies on; PoCL 3.1 reads a kernel's arguments
// at replay, not at record).
struct RecordedLaunch {
  cl_kernel kernel = nullptr;
  cl_uint work_dims = 1;
  const size_t* global = nullptr;  // work_dims values
  const size_t* local = nullptr;   // null: the driver chooses
  // Arguments a replay may rebind (a graph input's buffer): their indices
  // and the buffers they are bound to when recorded.
  struct Rebindable {
    cl_uint arg = 0;
    cl_mem recorded = nullptr;
  };
  std::vector<Rebindable> rebindable;
};

// An argument rebound for one replay: launch `launch` of the list, argument
// `arg` set to `buffer`.
struct Rebind {
  size_t launch = 0;
  cl_uint arg = 0;
  cl_mem buffer = nullptr;
};

// Lists of launches recorded once, replayed per run. Not thread-safe: the
// Model serializes its runs.
class Recording {
 public:
  // Records `lists` (each launch list in order; the pointers must outlive
  // the Recording) with `kind`. Errors: the extension call's OpenCL code,
  // with the reason in *error.
  static cl_int Create(const RecordingApi& api, RecordKind kind,
                       cl_context context, cl_device_id device,
                       std::vector<std::vector<RecordedLaunch>> lists,
                       std::unique_ptr<Recording>* out, std::string* error);
  ~Recording();
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  RecordKind kind() const { return kind_; }
  size_t lists() const { return lists_.size(); }
  // Whether Replay can rebind arguments (QCOM always; KHR with mutable
  // dispatch); without it the caller copies into the recorded buffers.
  bool can_rebind() const { return can_rebind_; }

  // Enqueues list `list` on `queue` (an in-order queue of the context and
  // device) with `rebinds` (only where can_rebind()). Returns once it is
  // enqueued. Errors: the OpenCL code, with the reason in *error.
  cl_int Replay(size_t list, cl_command_queue queue,
                const std::vector<Rebind>& rebinds, std::string* error);

 private:
  struct List;
  Recording() = default;
  cl_int RecordKhr(cl_command_queue queue, std::string* error);
  cl_int RecordQcom(std::string* error);

  RecordingApi api_;
  RecordKind kind_ = RecordKind::kNone;
  cl_context context_ = nullptr;
  cl_device_id device_ = nullptr;
  bool can_rebind_ = false;
  // KHR: the queue the lists were recorded for (the Model's own at load, a
  // caller's after a refused substitution) and its properties.
  cl_command_queue record_queue_ = nullptr;
  cl_command_queue_properties record_properties_ = 0;
  std::vector<std::vector<RecordedLaunch>> launches_;
  std::vector<std::unique_ptr<List>> lists_;
};

}  // namespace tunefleet_tuned

#endif  // TUNEFLEET_MODEL_RUNTIME_RECORDING_H_
