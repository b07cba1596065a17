#include "kernels_templates/common/template_support.h"

#include "absl/strings/str_cat.h"

namespace tunefleet::templates {

absl::string_view DtypeSource();     // embedded dtype.cl
absl::string_view EpilogueSource();  // embedded epilogue.cl

std::string KernelPreamble() {
  return absl::StrCat(DtypeSource(), "\n", EpilogueSource(), "\n");
}

Epilogue EpilogueOf(const Workload& w) {
  Epilogue e;
  const std::string& affine = w.attr("affine");
  e.affine = affine == "scale_shift" ? 2 : affine == "shift" ? 1 : 0;
  const std::string& act = w.attr("act");
  if (act == "relu") {
    e.act = 1;
  } else if (act == "clip") {
    e = {e.affine, 2, 0.0f, 6.0f};
  } else if (act == "hardsigmoid") {
    e = {e.affine, 3, 0.2f, 0.5f};
  } else if (act == "hardswish") {
    e = {e.affine, 4, 1.0f / 6.0f, 0.5f};
  }
  return e;
}

std::string PreambleDefines(const Workload& w) {
  const Epilogue e = EpilogueOf(w);
  return absl::StrCat(" -DDTYPE_FP16=", w.dtype() == "fp16" ? 1 : 0,
                      " -DAFFINE=", e.affine, " -DACT=", e.act);
}

void AddEpilogueBuffers(int64_t channels, std::vector<BufferDesc>* buffers) {
  buffers->push_back({"scale", static_cast<uint64_t>(channels), false, 101});
  buffers->push_back({"shift", static_cast<uint64_t>(channels), false, 102});
}

void AddEpilogueArgs(const Workload& w, std::vector<ArgDesc>* args) {
  const Epilogue e = EpilogueOf(w);
  args->push_back(ArgDesc::Buffer("scale"));
  args->push_back(ArgDesc::Buffer("shift"));
  args->push_back(ArgDesc::Float(e.act_a));
  args->push_back(ArgDesc::Float(e.act_b));
}

double ToleranceFor(const Workload& w) {
  return w.dtype() == "fp16" ? 1e-2 : 1e-4;
}

int ElementBytes(const Workload& w) { return w.dtype() == "fp16" ? 2 : 4; }

}  // namespace tunefleet::templates
