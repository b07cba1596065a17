// tunefleet_tuned::Model: runs a whole model on one OpenCL device from a
// plan (model_plan.h) that `tunefleet emit --onnx` wrote for the device's
// key (docs/MODEL_RUNTIME.md). Plain C++17 and the OpenCL 1.2 host API;
// the same files serve the emitted library, tunefleet-agent and the
// tunefleet CLI.
//
//   std::unique_ptr<tunefleet_tuned::Model> model;
//   std::string error;
//   cl_int err = tunefleet_tuned::Model::Load(context, device,
//       "plans/<key>/model.tfplan", "plans/<key>/model.tfweights", {},
//       &model, &error);
//   const float* in[] = {image};           // model->inputs() in order
//   float* out[] = {scores};               // model->outputs() in order
//   err = model->Run(queue, in, 1, out, 1, &error);
//
// Load builds every program once, allocates one arena for every tensor
// (the plan's memory plan: tensors whose lifetimes do not overlap share
// bytes), one buffer of weights and the images some kernels read, creates
// every kernel and sets its arguments once. Run copies the inputs in,
// enqueues the plan's commands (no allocation, no program build, no
// argument setting: a run only enqueues) and reads the outputs back.
//
// Errors are cl_int status codes: CL_SUCCESS, an OpenCL error, a plan
// code of plan_format.h (kPlan*), or one of the kModel* codes below; every
// call that can fail takes a `std::string* error` that, when not null,
// receives the reason in words.
//
// Thread-safety: Load may run on several threads at once (each makes its
// own Model). One Model's Run, RunProfiled and RunBuffers calls serialize
// on a mutex of that Model (it has one arena and one set of kernels), so
// two threads may call them but they run one after the other; give each
// thread its own Model to run in parallel. The accessors (Describe,
// inputs, layers, ...) are const and may be called from any thread at any
// time. A Model must outlive the commands its runs enqueued (each Run
// waits for them before it returns) and its context.
#ifndef TUNEFLEET_MODEL_RUNTIME_TUNEFLEET_MODEL_H_
#define TUNEFLEET_MODEL_RUNTIME_TUNEFLEET_MODEL_H_

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model_plan.h"
#include "plan_format.h"
#include "recording.h"

namespace tunefleet_tuned {

// Status codes of Model beyond OpenCL's and the plan's (plan_format.h).
// Inputs or outputs: a wrong count, a null pointer, or (RunBuffers) a
// buffer smaller than the tensor.
inline constexpr cl_int kModelBadArguments = -3020;
// A step calls a vendor library (CLBlast) that no LibraryCalls given to
// Load can call.
inline constexpr cl_int kModelLibraryMissing = -3021;
// The device is not the one the plan was tuned on (its CL_DEVICE_NAME),
// or cannot hold the plan (an arena above CL_DEVICE_MAX_MEM_ALLOC_SIZE).
inline constexpr cl_int kModelOtherDevice = -3022;
// A queue of another context or device than the Model's, or (RunProfiled)
// one without CL_QUEUE_PROFILING_ENABLE.
inline constexpr cl_int kModelBadQueue = -3023;
// Recording was asked for (RecordMode::kOn, SetReplay(true)) where the
// device cannot record: the message names the missing extension.
inline constexpr cl_int kModelCannotRecord = -3024;

// One argument of a library call as the runtime resolved it.
struct LibraryArgument {
  enum Kind { kInteger, kFloat, kBuffer };
  Kind kind = kInteger;
  long long integer = 0;
  double real = 0;
  cl_mem buffer = nullptr;  // a sub-buffer of the arena or the weights
  uint64_t elements = 0;    // kBuffer: fp32 elements it holds
};

// The vendor libraries a process can call for a plan's library steps
// (tunefleet's agent: its library backends; an emitted library: the
// libraries it was linked with). Calls come from Load (Has) and from the
// thread running a Model (Enqueue), one at a time per Model.
class LibraryCalls {
 public:
  virtual ~LibraryCalls() = default;
  // Whether `routine` of `library` ("clblast", "gemm") can be called.
  virtual bool Has(const std::string& library,
                   const std::string& routine) const = 0;
  // Enqueues the routine with `args` (in the order tunefleet's agent
  // documents: library_backends/library.h) on `queue`. `done`, when
  // not null, receives an event that ends after the call's last command
  // (the caller releases it). Returns CL_SUCCESS or an error code, with
  // the reason in *error.
  virtual cl_int Enqueue(const std::string& library, const std::string& routine,
                         const std::vector<LibraryArgument>& args,
                         cl_command_queue queue, cl_event* done,
                         std::string* error) = 0;
};

struct ModelLoadOptions {
  // Not empty: refuse (kPlanOtherModel) a plan of another model: the
  // SHA-256 of the ONNX bytes, 64 hex digits.
  std::string model_sha256;
  // Not empty: refuse (kPlanOtherDevice) a plan of another device key.
  std::string device_key;
  // Refuse (kModelOtherDevice) a device whose CL_DEVICE_NAME is not the
  // plan's: its kernels were tuned, and their work-group sizes checked,
  // for that device.
  bool check_device_name = true;
  // The libraries the plan's library steps call; null: none (a plan with
  // library steps is refused with kModelLibraryMissing). Not owned; must
  // outlive the Model.
  LibraryCalls* library = nullptr;
  // Recording (recording.h, issue 36): kAuto records the whole plan at
  // load where the device lists cl_khr_command_buffer or
  // cl_qcom_recordable_queues, and runs replay it; kOn fails with
  // kModelCannotRecord, naming the missing extension, where it cannot;
  // kOff never records (every run enqueues each command).
  RecordMode record = RecordMode::kAuto;
  // Tests: the extensions' entry points and what the device lists, in
  // place of the device's (LoadRecordingApi). Not owned; copied at Load.
  const RecordingApi* recording_api = nullptr;
  // Tensors read through an image2d_t (issue 36, "plans that move less"):
  // true views the tensor's own memory as the image where the device lists
  // cl_khr_image2d_from_buffer (OpenCL 3.0 spec, 5.3.1.2: cl_image_desc's
  // buffer), its rows fill whole texels (row elements % 4 == 0) and the row
  // pitch is a multiple of CL_DEVICE_IMAGE_PITCH_ALIGNMENT: the producer's
  // output is read as an image with no copy or packing kernel between them,
  // as the agent's trials read it (measure/image_args.h). Where the device
  // lacks the extension, the driver refuses the view, or false: a separate
  // image filled by a copy or a packing kernel before the layer.
  bool image_views = true;
  // Tests: try views as if the device listed cl_khr_image2d_from_buffer
  // (a device without it refuses them, and the copy takes over).
  bool assume_image_from_buffer = false;
};

// A graph input or output.
struct ModelTensorInfo {
  std::string name;
  std::vector<int64_t> dims;
  uint64_t elements = 1;  // fp32 values
};

// One layer (plan step) as Describe() lists it.
struct ModelLayer {
  std::string label;     // the ONNX node's name
  std::string workload;  // canonical workload string
  std::string entry;     // "tuned", "reference" or "library"
  std::string template_name;
  std::string config;
  double estimate_ns = -1;              // the record's time; < 0: none measured
  int commands = 0;                     // launches and library calls
  std::vector<ModelTensorInfo> reads;   // tensors it reads
  std::vector<ModelTensorInfo> writes;  // tensors it writes
  // Tensors it reads through an image, each in words: "x viewed as an
  // image" (its buffer's memory, no copy: ModelLoadOptions::image_views),
  // "x packed into an image" (a copy or packing kernel before it; where a
  // view was refused, the driver's code follows), "x through the image
  // packed by layer 3" or "x through the image view of layer 3" (an earlier
  // layer's image of the same shape, the tensor unwritten since).
  std::vector<std::string> image_reads;
};

class Model {
 public:
  // Loads the plan in `plan_path` with its weights in `weights_path` for
  // `device` of `context` (an OpenCL 1.2 context holding it). Refuses a
  // plan of another format version, model or device key, a truncated or
  // corrupt file (plan_format.h), a device other than the plan's
  // (kModelOtherDevice), and library steps without `options.library`. When
  // the device needs a larger alignment (CL_DEVICE_MEM_BASE_ADDR_ALIGN)
  // than the plan's memory plan assumed, the arena is planned again for
  // it. Returns CL_SUCCESS with *out set, or the code and *error.
  static cl_int Load(cl_context context, cl_device_id device,
                     const std::string& plan_path,
                     const std::string& weights_path,
                     const ModelLoadOptions& options,
                     std::unique_ptr<Model>* out, std::string* error);
  // The same from the files' bytes.
  static cl_int LoadBytes(cl_context context, cl_device_id device,
                          const std::string& plan_file,
                          const std::string& weights_file,
                          const ModelLoadOptions& options,
                          std::unique_ptr<Model>* out, std::string* error);
  // The same from a decoded plan (tunefleet's own tools, which build the
  // plan in memory).
  static cl_int LoadPlan(cl_context context, cl_device_id device, Plan plan,
                         const ModelLoadOptions& options,
                         std::unique_ptr<Model>* out, std::string* error);

  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // Runs the model once on `queue` (an in-order queue of the Model's
  // context and device): inputs[i] holds inputs()[i].elements floats,
  // outputs[i] receives outputs()[i].elements floats. Returns when the
  // outputs are written. Returns CL_SUCCESS, kModelBadArguments,
  // kModelBadQueue or the OpenCL error of a command (the outputs are then
  // unspecified).
  cl_int Run(cl_command_queue queue, const float* const* inputs,
             size_t num_inputs, float* const* outputs, size_t num_outputs,
             std::string* error = nullptr);
  // As Run, with each layer's device time in *layer_ns (one value per
  // layers() entry, ns: from the start of its first command to the end of
  // its last, OpenCL profiling events); `queue` needs
  // CL_QUEUE_PROFILING_ENABLE (else kModelBadQueue).
  cl_int RunProfiled(cl_command_queue queue, const float* const* inputs,
                     size_t num_inputs, float* const* outputs,
                     size_t num_outputs, std::vector<double>* layer_ns,
                     std::string* error = nullptr);
  // As Run with device buffers: inputs[i] and outputs[i] hold at least
  // inputs()[i].elements and outputs()[i].elements floats at offset 0;
  // they are copied into and out of the arena on the queue. Returns when
  // the commands are enqueued and flushed, not when they end: wait on
  // the queue (clFinish) before reading the outputs.
  cl_int RunBuffers(cl_command_queue queue, const cl_mem* inputs,
                    size_t num_inputs, const cl_mem* outputs,
                    size_t num_outputs, std::string* error = nullptr);

  // The graph's inputs and outputs, in order, with their shapes.
  const std::vector<ModelTensorInfo>& inputs() const { return inputs_; }
  const std::vector<ModelTensorInfo>& outputs() const { return outputs_; }
  // The plan's steps, in execution order.
  const std::vector<ModelLayer>& layers() const { return layers_; }
  const PlanHeader& header() const { return header_; }
  // A table of the layers (label, workload, entry, config, estimate,
  // output shape) after a summary line (model, key, memory).
  std::string Describe() const;

  // Device memory, bytes: the arena of every tensor (its size after any
  // re-planning at load), the weights buffer, images of weights and of
  // tensors read as images, and scratch buffers; their sum.
  uint64_t arena_bytes() const { return arena_bytes_; }
  uint64_t weights_bytes() const { return weights_bytes_; }
  uint64_t image_bytes() const { return image_bytes_; }
  uint64_t scratch_bytes() const { return scratch_bytes_; }
  uint64_t device_bytes() const {
    return arena_bytes_ + weights_bytes_ + image_bytes_ + scratch_bytes_;
  }
  // Bytes of every tensor as if each had its own buffer (the arena's
  // saving is against this).
  uint64_t tensor_bytes() const { return tensor_bytes_; }
  // Whether Load planned the arena again (the device's alignment was
  // larger than the plan's).
  bool replanned() const { return replanned_; }
  // The sum of the layers' estimates, ns (layers without one count 0), and
  // how many layers have none.
  double estimate_ns() const;
  int layers_without_estimate() const;
  // Kernel launches (image fills included) and library calls per run.
  int commands_per_run() const { return commands_per_run_; }
  // Tensors read through an image: views of their own memory (no command
  // per run), and images filled by a copy or packing kernel (one command
  // each per run); a later layer reading the same image counts neither.
  int image_views() const { return image_views_; }
  int image_fills() const { return image_fills_; }

  // Recording: the mechanism Load recorded the plan with (kNone: not
  // recorded), in words ("cl_khr_command_buffer 0.9.0: 75 launches in 1
  // list; inputs copied in", or why not: "not recorded: the device lists
  // neither ..."), and the recorded lists (library calls and commands a
  // recording cannot hold run plain between lists).
  RecordKind recording() const { return record_kind_; }
  const std::string& recording_note() const { return recording_note_; }
  int recorded_lists() const { return recorded_lists_; }
  // Whether Run and RunBuffers replay the recording (true after a Load that
  // recorded); SetReplay(false) makes them enqueue every command instead,
  // SetReplay(true) goes back (kModelCannotRecord where nothing was
  // recorded): one Model measures both. RunProfiled never replays (a
  // replay has no per-layer events). Serializes with runs.
  bool replay() const;
  cl_int SetReplay(bool replay, std::string* error = nullptr);

 private:
  struct Impl;
  Model();
  cl_int RunLocked(cl_command_queue queue, const float* const* inputs,
                   size_t num_inputs, float* const* outputs, size_t num_outputs,
                   std::vector<double>* layer_ns, std::string* error);

  // Records the plan per `options.record` (Load's last step).
  cl_int Record(const Plan& plan, const ModelLoadOptions& options,
                std::string* error);

  std::unique_ptr<Impl> impl_;
  std::vector<ModelTensorInfo> inputs_, outputs_;
  std::vector<ModelLayer> layers_;
  PlanHeader header_;
  uint64_t arena_bytes_ = 0, weights_bytes_ = 0, image_bytes_ = 0,
           scratch_bytes_ = 0, tensor_bytes_ = 0;
  bool replanned_ = false;
  int commands_per_run_ = 0;
  int image_views_ = 0, image_fills_ = 0;
  RecordKind record_kind_ = RecordKind::kNone;
  std::string recording_note_;
  int recorded_lists_ = 0;
};

}  // namespace tunefleet_tuned

#endif  // TUNEFLEET_MODEL_RUNTIME_TUNEFLEET_MODEL_H_
