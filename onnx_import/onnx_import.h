// ONNX model import: the distinct tuning tasks of a model (a model yields many
// tasks; the client imports it, the server never parses ONNX). Reads the model
// with libonnx's protobuf classes, fixes the dims of its inputs, runs ONNX's
// own shape inference, folds what the fixed shapes make constant (Shape /
// Gather / Slice / Concat / Cast chains, onnx_import/constant_fold.h) and
// infers again, then maps nodes to workloads:
//   Conv (group 1 or grouped)        -> conv2d (1x1 ones run through GEMM)
//   Conv with group == C == K        -> depthwise_conv2d
//   ConvTranspose                    -> conv_transpose2d
//   (1-D ones as 2-D with H = 1; a Conv or pool with asymmetric or
//   automatic padding as the workload of its input padded first)
//   MatMul / Gemm with a constant weight -> dense (+ bias from Add or C)
//   MatMul of two computed tensors   -> batch_matmul
//   MaxPool / AveragePool            -> pool2d
//   GlobalAveragePool / GlobalMaxPool -> global_pool
//   Softmax                          -> softmax
//   Resize / Upsample                -> resize
//   LayerNormalization, or ReduceMean -> Sub -> Pow -> ReduceMean -> Add ->
//   Sqrt -> Div (-> Mul -> Add)      -> layernorm
//   Add / Sub / Mul / Div / Max / Min / Pow, Sqrt, Exp, Log, Abs, Neg,
//   Reciprocal, Tanh, Erf, Floor, Ceil, Round, Sign, activations, a lone
//   BatchNormalization               -> eltwise
// Where the tensor between has no other consumer, what follows a conv,
// dense, conv_transpose2d or eltwise is folded into its epilogue
// (onnx_import/epilogue_fold.h): BatchNormalization and Mul / Add by scalar
// or per-channel constants (affine), a residual Add (conv and dense),
// Relu, Clip, Max / Min with a constant, LeakyRelu, Sigmoid, HardSigmoid,
// HardSwish, SiLU and their spelled-out forms (act), and Mul / Add by
// constants after the activation (post). Other nodes are listed as
// unsupported, which is not an error; the coverage report says what share
// of the model's FLOPs and bytes each class holds (docs/MODEL_COVERAGE.md).
#ifndef TUNEFLEET_ONNX_IMPORT_ONNX_IMPORT_H_
#define TUNEFLEET_ONNX_IMPORT_ONNX_IMPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels_templates/task.h"
#include "kernels_templates/workload.h"

namespace tunefleet::onnx_import {

// One distinct task of a model: its workload, the template that runs it
// (the first that accepts it; null when none does) and where the model
// uses it.
struct ModelTask : templates::Task {
  int count = 0;                   // nodes of the model that run this workload
  double flops = 0;                // of one run (template FLOP count)
  std::vector<std::string> nodes;  // ONNX node names (or op@index)
};

// Nodes the import cannot tune, by op type.
struct UnsupportedOp {
  std::string op_type;
  int count = 0;
  std::string reason;  // of the first occurrence
};

// The work of the nodes of one op type in one coverage class: FLOPs and
// bytes moved by one run of the model (docs/MODEL_COVERAGE.md gives the
// counting rules: e.g. Conv 2*N*K*P*Q*(C/G)*R*S, MatMul 2*M*N*K, one FLOP
// per output element of an elementwise op; bytes = 4 per element of the
// inputs, weights included, and the outputs; views such as Reshape and
// folded nodes move none).
struct OpShare {
  std::string op_type;
  int nodes = 0;
  double flops = 0;
  double bytes = 0;
  std::string reason;  // `left` only: why the first such node is not tuned
  // Nodes whose output shape stayed unknown: their work is not counted
  // (0 FLOPs, 0 bytes), so the shares overstate what is covered.
  int unknown = 0;
};

// What share of a model the tasks cover. Every node but Constant is in
// exactly one class:
//   tuned   the node a task runs (a conv, a MatMul, an elementwise op, ...)
//   fused   folded into a task's epilogue or kernel (BatchNormalization, a
//           bias Add, activations, a residual Add, a LayerNorm's parts)
//   folded  computed at import time (Shape/Gather/Cast/Concat chains on a
//           fixed input shape), or a view (Reshape, Squeeze, Flatten, ...);
//           0 FLOPs and 0 bytes: no work is left at run time
//   left    none of these, with the reason
// Each list is sorted by FLOPs, then bytes, largest first.
struct Coverage {
  std::vector<OpShare> tuned, fused, folded, left;
  double flops = 0;  // the whole model's, all classes
  double bytes = 0;
  int unknown_nodes = 0;  // the OpShare::unknown of every class, summed
};

struct ModelTasks {
  std::vector<ModelTask> tasks;  // heaviest first: flops * count
  std::vector<UnsupportedOp> unsupported;
  Coverage coverage;
  int nodes = 0;  // nodes in the graph, Constant nodes included
  std::map<std::string, std::vector<int64_t>> input_shapes;  // as used
};

// Input dims given by the user: name -> dims.
using InputShapes = std::map<std::string, std::vector<int64_t>>;

// Parses "x=1,3,48,192" (several may be given; ';' also separates dims).
// Errors: INVALID_ARGUMENT naming the bad text.
absl::Status ParseInputShape(absl::string_view text, InputShapes* shapes);

// Errors: NOT_FOUND for a missing file; INVALID_ARGUMENT when the file is
// not an ONNX model, names an input the model does not have, leaves a
// dynamic input dim unset, or contradicts a fixed dim, or when shape
// inference fails (with ONNX's message).
absl::StatusOr<ModelTasks> ImportOnnx(const std::string& path,
                                      const InputShapes& input_shapes);

// The same from the bytes of a model; `name` is used in messages.
absl::StatusOr<ModelTasks> ImportOnnxBytes(const std::string& bytes,
                                           absl::string_view name,
                                           const InputShapes& input_shapes);

}  // namespace tunefleet::onnx_import

#endif  // TUNEFLEET_ONNX_IMPORT_ONNX_IMPORT_H_
