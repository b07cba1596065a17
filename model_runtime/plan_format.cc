#include "plan_format.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <type_traits>
#include <utility>
#include <vector>

namespace tunefleet_tuned {
namespace {

constexpr char kPlanMagic[8] = {'T', 'F', 'M', 'P', 'L', 'A', 'N', '\n'};
constexpr char kWeightsMagic[8] = {'T', 'F', 'M', 'W', 'G', 'H', 'T', '\n'};
// magic, u32 version, u32 reserved, u64 length of what follows up to the
// checksum.
constexpr size_t kPrefixBytes = 24;
constexpr size_t kChecksumBytes = 8;
// Caps on counts read from a file, against allocating what a corrupt
// length asks for (a count is also checked against the bytes left).
constexpr uint64_t kMaxRank = 16;

// The plan file's fields are described once, in file order, by the
// *Fields functions below; Writer and Reader both walk them, so adding a
// field is one edit there. A field is io.Fields(kind, members...): the
// writer appends the members in that encoding, the reader parses into them
// (and checks that each member's type is the kind's).

// A field's encoding: fixed-width integers and floats little-endian (floats
// as their IEEE bits), a string as its u32 length and its bytes.
template <class T>
struct Kind {};
inline constexpr Kind<uint32_t> kU32{};
inline constexpr Kind<uint64_t> kU64{};
inline constexpr Kind<int32_t> kI32{};
inline constexpr Kind<int64_t> kI64{};
inline constexpr Kind<float> kF32{};
inline constexpr Kind<double> kF64{};
inline constexpr Kind<std::string> kStr{};

// The unsigned integer of a number's bytes.
template <class T>
using BitsOf = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

// Appends the fields it is shown.
class Writer {
 public:
  template <class T, class... V>
  void Fields(Kind<T>, const V&... v) {
    (Put<T>(v), ...);
  }
  // An enum in one byte (the reader keeps the bits of `mask`).
  template <class E>
  void Enum8(E v, uint8_t /*mask*/) {
    out_.push_back(static_cast<char>(static_cast<uint8_t>(v)));
  }
  // A list: its u32 count, then each item as `item` writes it (the limits
  // are the reader's).
  template <class T, class Item>
  void List(const std::vector<T>& items, size_t /*min_item_bytes*/, Item item,
            uint32_t /*max_items*/ = UINT32_MAX) {
    Put<uint32_t>(items.size());
    for (const T& x : items) item(x);
  }
  // A condition the reader checks on what it read.
  void Check(bool /*ok*/, const char* /*refusal*/) {}
  void Raw(const char* data, size_t size) { out_.append(data, size); }
  std::string& out() { return out_; }

 private:
  template <class T, class V>
  void Put(const V& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      Put<uint32_t>(v.size());
      out_ += v;
    } else {
      BitsOf<T> bits = 0;
      if constexpr (std::is_floating_point_v<T>) {
        const T value = v;
        std::memcpy(&bits, &value, sizeof(bits));
      } else {
        bits = static_cast<BitsOf<T>>(v);
      }
      for (size_t i = 0; i < sizeof(bits); ++i) {
        out_.push_back(
            static_cast<char>(static_cast<uint8_t>(bits >> (8 * i))));
      }
    }
  }

  std::string out_;
};

// Reads what Writer wrote into the members it is given; a read past the
// end sets failed() and reads zeros.
class Reader {
 public:
  Reader(const std::string& data, size_t begin, size_t end)
      : data_(data), pos_(begin), end_(end) {}

  bool failed() const { return failed_; }
  size_t left() const { return failed_ ? 0 : end_ - pos_; }
  // What a Check() refused ("" if none); reading stopped there.
  const std::string& refused() const { return refused_; }

  template <class T, class... V>
  void Fields(Kind<T>, V&... v) {
    static_assert((std::is_same_v<V, T> && ...), "a member of another type");
    ((v = Get<T>()), ...);
  }
  template <class E>
  void Enum8(E& v, uint8_t mask) {
    v = static_cast<E>(Bytes(1) & mask);
  }
  // A list of at most `max_items` items of at least `min_item_bytes` bytes
  // each: refused (failed) when the bytes left cannot hold its count. Items
  // are read while nothing has failed.
  template <class T, class Item>
  void List(std::vector<T>& items, size_t min_item_bytes, Item item,
            uint32_t max_items = UINT32_MAX) {
    items.clear();
    uint32_t n = Get<uint32_t>();
    if ((min_item_bytes > 0 && n > left() / min_item_bytes) || n > max_items) {
      failed_ = true;
      n = 0;
    }
    for (uint32_t i = 0; i < n && !failed_; ++i) {
      T x{};
      item(x);
      items.push_back(std::move(x));
    }
  }
  void Check(bool ok, const char* refusal) {
    if (!ok && refused_.empty()) {
      refused_ = refusal;
      failed_ = true;
    }
  }

 private:
  bool Need(size_t n) {
    if (failed_ || end_ - pos_ < n) {
      failed_ = true;
      return false;
    }
    return true;
  }
  // The next `n` bytes as a little-endian number (0 past the end).
  uint64_t Bytes(size_t n) {
    if (!Need(n)) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) {
      v |= uint64_t{static_cast<uint8_t>(data_[pos_++])} << (8 * i);
    }
    return v;
  }
  template <class T>
  T Get() {
    if constexpr (std::is_same_v<T, std::string>) {
      const uint32_t size = Get<uint32_t>();
      if (!Need(size)) return std::string();
      std::string s = data_.substr(pos_, size);
      pos_ += size;
      return s;
    } else {
      const auto bits = static_cast<BitsOf<T>>(Bytes(sizeof(T)));
      T v = 0;
      if constexpr (std::is_floating_point_v<T>) {
        std::memcpy(&v, &bits, sizeof(v));
      } else {
        v = static_cast<T>(bits);
      }
      return v;
    }
  }

  const std::string& data_;
  size_t pos_;
  size_t end_;
  bool failed_ = false;
  std::string refused_;
};

// The plan file's fields. `IO` is Writer or Reader; `T` is the struct, const
// for the writer. The number in each List() is a lower bound on an item's
// bytes (an added field keeps it one): the reader refuses a count that the
// bytes left cannot hold, before allocating.

template <class IO, class T>
void DimsField(IO& io, T& dims) {
  auto dim = [&](auto& d) { io.Fields(kI64, d); };
  io.List(dims, 8, dim, kMaxRank);
}

template <class IO, class T>
void HeaderFields(IO& io, T& h) {
  io.Fields(kStr, h.model_name, h.model_sha256, h.device_key, h.device_name,
            h.device_vendor);
  io.List(h.input_shapes, 8, [&](auto& input) {
    io.Fields(kStr, input.first);
    DimsField(io, input.second);
  });
}

template <class IO, class T>
void TensorFields(IO& io, T& t) {
  io.Fields(kStr, t.name);
  DimsField(io, t.dims);
  io.Fields(kU64, t.elements);
  io.Enum8(t.role, 3);
  io.Fields(kI32, t.alias_of, t.constant, t.first_step, t.last_step);
  io.Fields(kU64, t.offset);
}

template <class IO, class T>
void ArgFields(IO& io, T& a) {
  io.Enum8(a.kind, 0xff);
  io.Fields(kI64, a.value);
  io.Fields(kF32, a.real);
  io.Fields(kU64, a.rows, a.row_elements, a.bytes);
}

template <class IO, class T>
void CommandFields(IO& io, T& c) {
  io.Enum8(c.kind, 0xff);
  io.Fields(kI32, c.source);
  io.Fields(kStr, c.kernel_name, c.build_options);
  io.Fields(kU32, c.work_dims);
  for (auto& g : c.global) io.Fields(kU64, g);
  for (auto& l : c.local) io.Fields(kU64, l);
  io.Fields(kStr, c.library, c.routine);
  // 37: the bytes of an argument.
  io.List(c.args, 37, [&](auto& a) { ArgFields(io, a); });
  io.Check(c.kind == PlanCommand::kKernel || c.kind == PlanCommand::kLibrary,
           "a command of unknown kind");
}

template <class IO, class T>
void StepFields(IO& io, T& s) {
  io.Fields(kStr, s.label, s.workload, s.entry, s.template_name, s.config);
  io.Fields(kF64, s.estimate_ns);
  io.List(s.floats, 4, [&](auto& f) { io.Fields(kF32, f); });
  io.List(s.reads, 4, [&](auto& t) { io.Fields(kI32, t); });
  io.List(s.writes, 4, [&](auto& t) { io.Fields(kI32, t); });
  // 77: the bytes of a command without arguments.
  io.List(s.commands, 77, [&](auto& c) { CommandFields(io, c); });
}

// The plan after its header and the weights' size and checksum.
template <class IO, class T>
void BodyFields(IO& io, T& p) {
  io.List(p.sources, 4, [&](auto& s) { io.Fields(kStr, s); });
  io.Fields(kI32, p.image_pack_source);
  io.List(p.tensors, 40, [&](auto& t) { TensorFields(io, t); });
  io.List(p.constants, 32, [&](auto& c) {
    io.Fields(kU64, c.elements, c.weights_offset, c.image_rows, c.image_width);
  });
  io.List(p.steps, 40, [&](auto& s) { StepFields(io, s); });
  io.List(p.inputs, 4, [&](auto& t) { io.Fields(kI32, t); });
  io.List(p.outputs, 4, [&](auto& t) { io.Fields(kI32, t); });
  io.Fields(kU64, p.memory.alignment, p.memory.arena_bytes,
            p.memory.tensor_bytes);
  io.List(p.memory.scratch_bytes, 8, [&](auto& b) { io.Fields(kU64, b); });
}

// The file's prefix and checksum, then the payload's range. `what`: "plan
// file" or "weights file".
int32_t CheckFile(const std::string& file, const char* magic, const char* what,
                  size_t* begin, size_t* end, std::string* error) {
  if (file.size() < 8 || std::memcmp(file.data(), magic, 8) != 0) {
    *error = std::string(what) + ": not a tunefleet model " +
             (magic == kPlanMagic ? "plan" : "weights") +
             " file (its first bytes are not the format's magic)";
    return kPlanNotAPlan;
  }
  if (file.size() < kPrefixBytes) {
    *error = std::string(what) + ": truncated: " + std::to_string(file.size()) +
             " bytes, shorter than its header";
    return kPlanTruncated;
  }
  Reader prefix(file, 8, kPrefixBytes);
  uint32_t version = 0, reserved = 0;
  uint64_t length = 0;
  prefix.Fields(kU32, version, reserved);
  prefix.Fields(kU64, length);
  if (version != kPlanFormatVersion) {
    *error = std::string(what) + ": format version " + std::to_string(version) +
             "; this runtime reads version " +
             std::to_string(kPlanFormatVersion) +
             ": emit the plan again with this tunefleet";
    return kPlanVersion;
  }
  const bool short_file = length > file.size() ||
                          file.size() < kPrefixBytes + length + kChecksumBytes;
  if (short_file) {
    *error = std::string(what) + ": truncated: " + std::to_string(file.size()) +
             " bytes, its header says " +
             (length > file.size()
                  ? std::to_string(length) + " + " +
                        std::to_string(kPrefixBytes + kChecksumBytes)
                  : std::to_string(kPrefixBytes + length + kChecksumBytes)) +
             " (a partial copy?)";
    return kPlanTruncated;
  }
  const uint64_t whole = kPrefixBytes + length + kChecksumBytes;
  if (file.size() > whole) {
    *error = std::string(what) + ": " + std::to_string(file.size() - whole) +
             " bytes after its end: not one file of the format";
    return kPlanCorrupt;
  }
  Reader sum_reader(file, kPrefixBytes + length, whole);
  uint64_t sum = 0;
  sum_reader.Fields(kU64, sum);
  if (sum != Fnv1a64(file.data(), kPrefixBytes + length)) {
    *error = std::string(what) + ": checksum mismatch: the file is corrupt";
    return kPlanCorrupt;
  }
  *begin = kPrefixBytes;
  *end = kPrefixBytes + length;
  return 0;
}

std::string Finish(const char* magic, std::string payload) {
  Writer w;
  w.Raw(magic, 8);
  w.Fields(kU32, kPlanFormatVersion, 0);  // the version, reserved
  w.Fields(kU64, payload.size());
  w.Raw(payload.data(), payload.size());
  const uint64_t sum = Fnv1a64(w.out().data(), w.out().size());
  w.Fields(kU64, sum);
  return std::move(w.out());
}

void ReadHeader(Reader& r, PlanHeader* h) {
  h->format_version = kPlanFormatVersion;
  HeaderFields(r, *h);
}

std::string Lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Short(const std::string& sha) {
  return sha.size() > 16 ? sha.substr(0, 16) + "..." : sha;
}

// Checks every index of a decoded plan; returns "" or what is wrong.
std::string Validate(const Plan& p) {
  const auto tensors = static_cast<int64_t>(p.tensors.size());
  const auto constants = static_cast<int64_t>(p.constants.size());
  auto in = [](int64_t v, int64_t n) { return v >= 0 && v < n; };
  for (size_t c = 0; c < p.constants.size(); ++c) {
    const PlanConstant& k = p.constants[c];
    const uint64_t floats =
        k.image_width > 0 ? k.image_rows * k.image_width * 4 : k.elements;
    if (k.weights_offset % 4 != 0 || k.weights_offset > p.weights.size() ||
        floats > (p.weights.size() - k.weights_offset) / 4) {
      return "constant " + std::to_string(c) + " lies outside the weights";
    }
  }
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const PlanTensor& x = p.tensors[t];
    uint64_t elements = 1;
    for (int64_t d : x.dims) {
      if (d < 1 || d > (int64_t{1} << 40)) {
        return "tensor '" + x.name + "' has a dim out of range";
      }
      elements *= static_cast<uint64_t>(d);
      if (elements > (uint64_t{1} << 40)) {
        return "tensor '" + x.name + "' is too large";
      }
    }
    if (elements != x.elements) {
      return "tensor '" + x.name + "': elements differ from its dims";
    }
    if (x.alias_of >= 0 &&
        (!in(x.alias_of, tensors) || p.tensors[x.alias_of].alias_of >= 0 ||
         p.tensors[x.alias_of].elements != x.elements)) {
      return "tensor '" + x.name + "' is a view of a tensor it cannot be";
    }
    if (x.constant >= 0 && (!in(x.constant, constants) ||
                            p.constants[x.constant].elements != x.elements)) {
      return "tensor '" + x.name + "' names a constant it cannot be";
    }
    if (x.alias_of < 0 && x.constant < 0 &&
        x.offset + x.elements * 4 > p.memory.arena_bytes) {
      return "tensor '" + x.name + "' lies outside the arena";
    }
  }
  for (int32_t t : p.inputs) {
    if (!in(t, tensors)) return "a graph input names no tensor";
  }
  for (int32_t t : p.outputs) {
    if (!in(t, tensors)) return "a graph output names no tensor";
  }
  if (p.image_pack_source >= 0 &&
      !in(p.image_pack_source, static_cast<int64_t>(p.sources.size()))) {
    return "the image-packing source is missing";
  }
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const PlanStep& step = p.steps[s];
    const std::string where =
        "step " + std::to_string(s) + " ('" + step.label + "')";
    for (int32_t t : step.reads) {
      if (!in(t, tensors)) return where + " reads no tensor";
    }
    for (int32_t t : step.writes) {
      if (!in(t, tensors)) return where + " writes no tensor";
    }
    for (const PlanCommand& c : step.commands) {
      if (c.kind == PlanCommand::kKernel &&
          (!in(c.source, static_cast<int64_t>(p.sources.size())) ||
           c.work_dims < 1 || c.work_dims > 3)) {
        return where + " has a kernel without a source or NDRange";
      }
      for (const PlanArg& a : c.args) {
        switch (a.kind) {
          case PlanArg::kTensor:
          case PlanArg::kTensorImage:
            if (!in(a.value, tensors)) return where + " names no tensor";
            if (a.kind == PlanArg::kTensorImage &&
                (a.rows == 0 || a.row_elements == 0 ||
                 a.rows * a.row_elements > p.tensors[a.value].elements ||
                 (a.row_elements % 4 != 0 && p.image_pack_source < 0))) {
              return where + " reads an image its tensor cannot fill";
            }
            break;
          case PlanArg::kConstant:
            if (!in(a.value, constants)) return where + " names no constant";
            break;
          case PlanArg::kScratch:
            if (!in(a.value,
                    static_cast<int64_t>(p.memory.scratch_bytes.size())) ||
                p.memory.scratch_bytes[a.value] < a.bytes) {
              return where + " names a scratch buffer the plan lacks";
            }
            break;
          case PlanArg::kInt:
          case PlanArg::kFloat:
          case PlanArg::kNull:
            break;
          default:
            return where + " has an argument of unknown kind";
        }
      }
    }
  }
  return "";
}

}  // namespace

uint64_t Fnv1a64(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 14695981039346656037ULL;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

void EncodePlan(const Plan& plan, std::string* plan_file,
                std::string* weights_file) {
  const uint64_t weights_sum =
      Fnv1a64(plan.weights.data(), plan.weights.size());
  Writer w;
  HeaderFields(w, plan.header);
  w.Fields(kU64, plan.weights.size(), weights_sum);
  BodyFields(w, plan);
  *plan_file = Finish(kPlanMagic, std::move(w.out()));

  Writer weights;
  weights.Fields(kStr, plan.header.model_sha256, plan.header.device_key);
  weights.Fields(kU64, plan.weights.size());
  weights.Raw(plan.weights.data(), plan.weights.size());
  *weights_file = Finish(kWeightsMagic, std::move(weights.out()));
}

int32_t DecodePlanHeader(const std::string& plan_file, PlanHeader* out,
                         std::string* error) {
  size_t begin = 0, end = 0;
  const int32_t code =
      CheckFile(plan_file, kPlanMagic, "plan file", &begin, &end, error);
  if (code != 0) return code;
  Reader r(plan_file, begin, end);
  ReadHeader(r, out);
  if (r.failed()) {
    *error = "plan file: its header is corrupt";
    return kPlanCorrupt;
  }
  return 0;
}

int32_t DecodePlan(const std::string& plan_file,
                   const std::string& weights_file,
                   const PlanExpectations& expect, Plan* out,
                   std::string* error) {
  size_t begin = 0, end = 0;
  int32_t code =
      CheckFile(plan_file, kPlanMagic, "plan file", &begin, &end, error);
  if (code != 0) return code;
  Plan p;
  Reader r(plan_file, begin, end);
  ReadHeader(r, &p.header);
  uint64_t weights_bytes = 0, weights_sum = 0;
  r.Fields(kU64, weights_bytes, weights_sum);
  if (r.failed()) {
    *error = "plan file: its header is corrupt";
    return kPlanCorrupt;
  }
  const PlanHeader& h = p.header;
  if (!expect.model_sha256.empty() &&
      Lower(expect.model_sha256) != Lower(h.model_sha256)) {
    *error = "plan file: made for another model: the plan is of '" +
             h.model_name + "' (SHA-256 " + Short(h.model_sha256) +
             "), the model given has SHA-256 " +
             Short(Lower(expect.model_sha256)) +
             ": emit the plan again for this model";
    return kPlanOtherModel;
  }
  if (!expect.device_key.empty() && expect.device_key != h.device_key) {
    *error = "plan file: made for device key '" + h.device_key + "', not '" +
             expect.device_key +
             "': use that key's plan, or emit one for this key";
    return kPlanOtherDevice;
  }
  // Weights: their own header, then the plan's size and checksum.
  size_t wbegin = 0, wend = 0;
  code = CheckFile(weights_file, kWeightsMagic, "weights file", &wbegin, &wend,
                   error);
  if (code != 0) return code;
  Reader wr(weights_file, wbegin, wend);
  std::string w_sha, w_key;
  uint64_t w_size = 0;
  wr.Fields(kStr, w_sha, w_key);
  wr.Fields(kU64, w_size);
  if (wr.failed() || w_size != wr.left()) {
    *error = "weights file: its header is corrupt";
    return kPlanCorrupt;
  }
  if (Lower(w_sha) != Lower(h.model_sha256) || w_key != h.device_key) {
    *error = "weights file: of model SHA-256 " + Short(w_sha) +
             " and device key '" + w_key + "', the plan's are " +
             Short(h.model_sha256) + " and '" + h.device_key +
             "': use the weights emitted with this plan";
    return kPlanWeightsMismatch;
  }
  if (w_size != weights_bytes ||
      Fnv1a64(weights_file.data() + (wend - w_size), w_size) != weights_sum) {
    *error =
        "weights file: not the weights of this plan (another emit of the same "
        "model and key): use the weights emitted with this plan";
    return kPlanWeightsMismatch;
  }
  p.weights = weights_file.substr(wend - w_size, w_size);

  BodyFields(r, p);
  if (!r.refused().empty()) {
    *error = "plan file: " + r.refused();
    return kPlanCorrupt;
  }
  if (r.failed() || r.left() != 0) {
    *error =
        "plan file: its contents do not parse (corrupt, or written by "
        "another build of the same format version)";
    return kPlanCorrupt;
  }
  const std::string invalid = Validate(p);
  if (!invalid.empty()) {
    *error = "plan file: corrupt: " + invalid;
    return kPlanCorrupt;
  }
  *out = std::move(p);
  return 0;
}

int32_t ReadWholeFile(const std::string& path, std::string* out,
                      std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot open " + path + ": " + std::strerror(errno);
    return kPlanUnreadable;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    *error = "cannot read " + path;
    return kPlanUnreadable;
  }
  *out = buffer.str();
  return 0;
}

}  // namespace tunefleet_tuned
