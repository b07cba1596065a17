#include "bench/cublas_sgemm.h"

#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tunefleet::bench {

// A dlopen() handle, closed with the object. Outside the anonymous
// namespace: CublasSgemm::Api (declared in the header) holds two.
struct LibraryCloser {
  void operator()(void* h) const {
    if (h != nullptr) dlclose(h);
  }
};
using Library = std::unique_ptr<void, LibraryCloser>;

namespace {

// The first of `env`'s path (when set) and `names` that loads; the name
// loaded (or, when none loads, tried: the path, else the first name) goes
// to `loaded`. Errors: UNAVAILABLE "cannot load <loaded>: <dlerror()>".
absl::StatusOr<Library> Open(const char* env,
                             std::initializer_list<const char*> names,
                             std::string& loaded) {
  Library library;
  if (const char* path = std::getenv(env); path != nullptr && *path != 0) {
    loaded = path;
    library.reset(dlopen(path, RTLD_NOW | RTLD_GLOBAL));
  } else {
    loaded = *names.begin();
    for (const char* name : names) {
      if (void* h = dlopen(name, RTLD_NOW | RTLD_GLOBAL); h != nullptr) {
        loaded = name;
        library.reset(h);
        break;
      }
    }
  }
  if (library == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot load ", loaded, ": ", dlerror()));
  }
  return library;
}

// cudaMemcpyKind values and cuBLAS's CUBLAS_OP_N (cuda_runtime_api.h,
// cublas_api.h).
constexpr int kHostToDevice = 1;
constexpr int kDeviceToHost = 2;
constexpr int kOpN = 0;

}  // namespace

// The entry points used, as the CUDA 12/13 headers declare them (handles
// and streams as void*; cudaError_t and cublasStatus_t are ints).
struct CublasSgemm::Api {
  Library cudart, cublas;
  int (*cudaMalloc)(void**, size_t) = nullptr;
  int (*cudaFree)(void*) = nullptr;
  int (*cudaMemcpy)(void*, const void*, size_t, int) = nullptr;
  int (*cudaDeviceSynchronize)() = nullptr;
  int (*cublasCreate_v2)(void**) = nullptr;
  int (*cublasDestroy_v2)(void*) = nullptr;
  int (*cublasSgemm_v2)(void*, int, int, int, int, int, const float*,
                        const float*, int, const float*, int, const float*,
                        float*, int) = nullptr;
};

namespace {

template <typename Fn>
bool Bind(void* lib, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  return fn != nullptr;
}

absl::Status CudaError(const char* call, int code) {
  return absl::UnavailableError(absl::StrCat(call, " failed: error ", code));
}

}  // namespace

absl::StatusOr<std::unique_ptr<CublasSgemm>> CublasSgemm::Create(int m, int n,
                                                                 int k) {
  auto s = std::make_unique<CublasSgemm>(Key());
  s->api_ = std::make_unique<Api>();
  Api& api = *s->api_;
  std::string cudart_name, cublas_name;
  absl::StatusOr<Library> cudart =
      Open("TUNEFLEET_CUDART",
           {"libcudart.so.13", "libcudart.so.12", "libcudart.so"}, cudart_name);
  if (!cudart.ok()) return cudart.status();
  api.cudart = *std::move(cudart);
  absl::StatusOr<Library> cublas =
      Open("TUNEFLEET_CUBLAS",
           {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}, cublas_name);
  if (!cublas.ok()) return cublas.status();
  api.cublas = *std::move(cublas);
  void* rt = api.cudart.get();
  void* bl = api.cublas.get();
  if (!Bind(rt, "cudaMalloc", api.cudaMalloc) ||
      !Bind(rt, "cudaFree", api.cudaFree) ||
      !Bind(rt, "cudaMemcpy", api.cudaMemcpy) ||
      !Bind(rt, "cudaDeviceSynchronize", api.cudaDeviceSynchronize) ||
      !Bind(bl, "cublasCreate_v2", api.cublasCreate_v2) ||
      !Bind(bl, "cublasDestroy_v2", api.cublasDestroy_v2) ||
      !Bind(bl, "cublasSgemm_v2", api.cublasSgemm_v2)) {
    return absl::UnavailableError(absl::StrCat(
        "a CUDA runtime or cuBLAS symbol is missing: ", dlerror()));
  }
  s->describe_ = absl::StrCat(cublas_name, " + ", cudart_name);
  s->m_ = m, s->n_ = n, s->k_ = k;
  if (int e = api.cublasCreate_v2(&s->handle_); e != 0) {
    s->handle_ = nullptr;
    return CudaError("cublasCreate_v2", e);
  }
  const size_t fa = static_cast<size_t>(m) * k, fb = static_cast<size_t>(k) * n,
               fc = static_cast<size_t>(m) * n;
  for (auto [ptr, floats] :
       {std::pair{&s->a_, fa}, std::pair{&s->b_, fb}, std::pair{&s->c_, fc}}) {
    void* p = nullptr;
    if (int e = api.cudaMalloc(&p, floats * sizeof(float)); e != 0) {
      return CudaError("cudaMalloc", e);
    }
    *ptr = static_cast<float*>(p);
  }
  return s;
}

CublasSgemm::CublasSgemm(Key) {}

CublasSgemm::~CublasSgemm() {
  if (api_ == nullptr) return;
  for (float* p : {a_, b_, c_}) {
    if (p != nullptr) api_->cudaFree(p);
  }
  if (handle_ != nullptr) api_->cublasDestroy_v2(handle_);
}

absl::Status CublasSgemm::Upload(const std::vector<float>& a,
                                 const std::vector<float>& b) {
  if (int e = api_->cudaMemcpy(a_, a.data(), a.size() * 4, kHostToDevice)) {
    return CudaError("cudaMemcpy", e);
  }
  if (int e = api_->cudaMemcpy(b_, b.data(), b.size() * 4, kHostToDevice)) {
    return CudaError("cudaMemcpy", e);
  }
  return absl::OkStatus();
}

absl::Status CublasSgemm::Run() {
  // Row-major C = A * B is column-major C^T = B^T * A^T: cuBLAS sees B
  // (N x K, ld N) times A (K x M, ld K) into C^T (N x M, ld N).
  const float alpha = 1, beta = 0;
  if (int e = api_->cublasSgemm_v2(handle_, kOpN, kOpN, n_, m_, k_, &alpha, b_,
                                   n_, a_, k_, &beta, c_, n_)) {
    return CudaError("cublasSgemm_v2", e);
  }
  return absl::OkStatus();
}

absl::Status CublasSgemm::Finish() {
  if (int e = api_->cudaDeviceSynchronize()) {
    return CudaError("cudaDeviceSynchronize", e);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> CublasSgemm::Download() {
  std::vector<float> c(static_cast<size_t>(m_) * n_);
  if (int e = api_->cudaMemcpy(c.data(), c_, c.size() * 4, kDeviceToHost)) {
    return CudaError("cudaMemcpy", e);
  }
  return c;
}

}  // namespace tunefleet::bench
