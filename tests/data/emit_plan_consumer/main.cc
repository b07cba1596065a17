// Runs a model plan of an emitted library on the first OpenCL device, as
// an application would:
//   emit_plan_consumer PLAN.tfplan WEIGHTS.tfweights OUT_PREFIX IN.f32...
// Each IN.f32 holds one graph input's floats (raw little-endian fp32, in
// the plan's input order); each output is written to OUT_PREFIX<i>.f32.
// Prints the model's description and one line per output; exit code 0 on
// success, 1 with the runtime's message on an error.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "tunefleet_model.h"
#include "tunefleet_tuned.h"

namespace {

std::vector<float> ReadFloats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  std::vector<float> v(bytes.size() / sizeof(float));
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

int Fail(const std::string& what) {
  std::cerr << "emit_plan_consumer: " << what << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    return Fail("usage: emit_plan_consumer PLAN WEIGHTS OUT_PREFIX IN.f32...");
  }
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) !=
          CL_SUCCESS) {
    return Fail("no OpenCL device");
  }
  cl_int err = CL_SUCCESS;
  cl_context context =
      clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  if (err != CL_SUCCESS) return Fail("clCreateContext failed");
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  if (err != CL_SUCCESS) return Fail("clCreateCommandQueue failed");

  tunefleet_tuned::ModelLoadOptions options;
  options.library = tunefleet_tuned::LinkedLibraries();
  std::unique_ptr<tunefleet_tuned::Model> model;
  std::string error;
  err = tunefleet_tuned::Model::Load(context, device, argv[1], argv[2], options,
                                     &model, &error);
  if (err != CL_SUCCESS) {
    return Fail("Load: " + std::to_string(err) + ": " + error);
  }
  std::cout << model->Describe();
  std::vector<std::vector<float>> inputs;
  std::vector<const float*> in;
  for (int a = 4; a < argc; ++a) inputs.push_back(ReadFloats(argv[a]));
  if (inputs.size() != model->inputs().size()) {
    return Fail("the model takes " + std::to_string(model->inputs().size()) +
                " inputs");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].size() != model->inputs()[i].elements) {
      return Fail("input " + model->inputs()[i].name + " wants " +
                  std::to_string(model->inputs()[i].elements) + " floats");
    }
    in.push_back(inputs[i].data());
  }
  std::vector<std::vector<float>> outputs;
  std::vector<float*> out;
  for (const auto& o : model->outputs()) outputs.emplace_back(o.elements);
  for (auto& o : outputs) out.push_back(o.data());
  // Twice: a run leaves nothing the next one depends on.
  for (int run = 0; run < 2; ++run) {
    err =
        model->Run(queue, in.data(), in.size(), out.data(), out.size(), &error);
    if (err != CL_SUCCESS) {
      return Fail("Run: " + std::to_string(err) + ": " + error);
    }
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    const std::string path = std::string(argv[3]) + std::to_string(o) + ".f32";
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(outputs[o].data()),
            static_cast<std::streamsize>(outputs[o].size() * sizeof(float)));
    std::cout << "output " << model->outputs()[o].name << " -> " << path
              << "\n";
  }
  model.reset();
  tunefleet_tuned::ReleaseCachedPrograms();
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}
