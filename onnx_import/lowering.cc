// StepWriter, the copy workload and the shared lowering helpers
// (lowering.h).
#include "onnx_import/lowering.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "onnx_import/match.h"

namespace tunefleet::onnx_import {

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) {
    return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
  }
  return out;
}

Dims RowMajorStrides(const Dims& dims) {
  Dims s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;)
    s[i - 1] = SaturatingMul(s[i], dims[i]);
  return s;
}

int64_t ElementsOf(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n = SaturatingMul(n, d);
  return n;
}

absl::StatusOr<templates::Workload> CopyWorkload(const CopyBox& box,
                                                 int64_t in_elements,
                                                 int64_t out_elements) {
  std::vector<CopyDim> dims;
  for (const CopyDim& d : box.dims) {
    if (d.extent != 1) dims.push_back(d);
  }
  std::stable_sort(dims.begin(), dims.end(),
                   [](const CopyDim& a, const CopyDim& b) {
                     return a.out_stride > b.out_stride;
                   });
  // Merges dim k + 1 into dim k where k's strides step over all of k + 1.
  std::vector<CopyDim> merged;
  for (const CopyDim& d : dims) {
    if (!merged.empty()) {
      CopyDim& last = merged.back();
      if (last.out_stride == SaturatingMul(d.out_stride, d.extent) &&
          last.in_stride == SaturatingMul(d.in_stride, d.extent) &&
          last.out_stride != INT64_MAX && last.in_stride != INT64_MAX) {
        last.extent = SaturatingMul(last.extent, d.extent);
        last.in_stride = d.in_stride;
        last.out_stride = d.out_stride;
        continue;
      }
    }
    merged.push_back(d);
  }
  if (merged.size() > 6) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a copy of ", merged.size(), " strided dims (the copy op has 6)"));
  }
  std::vector<templates::Dim> w;
  const size_t lead = 6 - merged.size();
  for (size_t k = 0; k < 6; ++k) {
    const CopyDim d = k < lead ? CopyDim{} : merged[k - lead];
    w.push_back({absl::StrCat("D", k), d.extent});
    w.push_back({absl::StrCat("IS", k), d.in_stride});
    w.push_back({absl::StrCat("OS", k), d.out_stride});
  }
  w.push_back({"IO", box.in_offset});
  w.push_back({"OO", box.out_offset});
  w.push_back({"IE", in_elements});
  w.push_back({"OE", out_elements});
  return MakeWorkload("copy", std::move(w));
}

void StepWriter::Begin(int position, std::vector<int> nodes,
                       std::string label) {
  position_ = position;
  nodes_ = std::move(nodes);
  label_ = std::move(label);
}

absl::Status StepWriter::Add(absl::StatusOr<templates::Workload> workload,
                             std::vector<StepBuffer> buffers,
                             std::vector<float> floats) {
  if (!workload.ok()) {
    return absl::FailedPreconditionError(workload.status().message());
  }
  steps_.push_back(
      {position_, ModelStep{*std::move(workload), std::move(buffers),
                            std::move(floats), nodes_, label_}});
  return absl::OkStatus();
}

absl::Status StepWriter::Copy(const StepBuffer& in, int64_t in_elements,
                              const std::string& out, int64_t out_elements,
                              const CopyBox& box) {
  return Add(CopyWorkload(box, in_elements, out_elements),
             {in, BindTensor(out)});
}

absl::Status StepWriter::Fill(const std::string& out, int64_t out_elements,
                              int64_t offset, int64_t count, float value) {
  return Add(
      MakeWorkload("fill", {{"E", count}, {"O", offset}, {"OE", out_elements}}),
      {BindTensor(out)}, {value});
}

absl::StatusOr<StepBuffer> StepWriter::In(const std::string& name) const {
  std::string error;
  StepBuffer b = BindInput(g_, name, &error);
  if (!error.empty()) return absl::FailedPreconditionError(error);
  return b;
}

absl::StatusOr<Dims> StepWriter::ShapeOf(const std::string& name) const {
  auto t = temps_.find(name);
  if (t != temps_.end()) return t->second;
  std::optional<Dims> d = g_.Shape(name);
  if (!d) d = g_.ConstantDims(name);
  if (!d) {
    return absl::FailedPreconditionError(
        absl::StrCat("the shape of tensor '", name, "' is unknown"));
  }
  // Every element count and stride of the lowerings stays below 2^53.
  if (!Product(*d, 0, d->size()) &&
      std::all_of(d->begin(), d->end(), [](int64_t x) { return x >= 1; })) {
    return absl::FailedPreconditionError(
        absl::StrCat("tensor '", name, "' has more than 2^53 elements"));
  }
  for (int64_t x : *d) {
    if (x < 0 || x > templates::kMaxDim) {
      return absl::FailedPreconditionError(absl::StrCat(
          "tensor '", name, "' has a dim outside 0..", templates::kMaxDim));
    }
  }
  return *d;
}

std::string StepWriter::Temp(const std::string& base, const Dims& dims) {
  std::string name = absl::StrCat(base, "@tmp", temps_.size());
  temps_[name] = dims;
  return name;
}

std::vector<ModelStep> StepWriter::Steps() const {
  std::vector<Pending> sorted = steps_;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Pending& a, const Pending& b) {
                     return a.position < b.position;
                   });
  std::vector<ModelStep> out;
  for (Pending& p : sorted) out.push_back(std::move(p.step));
  return out;
}

int StepWriter::OutputBuffer(absl::string_view op) {
  if (op == "fill") return 0;
  if (op == "copy" || op == "reduce" || op == "pool2d" || op == "global_pool" ||
      op == "softmax" || op == "resize" || op == "layernorm" ||
      op == "se_block") {
    return 1;
  }
  return 2;  // conv2d, depthwise_conv2d, conv_transpose2d, dense, eltwise,
             // channel_gate,
             // batch_matmul, gemm
}

absl::StatusOr<std::string> WritePrePad(StepWriter& w, const std::string& input,
                                        const Dims& dims, int64_t top,
                                        int64_t left, int64_t bottom,
                                        int64_t right, float value) {
  const Dims padded = {dims[0], dims[1], dims[2] + top + bottom,
                       dims[3] + left + right};
  if (!Product(padded, 0, 4)) {
    return absl::FailedPreconditionError(
        "the padded input has more than 2^53 elements");
  }
  const std::string out = w.Temp(input + "@pad", padded);
  const int64_t total = ElementsOf(padded);
  if (absl::Status s = w.Fill(out, total, 0, total, value); !s.ok()) return s;
  absl::StatusOr<StepBuffer> in = w.In(input);
  if (!in.ok()) return in.status();
  const Dims is = RowMajorStrides(dims), os = RowMajorStrides(padded);
  CopyBox box;
  for (int k = 0; k < 4; ++k) box.dims.push_back({dims[k], is[k], os[k]});
  box.out_offset = top * os[2] + left * os[3];
  if (absl::Status s = w.Copy(*in, ElementsOf(dims), out, total, box);
      !s.ok()) {
    return s;
  }
  return out;
}

absl::StatusOr<std::string> WriteExpand(StepWriter& w, const std::string& in,
                                        const Dims& from, const Dims& to) {
  if (from.size() > to.size()) {
    return absl::FailedPreconditionError("a broadcast to a lower rank");
  }
  const size_t lead = to.size() - from.size();
  const Dims is = RowMajorStrides(from), os = RowMajorStrides(to);
  CopyBox box;
  for (size_t k = 0; k < to.size(); ++k) {
    int64_t stride = 0;
    if (k >= lead) {
      const int64_t d = from[k - lead];
      if (d != 1 && d != to[k]) {
        return absl::FailedPreconditionError(
            absl::StrCat("dims of ", in, " do not broadcast to the output"));
      }
      if (d != 1) stride = is[k - lead];
    }
    box.dims.push_back({to[k], stride, os[k]});
  }
  absl::StatusOr<StepBuffer> b = w.In(in);
  if (!b.ok()) return b.status();
  const std::string out = w.Temp(in + "@expand", to);
  if (absl::Status s = w.Copy(*b, ElementsOf(from), out, ElementsOf(to), box);
      !s.ok()) {
    return s;
  }
  return out;
}

absl::Status WriteTranspose(StepWriter& w, const std::string& in,
                            const Dims& dims, const Dims& perm,
                            const std::string& out) {
  Dims out_dims;
  for (int64_t p : perm) out_dims.push_back(dims[p]);
  const Dims is = RowMajorStrides(dims), os = RowMajorStrides(out_dims);
  CopyBox box;
  for (size_t k = 0; k < perm.size(); ++k) {
    box.dims.push_back({out_dims[k], is[perm[k]], os[k]});
  }
  absl::StatusOr<StepBuffer> b = w.In(in);
  if (!b.ok()) return b.status();
  return w.Copy(*b, ElementsOf(dims), out, ElementsOf(out_dims), box);
}

absl::Status LowerNode(LowerContext& c, int i) {
  absl::Status s = LowerMovement(c, i);
  if (!absl::IsUnimplemented(s)) return s;
  return LowerCompute(c, i);
}

}  // namespace tunefleet::onnx_import
