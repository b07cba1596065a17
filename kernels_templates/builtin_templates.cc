#include "kernels_templates/builtin_templates.h"

#include "absl/strings/str_cat.h"
#include "kernels_templates/builtin_files.h"
#include "kernels_templates/spec/spec_template.h"

namespace tunefleet::templates {
namespace {

// The built-in specs in registry order.
constexpr const char* kBuiltinSpecs[] = {
    "gemm/gemm_tiled.toml",  // first: the default of op gemm
    "gemm/dense_gemm.toml",
    // Before conv2d_direct, so 1x1 convolutions go to the GEMM.
    "gemm/conv2d_1x1_gemm.toml",
    // After gemm_tiled, which stays the default of op gemm.
    "gemm/gemm_gpu.toml",
    "conv/conv2d_direct.toml",
    "conv/depthwise_direct.toml",
    "pool/pool2d_direct.toml",
    "pool/global_pool_reduce.toml",
    "gate/channel_gate_direct.toml",
    "gate/se_block_direct.toml",
    "softmax/softmax_rows.toml",
    "eltwise/eltwise_direct.toml",
    "resize/resize_direct.toml",
    "norm/layernorm_rows.toml",
    "conv_transpose/conv_transpose2d_direct.toml",
    "matmul/batch_matmul_tiled.toml",
    "copy/copy_strided.toml",
    "copy/fill_range.toml",
    "reduce/reduce_axis.toml",
    // Library templates (vendor-library calls) last: never an op's default;
    // `tune --onnx` tries them beside each task's generated template.
    "library/clblast_gemm.toml",
    "library/clblast_dense.toml",
    "library/clblast_conv2d.toml",
    "library/clblast_conv2d_1x1.toml",
};

absl::StatusOr<std::string> ReadBuiltin(const std::string& path) {
  absl::StatusOr<absl::string_view> text = BuiltinFile(path);
  if (!text.ok()) return text.status();
  return std::string(*text);
}

}  // namespace

absl::StatusOr<absl::string_view> BuiltinFile(absl::string_view path) {
  for (size_t i = 0; i < kNumBuiltinFiles; ++i) {
    if (kBuiltinFiles[i].path == path) return kBuiltinFiles[i].text();
  }
  return absl::NotFoundError(
      absl::StrCat("no built-in template file '", path, "'"));
}

absl::StatusOr<std::vector<std::unique_ptr<KernelTemplate>>>
LoadBuiltinTemplates() {
  std::vector<std::unique_ptr<KernelTemplate>> out;
  for (const char* path : kBuiltinSpecs) {
    absl::StatusOr<std::unique_ptr<SpecTemplate>> t =
        SpecTemplate::Load(path, ReadBuiltin);
    if (!t.ok()) {
      return absl::Status(t.status().code(),
                          absl::StrCat(path, ": ", t.status().message()));
    }
    out.push_back(*std::move(t));
  }
  return out;
}

}  // namespace tunefleet::templates
