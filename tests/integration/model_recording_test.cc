// Recording a model plan and replaying it (model_runtime/recording.h, issue
// 36), on the OpenCL device (PoCL here, which lists cl_khr_command_buffer):
// the replayed outputs against the plain ones and the model's own, on the
// Model's queue kind and on a profiling queue (recorded again for it), the
// image fills recorded as the packing kernel, RunBuffers; recording asked
// for where the device cannot (the error names the extension); and the
// paths no device here has, cl_qcom_recordable_queues and
// cl_khr_command_buffer_mutable_dispatch, through fake entry points that log
// their calls.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model_runtime/recording.h"
#include "model_runtime/tunefleet_model.h"
#include "opencl/opencl.h"
#include "plan_builder/plan_builder.h"
#include "tests/support/model_fixtures.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;
using testing_support::FakeRecords;
using testing_support::Random;
using testing_support::TinyModel;
using tunefleet_tuned::Model;
using tunefleet_tuned::RecordingApi;
using tunefleet_tuned::RecordKind;
using tunefleet_tuned::RecordMode;

// What the fake entry points were called with.
struct CallLog {
  std::vector<std::string> calls;        // "new", "end", "enqueue", ...
  std::vector<cl_command_queue> queues;  // of each enqueue
  // Per enqueue (QCOM) or update (KHR): the rebinds, (launch, arg, buffer).
  struct Arg {
    size_t launch;
    cl_uint arg;
    cl_mem buffer;
  };
  std::vector<std::vector<Arg>> args;
  int ndrange = 0;  // KHR launches recorded
  int mutable_launches = 0;
};
CallLog* g_log = nullptr;
int g_handles[64];  // fake command buffers, recordings, mutable commands
int g_next = 0;

void* CL_API_CALL FakeNewRecording(cl_command_queue, cl_int* err) {
  g_log->calls.push_back("new");
  *err = CL_SUCCESS;
  return &g_handles[g_next++ % 64];
}
cl_int CL_API_CALL FakeEndRecording(void*) {
  g_log->calls.push_back("end");
  return CL_SUCCESS;
}
cl_int CL_API_CALL FakeReleaseRecording(void*) {
  g_log->calls.push_back("release");
  return CL_SUCCESS;
}
cl_int CL_API_CALL
FakeEnqueueRecording(cl_command_queue queue, void*, size_t num_args,
                     const tunefleet_tuned::QcomArrayArg* args, size_t,
                     const tunefleet_tuned::QcomOffset*, size_t,
                     const tunefleet_tuned::QcomWorkgroup*, size_t,
                     const tunefleet_tuned::QcomWorkgroup*, cl_uint,
                     const cl_event*, cl_event*) {
  g_log->calls.push_back("enqueue");
  g_log->queues.push_back(queue);
  std::vector<CallLog::Arg> list;
  for (size_t i = 0; i < num_args; ++i) {
    EXPECT_EQ(args[i].arg_size, sizeof(cl_mem));
    list.push_back({args[i].dispatch_index, args[i].arg_index,
                    *static_cast<const cl_mem*>(args[i].arg_value)});
  }
  g_log->args.push_back(list);
  return CL_SUCCESS;
}
cl_command_queue FakeRecordableQueue(cl_context context, cl_device_id device,
                                     cl_int* err) {
  g_log->calls.push_back("recordable queue");
  return clCreateCommandQueue(context, device, 0, err);  // a plain one
}

// cl_qcom_recordable_queues through the fake entry points above.
RecordingApi FakeQcomApi() {
  return RecordingApi{.new_recording = &FakeNewRecording,
                      .end_recording = &FakeEndRecording,
                      .release_recording = &FakeReleaseRecording,
                      .enqueue_recording = &FakeEnqueueRecording,
                      .create_recordable_queue = &FakeRecordableQueue,
                      .extensions = "cl_qcom_recordable_queues",
                      .qcom = true};
}

void* CL_API_CALL FakeCreateBuffer(cl_uint, const cl_command_queue*,
                                   const cl_ulong* properties, cl_int* err) {
  g_log->calls.push_back(properties != nullptr ? "create mutable" : "create");
  *err = CL_SUCCESS;
  return &g_handles[g_next++ % 64];
}
cl_int CL_API_CALL FakeFinalize(void*) {
  g_log->calls.push_back("finalize");
  return CL_SUCCESS;
}
cl_int CL_API_CALL FakeReleaseBuffer(void*) { return CL_SUCCESS; }
cl_int CL_API_CALL FakeEnqueueBuffer(cl_uint num_queues,
                                     cl_command_queue* queues, void*, cl_uint,
                                     const cl_event*, cl_event* event) {
  g_log->calls.push_back("enqueue");
  g_log->queues.push_back(num_queues > 0 ? queues[0] : nullptr);
  if (event != nullptr) *event = nullptr;
  return CL_SUCCESS;
}
cl_int CL_API_CALL FakeNdRange(void*, cl_command_queue,
                               const cl_ulong* properties, cl_kernel, cl_uint,
                               const size_t*, const size_t*, const size_t*,
                               cl_uint, const cl_uint*, cl_uint*,
                               void** mutable_handle) {
  ++g_log->ndrange;
  if (properties != nullptr) {
    EXPECT_EQ(properties[0],
              tunefleet_tuned::kMutableDispatchUpdatableFieldsKhr);
    EXPECT_EQ(properties[1], tunefleet_tuned::kMutableDispatchArgumentsKhr);
    EXPECT_NE(mutable_handle, nullptr);
    // The launch's index, as its handle.
    *mutable_handle = &g_handles[32 + g_log->ndrange - 1];
    ++g_log->mutable_launches;
  }
  return CL_SUCCESS;
}
cl_int CL_API_CALL FakeUpdate(void*, cl_uint num_configs, const cl_uint* types,
                              const void** configs) {
  g_log->calls.push_back("update");
  std::vector<CallLog::Arg> list;
  for (cl_uint i = 0; i < num_configs; ++i) {
    EXPECT_EQ(types[i],
              tunefleet_tuned::kStructureTypeMutableDispatchConfigKhr);
    const auto* c =
        static_cast<const tunefleet_tuned::KhrMutableDispatchConfig*>(
            configs[i]);
    const size_t launch = static_cast<int*>(c->command) - &g_handles[32];
    for (cl_uint a = 0; a < c->num_args; ++a) {
      list.push_back({launch, c->arg_list[a].arg_index,
                      *static_cast<const cl_mem*>(c->arg_list[a].arg_value)});
    }
  }
  g_log->args.push_back(list);
  return CL_SUCCESS;
}

// cl_khr_command_buffer 0.9.5 with mutable dispatch through the fake entry
// points above.
RecordingApi FakeKhrMutableApi() {
  return RecordingApi{
      .create_command_buffer = &FakeCreateBuffer,
      .finalize_command_buffer = &FakeFinalize,
      .release_command_buffer = &FakeReleaseBuffer,
      .enqueue_command_buffer = &FakeEnqueueBuffer,
      .command_ndrange_kernel = &FakeNdRange,
      .update_mutable_commands = &FakeUpdate,
      .extensions =
          "cl_khr_command_buffer cl_khr_command_buffer_mutable_dispatch",
      .khr = true,
      .khr_mutable = true,
      .khr_version = "0.9.5"};
}

class ModelRecordingTest : public testing_support::ModelDeviceTest {
 protected:
  void SetUp() override {
    ModelDeviceTest::SetUp();
    if (HasFatalFailure()) return;
    cl_int err = CL_SUCCESS;
    plain_queue_ =
        clCreateCommandQueue(device_->context.get(), device_->device, 0, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    log_ = CallLog();
    g_log = &log_;
  }
  void TearDown() override {
    if (plain_queue_ != nullptr) clReleaseCommandQueue(plain_queue_);
    g_log = nullptr;
  }

  // The plan of TinyModel(8, w); with `image`, its conv reads x through an
  // image (a tuned config with IMI=1).
  tunefleet_tuned::Plan PlanOf(const TinyModel& m, int w, bool image) {
    FakeRecords records("test-key", info_);
    if (image) testing_support::AddTunedConvRecord(m, /*image=*/true, records);
    auto plan = plan_builder::BuildPlan(m.graph, records, Options(w));
    EXPECT_TRUE(plan.ok()) << plan.status();
    return *std::move(plan);
  }

  std::unique_ptr<Model> Load(tunefleet_tuned::Plan plan, RecordMode mode,
                              const RecordingApi* api = nullptr,
                              cl_int expect = CL_SUCCESS) {
    tunefleet_tuned::ModelLoadOptions options;
    options.record = mode;
    options.recording_api = api;
    std::unique_ptr<Model> model;
    std::string error;
    EXPECT_EQ(Model::LoadPlan(device_->context.get(), device_->device,
                              std::move(plan), options, &model, &error),
              expect)
        << error;
    error_ = error;
    return model;
  }

  std::vector<float> RunOn(Model& model, cl_command_queue queue,
                           const std::vector<float>& x) {
    std::vector<float> out(model.outputs()[0].elements, -7.0f);
    const float* in[] = {x.data()};
    float* outs[] = {out.data()};
    std::string error;
    EXPECT_EQ(model.Run(queue, in, 1, outs, 1, &error), CL_SUCCESS) << error;
    return out;
  }

  // TinyModel `m`'s plan (width 8) loaded with recording on through `api`,
  // which records it as `kind`; input_arg_ is set to the argument of the
  // conv's launch that reads x. Null when the load failed.
  std::unique_ptr<Model> LoadRecorded(const TinyModel& m,
                                      const RecordingApi& api,
                                      RecordKind kind) {
    const tunefleet_tuned::Plan plan = PlanOf(m, 8, false);
    input_arg_ = InputArgOf(plan);
    std::unique_ptr<Model> model = Load(plan, RecordMode::kOn, &api);
    EXPECT_NE(model, nullptr);
    if (model != nullptr) {
      EXPECT_EQ(model->recording(), kind);
    }
    return model;
  }

  // Device buffers of `x_elements` and `out_elements` floats for RunBuffers
  // in *xb and *ob; the test releases them.
  void CallerBuffers(size_t x_elements, size_t out_elements, cl_mem* xb,
                     cl_mem* ob) {
    cl_int err = CL_SUCCESS;
    *xb = clCreateBuffer(device_->context.get(), CL_MEM_READ_WRITE,
                         x_elements * 4, nullptr, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    *ob = clCreateBuffer(device_->context.get(), CL_MEM_READ_WRITE,
                         out_elements * 4, nullptr, &err);
    EXPECT_EQ(err, CL_SUCCESS);
  }

  // `model` run through RunBuffers on plain_queue_ from `xb` into `ob`,
  // which must succeed; waits for the queue.
  void RunBuffersOn(Model& model, cl_mem xb, cl_mem ob) {
    std::string error;
    ASSERT_EQ(model.RunBuffers(plain_queue_, &xb, 1, &ob, 1, &error),
              CL_SUCCESS)
        << error;
    clFinish(plain_queue_);
  }

  // The argument index of the conv's launch (step 0's kernel) that reads x.
  static cl_uint InputArgOf(const tunefleet_tuned::Plan& plan) {
    const tunefleet_tuned::PlanCommand& c = plan.steps[0].commands.back();
    for (size_t i = 0; i < c.args.size(); ++i) {
      if (c.args[i].kind == tunefleet_tuned::PlanArg::kTensor &&
          c.args[i].value == plan.inputs[0]) {
        return static_cast<cl_uint>(i);
      }
    }
    ADD_FAILURE() << "the conv does not read x as a buffer";
    return 0;
  }

  cl_command_queue plain_queue_ = nullptr;
  cl_uint input_arg_ = 0;  // set by LoadRecorded
  CallLog log_;
  std::string error_;
};

TEST_F(ModelRecordingTest, ReplaysMatchPlainRunsAndTheModel) {
  for (bool image : {false, true}) {
    for (int w : {8, 6}) {  // image rows of whole texels (a copy) or not
      if (!image && w == 6) continue;
      SCOPED_TRACE(absl::StrCat(image ? "image" : "buffers", " W=", w));
      TinyModel m(8, w);
      std::unique_ptr<Model> model = Load(PlanOf(m, w, image), RecordMode::kOn);
      ASSERT_NE(model, nullptr);
      EXPECT_EQ(model->recording(), RecordKind::kKhrCommandBuffer);
      EXPECT_THAT(model->recording_note(), HasSubstr("cl_khr_command_buffer"));
      EXPECT_THAT(model->recording_note(), HasSubstr("inputs copied in"));
      // Every launch (the image fill as the packing kernel) in one list.
      EXPECT_EQ(model->recorded_lists(), 1);
      EXPECT_THAT(model->recording_note(),
                  HasSubstr(absl::StrCat(model->commands_per_run(),
                                         " launches in 1 list")));
      EXPECT_TRUE(model->replay());
      const std::vector<float> x = Random(m.C * m.H * m.W, 4);
      const std::vector<float> expected = m.Expected(x);
      // On a queue like the Model's own (the lists run on it), twice.
      const std::vector<float> replayed = RunOn(*model, plain_queue_, x);
      for (int k = 0; k < m.K; ++k) {
        EXPECT_NEAR(replayed[k], expected[k], 1e-4) << k;
      }
      EXPECT_EQ(RunOn(*model, plain_queue_, x), replayed);
      // Another input: the recording reads the new one.
      const std::vector<float> x2 = Random(m.C * m.H * m.W, 9);
      const std::vector<float> replayed2 = RunOn(*model, plain_queue_, x2);
      const std::vector<float> expected2 = m.Expected(x2);
      for (int k = 0; k < m.K; ++k) {
        EXPECT_NEAR(replayed2[k], expected2[k], 1e-4) << k;
      }
      // On a profiling queue (recorded again for it), then plain runs.
      EXPECT_EQ(RunOn(*model, device_->queue.get(), x), replayed);
      ASSERT_EQ(model->SetReplay(false), CL_SUCCESS);
      EXPECT_FALSE(model->replay());
      EXPECT_EQ(RunOn(*model, plain_queue_, x), replayed);
      ASSERT_EQ(model->SetReplay(true), CL_SUCCESS);
      EXPECT_EQ(RunOn(*model, plain_queue_, x), replayed);
      // Profiled runs enqueue plain commands, with per-layer times.
      std::vector<float> out(m.K);
      const float* in[] = {x.data()};
      float* outs[] = {out.data()};
      std::vector<double> layer_ns;
      std::string error;
      ASSERT_EQ(model->RunProfiled(device_->queue.get(), in, 1, outs, 1,
                                   &layer_ns, &error),
                CL_SUCCESS)
          << error;
      EXPECT_EQ(out, replayed);
      ASSERT_EQ(layer_ns.size(), 3u);
      for (double ns : layer_ns) EXPECT_GT(ns, 0);
      // RunBuffers replays too.
      cl_int err = CL_SUCCESS;
      cl_mem xb = clCreateBuffer(
          device_->context.get(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
          x.size() * 4, const_cast<float*>(x.data()), &err);
      ASSERT_EQ(err, CL_SUCCESS);
      cl_mem ob = clCreateBuffer(device_->context.get(), CL_MEM_READ_WRITE,
                                 m.K * 4, nullptr, &err);
      ASSERT_EQ(err, CL_SUCCESS);
      ASSERT_EQ(model->RunBuffers(plain_queue_, &xb, 1, &ob, 1, &error),
                CL_SUCCESS)
          << error;
      std::vector<float> from_buffers(m.K, -1.0f);
      ASSERT_EQ(clEnqueueReadBuffer(plain_queue_, ob, CL_TRUE, 0, m.K * 4,
                                    from_buffers.data(), 0, nullptr, nullptr),
                CL_SUCCESS);
      EXPECT_EQ(from_buffers, replayed);
      clReleaseMemObject(xb);
      clReleaseMemObject(ob);
    }
  }
}

TEST_F(ModelRecordingTest, AutoAndOffWithoutAnExtension) {
  TinyModel m(8, 8);
  RecordingApi none;  // lists nothing
  none.extensions = "cl_khr_fp64";
  std::unique_ptr<Model> model =
      Load(PlanOf(m, 8, false), RecordMode::kOn, &none,
           tunefleet_tuned::kModelCannotRecord);
  EXPECT_EQ(model, nullptr);
  EXPECT_THAT(error_, HasSubstr("cl_khr_command_buffer"));
  EXPECT_THAT(error_, HasSubstr("cl_qcom_recordable_queues"));
  // auto: runs plain, and says why.
  model = Load(PlanOf(m, 8, false), RecordMode::kAuto, &none);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->recording(), RecordKind::kNone);
  EXPECT_FALSE(model->replay());
  EXPECT_THAT(model->recording_note(), HasSubstr("not recorded"));
  EXPECT_EQ(model->SetReplay(true), tunefleet_tuned::kModelCannotRecord);
  const std::vector<float> x = Random(m.C * m.H * m.W, 4);
  const std::vector<float> out = RunOn(*model, plain_queue_, x);
  const std::vector<float> expected = m.Expected(x);
  for (int k = 0; k < m.K; ++k) EXPECT_NEAR(out[k], expected[k], 1e-4);
  // off: not even tried.
  model = Load(PlanOf(m, 8, false), RecordMode::kOff);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->recording(), RecordKind::kNone);
  EXPECT_EQ(RunOn(*model, plain_queue_, x), out);
}

TEST_F(ModelRecordingTest, QcomRecordingThroughFakeEntryPoints) {
  TinyModel m(8, 8);
  std::unique_ptr<Model> model =
      LoadRecorded(m, FakeQcomApi(), RecordKind::kQcomRecording);
  ASSERT_NE(model, nullptr);
  EXPECT_THAT(model->recording_note(),
              HasSubstr("cl_qcom_recordable_queues: 3 launches in 1 list"));
  EXPECT_THAT(model->recording_note(), HasSubstr("rebound by RunBuffers"));
  // Load: a recordable queue, one recording of the plan's launches.
  EXPECT_EQ(log_.calls,
            (std::vector<std::string>{"recordable queue", "new", "end"}));
  // Run: the inputs copied in, the recording enqueued on the run's queue
  // with no changed argument.
  const std::vector<float> x = Random(m.C * m.H * m.W, 4);
  RunOn(*model, plain_queue_, x);
  ASSERT_EQ(log_.calls.size(), 4u);
  EXPECT_EQ(log_.calls[3], "enqueue");
  EXPECT_EQ(log_.queues.back(), plain_queue_);
  EXPECT_TRUE(log_.args.back().empty());
  // RunBuffers: the input rebound to the caller's buffer in the conv's
  // launch (launch 0), not copied.
  cl_mem xb = nullptr, ob = nullptr;
  CallerBuffers(x.size(), m.K, &xb, &ob);
  ASSERT_NO_FATAL_FAILURE(RunBuffersOn(*model, xb, ob));
  ASSERT_EQ(log_.args.size(), 2u);
  ASSERT_EQ(log_.args.back().size(), 1u);
  EXPECT_EQ(log_.args.back()[0].launch, 0u);
  EXPECT_EQ(log_.args.back()[0].arg, input_arg_);
  EXPECT_EQ(log_.args.back()[0].buffer, xb);
  // The next Run binds the Model's own input buffer again.
  RunOn(*model, plain_queue_, x);
  ASSERT_EQ(log_.args.size(), 3u);
  ASSERT_EQ(log_.args.back().size(), 1u);
  EXPECT_NE(log_.args.back()[0].buffer, xb);
  clReleaseMemObject(xb);
  clReleaseMemObject(ob);
  model.reset();
  EXPECT_EQ(log_.calls.back(), "release");
}

TEST_F(ModelRecordingTest, KhrMutableDispatchRebindsThroughFakeEntryPoints) {
  TinyModel m(8, 8);
  std::unique_ptr<Model> model =
      LoadRecorded(m, FakeKhrMutableApi(), RecordKind::kKhrCommandBuffer);
  ASSERT_NE(model, nullptr);
  EXPECT_THAT(model->recording_note(), HasSubstr("0.9.5: 3 launches"));
  EXPECT_EQ(log_.calls,
            (std::vector<std::string>{"create mutable", "finalize"}));
  EXPECT_EQ(log_.ndrange, 3);
  EXPECT_EQ(log_.mutable_launches, 1);  // the conv reads x
  // RunBuffers: one update, the conv's input to the caller's buffer, then
  // the command buffer on the run's queue (substituted).
  const std::vector<float> x = Random(m.C * m.H * m.W, 4);
  cl_mem xb = nullptr, ob = nullptr;
  CallerBuffers(x.size(), m.K, &xb, &ob);
  ASSERT_NO_FATAL_FAILURE(RunBuffersOn(*model, xb, ob));
  ASSERT_EQ(log_.calls.size(), 4u);
  EXPECT_EQ(log_.calls[2], "update");
  EXPECT_EQ(log_.calls[3], "enqueue");
  EXPECT_EQ(log_.queues.back(), plain_queue_);
  ASSERT_EQ(log_.args.back().size(), 1u);
  EXPECT_EQ(log_.args.back()[0].launch, 0u);
  EXPECT_EQ(log_.args.back()[0].arg, input_arg_);
  EXPECT_EQ(log_.args.back()[0].buffer, xb);
  // The same buffer again: no update.
  ASSERT_NO_FATAL_FAILURE(RunBuffersOn(*model, xb, ob));
  ASSERT_EQ(log_.calls.size(), 5u);
  EXPECT_EQ(log_.calls[4], "enqueue");
  // A Run: the Model's own buffer back (one update), then the replay.
  RunOn(*model, plain_queue_, x);
  ASSERT_EQ(log_.calls.size(), 7u);
  EXPECT_EQ(log_.calls[5], "update");
  EXPECT_NE(log_.args.back()[0].buffer, xb);
  clReleaseMemObject(xb);
  clReleaseMemObject(ob);
}

}  // namespace
}  // namespace tunefleet
