#include "opencl/program_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "base/hash.h"
#include "base/time.h"
#include "kernel_policy/build_options.h"
#include "kernel_policy/compiler_log.h"
#include "kernel_policy/source_check.h"

namespace tunefleet::opencl {
namespace {

// The compiler log read, and the part of it reported (ScrubCompilerLog).
constexpr size_t kMaxLogInBytes = 1 << 20;
constexpr size_t kMaxLogBytes = 8192;
// Bumped when the file layout or the key's composition changes.
constexpr char kCacheFormat[] = "tunefleet-program-binary-v1";
constexpr char kMagic[8] = {'T', 'F', 'P', 'B', 'I', 'N', '0', '1'};
constexpr size_t kDigestBytes = base::kSha256Bytes;
constexpr size_t kHeaderBytes = sizeof(kMagic) + 8 + 2 * kDigestBytes;
// Larger files are not binaries of one kernel: refuse them.
constexpr uint64_t kMaxBinaryBytes = uint64_t{256} << 20;

// A field of the key: its length first, so no two field lists collide.
void AppendField(std::string* out, absl::string_view field) {
  absl::StrAppend(out, field.size(), ":", field, ";");
}

std::string DeviceFingerprint(cl_device_id device) {
  cl_platform_id platform = nullptr;
  clGetDeviceInfo(device, CL_DEVICE_PLATFORM,
                  sizeof(platform),  // NOLINT(bugprone-sizeof-expression)
                  &platform, nullptr);
  const std::string platform_version =
      platform != nullptr ? PlatformString(platform, CL_PLATFORM_VERSION) : "";
  std::string out;
  AppendField(&out, kCacheFormat);
  AppendField(&out, DeviceString(device, CL_DEVICE_NAME));
  AppendField(&out, DeviceString(device, CL_DEVICE_VENDOR));
  AppendField(&out, DeviceString(device, CL_DRIVER_VERSION));
  AppendField(&out, DeviceString(device, CL_DEVICE_VERSION));
  AppendField(&out, platform_version);
  return out;
}

void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

uint64_t GetU64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(p[i]);
  return v;
}

// Whether `dir` is a directory of this user that not everyone may write: a
// cache others could write would let them plant binaries the driver loads.
// (Group-writable is allowed: user private groups with umask 002.)
bool IsPrivateDir(const std::string& dir) {
  struct stat st {};
  return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
         st.st_uid == geteuid() && (st.st_mode & S_IWOTH) == 0;
}

}  // namespace

std::string Sha256Hex(absl::string_view data) {
  return absl::BytesToHexString(base::Sha256(data));
}

std::string DefaultBinaryCacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME");
      xdg != nullptr && xdg[0] == '/') {
    return absl::StrCat(xdg, "/tunefleet/binaries");
  }
  // adb shell sets HOME=/ (not writable) and TMPDIR=/data/local/tmp.
  if (const char* home = std::getenv("HOME");
      home != nullptr && home[0] != '\0' && std::string_view(home) != "/") {
    return absl::StrCat(home, "/.cache/tunefleet/binaries");
  }
  if (const char* tmp = std::getenv("TMPDIR");
      tmp != nullptr && tmp[0] == '/') {
    // Per user: a shared TMPDIR (/tmp) would be a directory others can
    // write (see IsPrivateDir).
    return absl::StrCat(tmp, "/tunefleet-", geteuid(), "/binaries");
  }
  return "";
}

ProgramCache::ProgramCache(cl_context context, cl_device_id device,
                           Options options)
    : context_(context),
      device_(device),
      options_(std::move(options)),
      fingerprint_(DeviceFingerprint(device)) {
  if (!options_.binary_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options_.binary_dir, ec);
    // Without a directory of our own every load would miss and every store
    // fail quietly: the cache is an optimisation, never a reason for a
    // trial to fail. One others may write is not used at all.
    if (!IsPrivateDir(options_.binary_dir)) {
      std::fprintf(stderr,
                   "[agent] binary cache %s not used: it is missing, not "
                   "owned by this user, or writable by everyone\n",
                   options_.binary_dir.c_str());
      options_.binary_dir.clear();
    }
  }
}

ProgramCache::~ProgramCache() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    for (const Job& job : queue_) entries_.erase(job.key);
    queue_.clear();
  }
  for (std::thread& t : threads_) t.join();
}

std::string ProgramCache::Key(const std::string& source,
                              const std::string& options) const {
  std::string material = fingerprint_;
  AppendField(&material, options);
  AppendField(&material, source);
  return Sha256Hex(material);
}

std::string ProgramCache::BinaryPath(const std::string& source,
                                     const std::string& options) const {
  if (options_.binary_dir.empty()) return "";
  return absl::StrCat(options_.binary_dir, "/", Key(source, options), ".bin");
}

ProgramCache::Stats ProgramCache::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

absl::StatusOr<ClProgram> ProgramCache::LoadBinary(const std::string& path,
                                                   const std::string& key,
                                                   const std::string& options) {
  absl::StatusOr<std::string> file = base::ReadWholeFile(path);
  if (!file.ok()) return file.status();
  // Layout: magic, payload length (u64 LE), SHA-256 of the payload, the raw
  // key digest, payload.
  if (file->size() < kHeaderBytes ||
      std::memcmp(file->data(), kMagic, sizeof(kMagic)) != 0) {
    return absl::DataLossError("bad header");
  }
  const uint64_t size = GetU64(file->data() + sizeof(kMagic));
  if (size == 0 || size > kMaxBinaryBytes ||
      file->size() != kHeaderBytes + size) {
    return absl::DataLossError("truncated or oversized");
  }
  const absl::string_view payload =
      absl::string_view(*file).substr(kHeaderBytes);
  const absl::string_view digest =
      absl::string_view(*file).substr(sizeof(kMagic) + 8, kDigestBytes);
  const absl::string_view key_digest = absl::string_view(*file).substr(
      sizeof(kMagic) + 8 + kDigestBytes, kDigestBytes);
  if (base::Sha256(payload) != digest) {
    return absl::DataLossError("payload checksum mismatch");
  }
  if (absl::BytesToHexString(key_digest) != key) {
    return absl::DataLossError("written for another key");
  }

  const unsigned char* bytes =
      reinterpret_cast<const unsigned char*>(payload.data());
  const size_t length = payload.size();
  cl_int binary_status = CL_SUCCESS;
  cl_int err = CL_SUCCESS;
  ClProgram program(clCreateProgramWithBinary(context_, 1, &device_, &length,
                                              &bytes, &binary_status, &err));
  if (err != CL_SUCCESS || binary_status != CL_SUCCESS) {
    return ClError("clCreateProgramWithBinary",
                   err != CL_SUCCESS ? err : binary_status);
  }
  err = clBuildProgram(program.get(), 1, &device_, options.c_str(), nullptr,
                       nullptr);
  if (err != CL_SUCCESS) return ClError("clBuildProgram (binary)", err);
  return program;
}

void ProgramCache::StoreBinary(cl_program program, const std::string& path,
                               const std::string& key) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::string> payload = ProgramBinary(program, kMaxBinaryBytes);
  if (!payload.ok()) return;
  const uint64_t size = payload->size();
  std::string file(kMagic, sizeof(kMagic));
  PutU64(&file, size);
  file += base::Sha256(*payload);
  // The key is hex of a SHA-256: store its 32 raw bytes.
  file += absl::HexStringToBytes(key);
  file += *payload;

  // Readers see the old file, no file, or the whole new one.
  if (!base::WriteFileAtomically(path, file).ok()) return;
  absl::MutexLock lock(&mu_);
  ++stats_.disk_writes;
  stats_.store_ms += base::MsSince(start);
}

ProgramCache::BuildOutcome ProgramCache::Build(const std::string& key,
                                               const std::string& source,
                                               const std::string& options) {
  std::string path;
  if (!options_.binary_dir.empty()) {
    path = absl::StrCat(options_.binary_dir, "/", key, ".bin");
    absl::StatusOr<ClProgram> loaded = LoadBinary(path, key, options);
    if (loaded.ok()) {
      absl::MutexLock lock(&mu_);
      ++stats_.disk_hits;
      return BuildOutcome{*std::move(loaded), Origin::kBinaryCache};
    }
    if (!absl::IsNotFound(loaded.status())) {
      absl::MutexLock lock(&mu_);
      ++stats_.disk_rejects;  // rebuilt from source and overwritten below
    }
  }

  // The trust boundary (docs/SECURITY.md): nothing that could make the
  // compiler read a file of this host reaches it.
  if (absl::Status s = kernel_policy::CheckKernelSource(source); !s.ok()) {
    return BuildOutcome{absl::InvalidArgumentError(
        absl::StrCat("kernel source refused: ", s.message()))};
  }
  if (absl::Status s = kernel_policy::CheckBuildOptions(options); !s.ok()) {
    return BuildOutcome{absl::InvalidArgumentError(s.message())};
  }
  const char* text = source.c_str();
  const size_t length = source.size();
  cl_int err = CL_SUCCESS;
  ClProgram program(
      clCreateProgramWithSource(context_, 1, &text, &length, &err));
  if (err != CL_SUCCESS) {
    return BuildOutcome{ClError("clCreateProgramWithSource", err)};
  }
  err = clBuildProgram(program.get(), 1, &device_, options.c_str(), nullptr,
                       nullptr);
  if (err != CL_SUCCESS) {
    return BuildOutcome{absl::InvalidArgumentError(
        absl::StrCat("clBuildProgram: ", ClErrorName(err), "\n",
                     kernel_policy::ScrubCompilerLog(
                         BuildLog(program.get(), device_, kMaxLogInBytes),
                         source, options, kMaxLogBytes)))};
  }
  if (!path.empty()) StoreBinary(program.get(), path, key);
  return BuildOutcome{std::move(program), Origin::kBuiltFromSource};
}

void ProgramCache::EvictIfFull(const std::string& keep) {
  while (ready_order_.size() >= options_.capacity && !ready_order_.empty()) {
    // Positions can be stale (a failed entry collected by Get() and asked
    // for again): a stale one must not evict the entry being finished
    // (`keep`) or one that is queued or building.
    auto it = entries_.find(ready_order_.front());
    if (it != entries_.end() && ready_order_.front() != keep &&
        (it->second.state == State::kReady ||
         it->second.state == State::kFailed)) {
      entries_.erase(it);
    }
    ready_order_.pop_front();
  }
}

void ProgramCache::Finish(const std::string& key, BuildOutcome outcome,
                          bool by_prefetch) {
  EvictIfFull(key);
  auto it = entries_.find(key);
  if (it == entries_.end()) return;  // dropped meanwhile
  Entry& entry = it->second;
  entry.by_prefetch = by_prefetch;
  entry.origin = outcome.origin;
  if (outcome.program.ok()) {
    entry.state = State::kReady;
    entry.program = *std::move(outcome.program);
    ready_order_.push_back(key);
  } else {
    // Kept until a Get() collects it, or evicted in turn if none does (a
    // prefetch of a trial that was cancelled).
    entry.state = State::kFailed;
    entry.error = outcome.program.status();
    ready_order_.push_back(key);
  }
}

absl::StatusOr<ProgramCache::Built> ProgramCache::Get(
    const std::string& source, const std::string& options) {
  const std::string key = Key(source, options);
  const auto start = std::chrono::steady_clock::now();
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it != entries_.end() && it->second.state == State::kQueued) {
    // Not started yet: build it here rather than wait behind others.
    std::erase_if(queue_, [&key](const Job& job) { return job.key == key; });
    entries_.erase(it);
    it = entries_.end();
  }
  if (it == entries_.end()) {
    ++stats_.misses;
    entries_[key].state = State::kBuilding;
    mu_.Unlock();
    BuildOutcome outcome = Build(key, source, options);
    mu_.Lock();
    Finish(key, std::move(outcome), /*by_prefetch=*/false);
    it = entries_.find(key);
    if (it == entries_.end()) {
      return absl::InternalError("program evicted while being built");
    }
    Entry& entry = it->second;
    if (entry.state == State::kFailed) {
      absl::Status error = entry.error;
      entries_.erase(it);
      return error;
    }
    entry.returned = true;
    clRetainProgram(entry.program.get());
    return Built{ClProgram(entry.program.get()), base::MsSince(start), false,
                 entry.origin};
  }

  // Ready, or being built (by the background thread or another caller).
  auto done = [this, &key]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto found = entries_.find(key);
    return found == entries_.end() || found->second.state == State::kReady ||
           found->second.state == State::kFailed;
  };
  const bool was_ready = it->second.state == State::kReady;
  mu_.Await(absl::Condition(&done));
  const double waited_ms = was_ready ? 0.0 : base::MsSince(start);
  it = entries_.find(key);
  if (it == entries_.end()) {
    return absl::InternalError("program dropped while being built");
  }
  Entry& entry = it->second;
  const bool first_of_prefetch = entry.by_prefetch && !entry.returned;
  if (entry.state == State::kFailed) {
    absl::Status error = entry.error;
    entries_.erase(it);
    return error;
  }
  ++stats_.hits;
  if (first_of_prefetch) ++stats_.prefetch_hits;
  entry.returned = true;
  clRetainProgram(entry.program.get());
  return Built{ClProgram(entry.program.get()), waited_ms, true,
               first_of_prefetch ? Origin::kPrefetched : Origin::kMemory};
}

void ProgramCache::Prefetch(const std::string& source,
                            const std::string& options) {
  std::string key = Key(source, options);
  absl::MutexLock lock(&mu_);
  if (stopping_ || entries_.contains(key)) return;
  while (queue_.size() >= std::max<size_t>(options_.max_queued_prefetches, 1)) {
    entries_.erase(queue_.front().key);
    queue_.pop_front();
  }
  entries_[key].state = State::kQueued;
  queue_.push_back(Job{std::move(key), source, options});
  if (!threads_started_) {
    threads_started_ = true;
    for (int i = 0; i < std::max(options_.prefetch_threads, 1); ++i) {
      threads_.emplace_back([this] { PrefetchLoop(); });
    }
  }
}

void ProgramCache::PrefetchLoop() {
  absl::MutexLock lock(&mu_);
  while (true) {
    auto work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_ || !queue_.empty();
    };
    mu_.Await(absl::Condition(&work));
    if (stopping_) return;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    auto it = entries_.find(job.key);
    if (it == entries_.end() || it->second.state != State::kQueued) continue;
    it->second.state = State::kBuilding;
    ++stats_.prefetches;
    ++building_in_background_;
    mu_.Unlock();
    BuildOutcome outcome = Build(job.key, job.source, job.options);
    mu_.Lock();
    --building_in_background_;
    Finish(job.key, std::move(outcome), /*by_prefetch=*/true);
  }
}

void ProgramCache::WaitForPrefetches() {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return queue_.empty() && building_in_background_ == 0;
  };
  mu_.Await(absl::Condition(&idle));
}

}  // namespace tunefleet::opencl
