#include "plan_format.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

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

class Writer {
 public:
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U32(uint32_t v) {
    for (int i = 0; i < 4; ++i) U8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) U8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void I32(int32_t v) { U32(static_cast<uint32_t>(v)); }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void F32(float v) {
    uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof(bits));
    U32(bits);
  }
  void F64(double v) {
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(bits));
    U64(bits);
  }
  void Str(const std::string& s) {
    U32(static_cast<uint32_t>(s.size()));
    out_ += s;
  }
  void Raw(const char* data, size_t size) { out_.append(data, size); }
  std::string& out() { return out_; }

 private:
  std::string out_;
};

// Reads what Writer wrote; a read past the end sets failed() and returns
// zeros.
class Reader {
 public:
  Reader(const std::string& data, size_t begin, size_t end)
      : data_(data), pos_(begin), end_(end) {}

  bool failed() const { return failed_; }
  void Fail() { failed_ = true; }
  size_t left() const { return failed_ ? 0 : end_ - pos_; }

  uint8_t U8() {
    if (!Need(1)) return 0;
    return static_cast<uint8_t>(data_[pos_++]);
  }
  uint32_t U32() {
    if (!Need(4)) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      v |= uint32_t{static_cast<uint8_t>(data_[pos_++])} << (8 * i);
    }
    return v;
  }
  uint64_t U64() {
    if (!Need(8)) return 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) {
      v |= uint64_t{static_cast<uint8_t>(data_[pos_++])} << (8 * i);
    }
    return v;
  }
  int32_t I32() { return static_cast<int32_t>(U32()); }
  int64_t I64() { return static_cast<int64_t>(U64()); }
  float F32() {
    const uint32_t bits = U32();
    float v = 0;
    std::memcpy(&v, &bits, sizeof(v));
    return v;
  }
  double F64() {
    const uint64_t bits = U64();
    double v = 0;
    std::memcpy(&v, &bits, sizeof(v));
    return v;
  }
  std::string Str() {
    const uint32_t size = U32();
    if (!Need(size)) return std::string();
    std::string s = data_.substr(pos_, size);
    pos_ += size;
    return s;
  }
  // A count of items of at least `item_bytes` bytes each: refused (failed)
  // when the bytes left cannot hold them.
  uint32_t Count(size_t item_bytes) {
    const uint32_t n = U32();
    if (item_bytes > 0 && n > left() / item_bytes) {
      failed_ = true;
      return 0;
    }
    return n;
  }

 private:
  bool Need(size_t n) {
    if (failed_ || end_ - pos_ < n) {
      failed_ = true;
      return false;
    }
    return true;
  }

  const std::string& data_;
  size_t pos_;
  size_t end_;
  bool failed_ = false;
};

void WriteDims(Writer& w, const std::vector<int64_t>& dims) {
  w.U32(static_cast<uint32_t>(dims.size()));
  for (int64_t d : dims) w.I64(d);
}

std::vector<int64_t> ReadDims(Reader& r) {
  const uint32_t rank = r.Count(8);
  std::vector<int64_t> dims;
  if (rank > kMaxRank) {
    r.Fail();
    return dims;
  }
  for (uint32_t i = 0; i < rank; ++i) dims.push_back(r.I64());
  return dims;
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
  const uint32_t version = prefix.U32();
  prefix.U32();  // reserved
  const uint64_t length = prefix.U64();
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
  Reader sum(file, kPrefixBytes + length, whole);
  if (sum.U64() != Fnv1a64(file.data(), kPrefixBytes + length)) {
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
  w.U32(kPlanFormatVersion);
  w.U32(0);
  w.U64(payload.size());
  w.Raw(payload.data(), payload.size());
  const uint64_t sum = Fnv1a64(w.out().data(), w.out().size());
  w.U64(sum);
  return std::move(w.out());
}

void WriteHeader(Writer& w, const PlanHeader& h) {
  w.Str(h.model_name);
  w.Str(h.model_sha256);
  w.Str(h.device_key);
  w.Str(h.device_name);
  w.Str(h.device_vendor);
  w.U32(static_cast<uint32_t>(h.input_shapes.size()));
  for (const auto& [name, dims] : h.input_shapes) {
    w.Str(name);
    WriteDims(w, dims);
  }
}

void ReadHeader(Reader& r, PlanHeader* h) {
  h->format_version = kPlanFormatVersion;
  h->model_name = r.Str();
  h->model_sha256 = r.Str();
  h->device_key = r.Str();
  h->device_name = r.Str();
  h->device_vendor = r.Str();
  const uint32_t inputs = r.Count(8);
  h->input_shapes.clear();
  for (uint32_t i = 0; i < inputs && !r.failed(); ++i) {
    std::string name = r.Str();
    std::vector<int64_t> dims = ReadDims(r);
    h->input_shapes.emplace_back(std::move(name), std::move(dims));
  }
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
  WriteHeader(w, plan.header);
  w.U64(plan.weights.size());
  w.U64(weights_sum);
  w.U32(static_cast<uint32_t>(plan.sources.size()));
  for (const std::string& s : plan.sources) w.Str(s);
  w.I32(plan.image_pack_source);
  w.U32(static_cast<uint32_t>(plan.tensors.size()));
  for (const PlanTensor& t : plan.tensors) {
    w.Str(t.name);
    WriteDims(w, t.dims);
    w.U64(t.elements);
    w.U8(t.role);
    w.I32(t.alias_of);
    w.I32(t.constant);
    w.I32(t.first_step);
    w.I32(t.last_step);
    w.U64(t.offset);
  }
  w.U32(static_cast<uint32_t>(plan.constants.size()));
  for (const PlanConstant& c : plan.constants) {
    w.U64(c.elements);
    w.U64(c.weights_offset);
    w.U64(c.image_rows);
    w.U64(c.image_width);
  }
  w.U32(static_cast<uint32_t>(plan.steps.size()));
  for (const PlanStep& s : plan.steps) {
    w.Str(s.label);
    w.Str(s.workload);
    w.Str(s.entry);
    w.Str(s.template_name);
    w.Str(s.config);
    w.F64(s.estimate_ns);
    w.U32(static_cast<uint32_t>(s.floats.size()));
    for (float f : s.floats) w.F32(f);
    w.U32(static_cast<uint32_t>(s.reads.size()));
    for (int32_t t : s.reads) w.I32(t);
    w.U32(static_cast<uint32_t>(s.writes.size()));
    for (int32_t t : s.writes) w.I32(t);
    w.U32(static_cast<uint32_t>(s.commands.size()));
    for (const PlanCommand& c : s.commands) {
      w.U8(c.kind);
      w.I32(c.source);
      w.Str(c.kernel_name);
      w.Str(c.build_options);
      w.U32(c.work_dims);
      for (uint64_t g : c.global) w.U64(g);
      for (uint64_t l : c.local) w.U64(l);
      w.Str(c.library);
      w.Str(c.routine);
      w.U32(static_cast<uint32_t>(c.args.size()));
      for (const PlanArg& a : c.args) {
        w.U8(a.kind);
        w.I64(a.value);
        w.F32(a.real);
        w.U64(a.rows);
        w.U64(a.row_elements);
        w.U64(a.bytes);
      }
    }
  }
  w.U32(static_cast<uint32_t>(plan.inputs.size()));
  for (int32_t t : plan.inputs) w.I32(t);
  w.U32(static_cast<uint32_t>(plan.outputs.size()));
  for (int32_t t : plan.outputs) w.I32(t);
  w.U64(plan.memory.alignment);
  w.U64(plan.memory.arena_bytes);
  w.U64(plan.memory.tensor_bytes);
  w.U32(static_cast<uint32_t>(plan.memory.scratch_bytes.size()));
  for (uint64_t b : plan.memory.scratch_bytes) w.U64(b);
  *plan_file = Finish(kPlanMagic, std::move(w.out()));

  Writer weights;
  weights.Str(plan.header.model_sha256);
  weights.Str(plan.header.device_key);
  weights.U64(plan.weights.size());
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
  const uint64_t weights_bytes = r.U64();
  const uint64_t weights_sum = r.U64();
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
  const std::string w_sha = wr.Str();
  const std::string w_key = wr.Str();
  const uint64_t w_size = wr.U64();
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

  const uint32_t sources = r.Count(4);
  for (uint32_t i = 0; i < sources && !r.failed(); ++i) {
    p.sources.push_back(r.Str());
  }
  p.image_pack_source = r.I32();
  const uint32_t tensors = r.Count(40);
  for (uint32_t i = 0; i < tensors && !r.failed(); ++i) {
    PlanTensor t;
    t.name = r.Str();
    t.dims = ReadDims(r);
    t.elements = r.U64();
    const uint8_t role = r.U8();
    t.role = static_cast<PlanTensor::Role>(role & 3);
    t.alias_of = r.I32();
    t.constant = r.I32();
    t.first_step = r.I32();
    t.last_step = r.I32();
    t.offset = r.U64();
    p.tensors.push_back(std::move(t));
  }
  const uint32_t constants = r.Count(32);
  for (uint32_t i = 0; i < constants && !r.failed(); ++i) {
    PlanConstant c;
    c.elements = r.U64();
    c.weights_offset = r.U64();
    c.image_rows = r.U64();
    c.image_width = r.U64();
    p.constants.push_back(c);
  }
  const uint32_t steps = r.Count(40);
  for (uint32_t i = 0; i < steps && !r.failed(); ++i) {
    PlanStep s;
    s.label = r.Str();
    s.workload = r.Str();
    s.entry = r.Str();
    s.template_name = r.Str();
    s.config = r.Str();
    s.estimate_ns = r.F64();
    const uint32_t floats = r.Count(4);
    for (uint32_t f = 0; f < floats; ++f) s.floats.push_back(r.F32());
    const uint32_t reads = r.Count(4);
    for (uint32_t t = 0; t < reads; ++t) s.reads.push_back(r.I32());
    const uint32_t writes = r.Count(4);
    for (uint32_t t = 0; t < writes; ++t) s.writes.push_back(r.I32());
    const uint32_t commands = r.Count(77);  // bytes of an empty command
    for (uint32_t c = 0; c < commands && !r.failed(); ++c) {
      PlanCommand cmd;
      cmd.kind = static_cast<PlanCommand::Kind>(r.U8());
      cmd.source = r.I32();
      cmd.kernel_name = r.Str();
      cmd.build_options = r.Str();
      cmd.work_dims = r.U32();
      for (uint64_t& g : cmd.global) g = r.U64();
      for (uint64_t& l : cmd.local) l = r.U64();
      cmd.library = r.Str();
      cmd.routine = r.Str();
      const uint32_t args = r.Count(37);  // bytes of one argument
      for (uint32_t a = 0; a < args; ++a) {
        PlanArg arg;
        arg.kind = static_cast<PlanArg::Kind>(r.U8());
        arg.value = r.I64();
        arg.real = r.F32();
        arg.rows = r.U64();
        arg.row_elements = r.U64();
        arg.bytes = r.U64();
        cmd.args.push_back(arg);
      }
      if (cmd.kind != PlanCommand::kKernel &&
          cmd.kind != PlanCommand::kLibrary) {
        *error = "plan file: a command of unknown kind";
        return kPlanCorrupt;
      }
      s.commands.push_back(std::move(cmd));
    }
    p.steps.push_back(std::move(s));
  }
  const uint32_t inputs = r.Count(4);
  for (uint32_t i = 0; i < inputs; ++i) p.inputs.push_back(r.I32());
  const uint32_t outputs = r.Count(4);
  for (uint32_t i = 0; i < outputs; ++i) p.outputs.push_back(r.I32());
  p.memory.alignment = r.U64();
  p.memory.arena_bytes = r.U64();
  p.memory.tensor_bytes = r.U64();
  const uint32_t scratch = r.Count(8);
  for (uint32_t i = 0; i < scratch; ++i)
    p.memory.scratch_bytes.push_back(r.U64());
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
