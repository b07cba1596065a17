// Writes the binary seeds of the fuzz corpus, which are built rather than
// kept in git: request protobufs (validation_fuzzer) and small ONNX models
// (onnx_fuzzer), including the regression inputs of the crashes fuzzing
// found. The build runs it into build-fuzz/tests/fuzz/seeds:
//   make_fuzz_seeds OUT_DIR
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/npy.h"
#include "kernels_templates/workload.h"
#include "tests/support/onnx_test_models.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/agent.pb.h"
#include "tunefleet/v1/tuning.pb.h"

namespace {

using tunefleet::testing::GraphBuilder;

void Write(const std::filesystem::path& dir, const std::string& name,
           const std::string& bytes) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
}

// validation_fuzzer's input: a kind byte, then the message.
std::string Kind(char kind, const google::protobuf::Message& m) {
  return std::string(1, kind) + m.SerializeAsString();
}

tunefleet::v1::SubmitJobRequest Job(const char* op, const char* shape) {
  tunefleet::v1::SubmitJobRequest r;
  *r.mutable_workload() = tunefleet::trial::WorkloadToProto(
      *tunefleet::templates::Workload::Parse(op, shape));
  r.set_trials(20);
  r.set_strategy(tunefleet::v1::STRATEGY_RANDOM);
  r.set_device_key("pocl");
  return r;
}

// Job submissions (kind 0) of every built-in op and of a user's template.
void SubmitSeeds(const std::filesystem::path& dir) {
  Write(dir, "submit_gemm", Kind(0, Job("gemm", "M=64,N=48,K=32")));
  tunefleet::v1::SubmitJobRequest conv =
      Job("conv2d", "N=1,C=16,H=24,W=24,K=32,R=3,S=3,PH=1,PW=1,act=relu");
  conv.mutable_timing()->set_repeat(5);
  conv.mutable_timing()->set_min_repeat_ms(2.5);
  conv.set_priority(3);
  conv.set_deadline_s(600);
  Write(dir, "submit_conv", Kind(0, conv));
  Write(dir, "submit_dense",
        Kind(0, Job("dense", "M=1,N=128,K=256,affine=shift,act=hardswish")));
  Write(dir, "submit_pool",
        Kind(0, Job("pool2d", "C=8,H=16,W=16,R=3,S=3,SH=2,SW=2,mode=avg")));
  Write(dir, "submit_softmax", Kind(0, Job("softmax", "N=4,D=1000")));
  Write(dir, "submit_depthwise",
        Kind(0, Job("depthwise_conv2d", "C=32,H=20,W=20,R=3,S=3,PH=1,PW=1")));
  Write(dir, "submit_global_pool", Kind(0, Job("global_pool", "C=64,H=7,W=7")));
  // A user's template travels with its job.
  std::ifstream spec_file(std::string(TUNEFLEET_SOURCE_DIR) +
                          "/tests/data/templates/saxpy.toml");
  std::string spec((std::istreambuf_iterator<char>(spec_file)), {});
  tunefleet::v1::SubmitJobRequest user;
  user.mutable_workload()->set_op("saxpy");
  auto* n = user.mutable_workload()->add_dims();
  n->set_name("N");
  n->set_value(1000);
  user.set_trials(10);
  user.mutable_template_spec()->set_spec(spec);
  user.mutable_template_spec()->set_format("toml");
  user.mutable_template_spec()->set_source(
      "kernel void saxpy(int n, float a, global float* x, global float* z,"
      " global float* y) {}");
  Write(dir, "submit_spec", Kind(0, user));
}

// An agent's hello and measurements (kinds 1 and 2), a query (3), a config
// (4) and canonical workloads (5).
void AgentAndQuerySeeds(const std::filesystem::path& dir) {
  tunefleet::v1::Hello hello;
  hello.set_device_key("rk3588-mali-g610");
  hello.set_agent_name("board:42");
  hello.set_max_in_flight(2);
  auto* d = hello.mutable_device();
  d->set_device_name("Mali-G610");
  d->set_max_work_group_size(1024);
  for (int i = 0; i < 3; ++i) d->add_max_work_item_sizes(1024);
  d->set_local_mem_bytes(32768);
  d->set_max_mem_alloc_bytes(uint64_t{1} << 30);
  d->add_extensions("cl_khr_fp16");
  Write(dir, "hello", Kind(1, hello));

  tunefleet::v1::Measurement result;
  result.set_trial_id(9);
  result.set_error(tunefleet::v1::Measurement::OK);
  for (double t : {1500.0, 1480.0, 1510.0}) result.add_times_ns(t);
  Write(dir, "result_ok", Kind(2, result));
  result.set_error(tunefleet::v1::Measurement::COMPILE_ERROR);
  result.set_error_message("error: expected ';'");
  Write(dir, "result_error", Kind(2, result));

  tunefleet::v1::QueryRecordsRequest query;
  query.set_op("gemm");
  query.set_device_key("pocl");
  query.set_job_id(3);
  query.set_best_only(true);
  Write(dir, "query", Kind(3, query));

  tunefleet::v1::Config config;
  for (const auto& [name, value] :
       std::vector<std::pair<const char*, int>>{{"MWG", 16},
                                                {"NWG", 16},
                                                {"KWG", 8},
                                                {"MDIMC", 8},
                                                {"NDIMC", 8},
                                                {"VWM", 1},
                                                {"VWN", 1},
                                                {"SA", 0},
                                                {"SB", 0}}) {
    auto* k = config.add_knobs();
    k->set_name(name);
    k->set_value(value);
  }
  Write(dir, "config_gemm", Kind(4, config));
  Write(dir, "canonical_gemm", std::string(1, 5) + "gemm M=8 N=8 K=8 fp32");
  Write(dir, "canonical_conv",
        std::string(1, 5) +
            "conv2d N=1 C=8 H=12 W=12 K=16 R=3 S=3 SH=2 SW=2 PH=1 PW=1 DH=1 "
            "DW=1 G=1 fp16 act=clip");
}

void ValidationSeeds(const std::filesystem::path& dir) {
  SubmitSeeds(dir);
  AgentAndQuerySeeds(dir);
}

void OnnxSeeds(const std::filesystem::path& dir) {
  // SmallNet with its input dims fixed (the importer needs no
  // --input-shape then).
  onnx::ModelProto net;
  net.ParseFromString(tunefleet::testing::SmallNet());
  auto* shape = net.mutable_graph()
                    ->mutable_input(0)
                    ->mutable_type()
                    ->mutable_tensor_type()
                    ->mutable_shape();
  const int64_t dims[] = {1, 3, 16, 16};
  for (int i = 0; i < 4; ++i) shape->mutable_dim(i)->set_dim_value(dims[i]);
  Write(dir, "small_net.onnx", net.SerializeAsString());
  // Regression: a zero stride once divided by zero in libonnx's shape
  // inference.
  for (auto& node : *net.mutable_graph()->mutable_node()) {
    if (node.op_type() != "Conv") continue;
    for (auto& a : *node.mutable_attribute()) {
      if (a.name() == "strides") {
        for (int i = 0; i < a.ints_size(); ++i) a.set_ints(i, 0);
      }
    }
    break;
  }
  Write(dir, "crash-conv-stride-zero-fpe", net.SerializeAsString());

  {  // Gemm with transB and a bias, then Softmax at opset 11.
    GraphBuilder b;
    b.graph()->set_name("gemm");
    b.Input("x", {2, 8});
    b.Weight("w", {4, 8});
    b.Weight("bias", {4});
    auto* g = b.Node("Gemm", {"x", "w", "bias"}, {"y"});
    GraphBuilder::Int(g, "transB", 1);
    b.Node("Relu", {"y"}, {"r"});
    b.Node("Softmax", {"r"}, {"p"});
    b.Output("p");
    Write(dir, "gemm_softmax.onnx", b.Bytes());
  }
  // A cycle after a conv (the epilogue folding once looped forever).
  Write(dir, "regression-epilogue-cycle.onnx",
        tunefleet::testing::EpilogueCycle());
  {  // Average pooling and a grouped convolution.
    GraphBuilder b;
    b.Input("x", {1, 8, 10, 10});
    b.Weight("w", {8, 2, 3, 3});
    auto* c = b.Node("Conv", {"x", "w"}, {"c"});
    GraphBuilder::Int(c, "group", 4);
    GraphBuilder::Ints(c, "dilations", {2, 2});
    auto* p = b.Node("AveragePool", {"c"}, {"p"});
    GraphBuilder::Ints(p, "kernel_shape", {2, 2});
    GraphBuilder::Ints(p, "strides", {2, 2});
    b.Node("GlobalMaxPool", {"p"}, {"g"});
    b.Output("g");
    Write(dir, "grouped_conv_pool.onnx", b.Bytes());
  }
  {  // Regression: a Conv on a rank-2 input once crashed libonnx.
    GraphBuilder b;
    b.Input("x", {8, 10});
    b.Weight("w", {8, 2, 3, 3});
    b.Node("Conv", {"x", "w"}, {"c"});
    b.Output("c");
    Write(dir, "crash-conv-rank2-input-null-deref", b.Bytes());
  }
}

// .npy files (npy_fuzzer): float32 arrays of several ranks, a version 2.0
// header, and the dtype and order a parser must refuse.
void NpySeeds(const std::filesystem::path& dir) {
  using tunefleet::base::NpyArray;
  Write(dir, "scalar.npy", tunefleet::base::SerializeNpy(NpyArray{{}, {1.5f}}));
  Write(dir, "vector.npy",
        tunefleet::base::SerializeNpy(NpyArray{{3}, {1, 2, 3}}));
  Write(dir, "nchw.npy",
        tunefleet::base::SerializeNpy(
            NpyArray{{1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}}));
  Write(dir, "empty.npy", tunefleet::base::SerializeNpy(NpyArray{{0, 4}, {}}));
  std::string v2 = tunefleet::base::SerializeNpy(NpyArray{{2}, {1, 2}});
  Write(dir, "float64.npy", std::string(v2).replace(v2.find("<f4"), 3, "<f8"));
  Write(dir, "fortran.npy",
        std::string(v2).replace(v2.find("False"), 5, "True "));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path root = argv[1];
  ValidationSeeds(root / "validation_fuzzer");
  OnnxSeeds(root / "onnx_fuzzer");
  NpySeeds(root / "npy_fuzzer");
  return 0;
}
