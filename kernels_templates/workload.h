// Workloads: an op with concrete shapes, attributes and a dtype, e.g.
// "gemm M=512 N=512 K=512 fp32" or "conv2d N=1 C=16 ... G=1 fp32
// act=hardswish affine=scale_shift" (docs/ARCHITECTURE.md, Words).
#ifndef TUNEFLEET_KERNELS_TEMPLATES_WORKLOAD_H_
#define TUNEFLEET_KERNELS_TEMPLATES_WORKLOAD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet::templates {

// The largest value of one dim: kernels take dims as 32-bit ints.
inline constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1;
// The largest product of a workload's shape dims (those with
// DimSpec::in_shape_product, each read as at least 1): 2^53, the largest
// integer a double holds exactly. Every tensor size and FLOP count of a
// template is bounded by a small multiple of it, so none overflows int64
// or uint64 and FLOP counts stay exact. Strides, offsets and buffer sizes
// (copy's, fill's) are not shape dims: each is at most kMaxDim.
inline constexpr int64_t kMaxShapeProduct = int64_t{1} << 53;
// Most dims and attributes a workload may name (ops have at most 22 dims:
// copy).
inline constexpr size_t kMaxWorkloadDims = 32;
inline constexpr size_t kMaxWorkloadAttrs = 16;

// Element type of a workload's tensors in device memory: fp32, or fp16
// storage (IEEE 754 binary16; arithmetic stays fp32).
enum class Dtype { kFp32, kFp16 };

// "fp32", "fp16".
absl::string_view DtypeName(Dtype dtype);
// The dtype named `name`. Errors: INVALID_ARGUMENT "unknown dtype '<name>';
// known: fp32, fp16".
absl::StatusOr<Dtype> ParseDtype(absl::string_view name);
// Bytes of one element: 4 for fp32, 2 for fp16.
int ElementBytes(Dtype dtype);

// One dim of an op: its name, and a default when it may be left out.
struct DimSpec {
  absl::string_view name;
  std::optional<int64_t> default_value;  // required when unset
  int64_t min_value = 1;
  // Whether the dim is an extent of the computation and counts in the
  // kMaxShapeProduct bound; false for strides, offsets and buffer sizes
  // (copy's IS0..IS5, IO, OS0..OS5, OO, IE, OE; fill's O, OE).
  bool in_shape_product = true;
};

// One string attribute of an op, its values and the default (left out of
// canonical strings).
struct AttrSpec {
  absl::string_view name;
  std::vector<absl::string_view> values;  // values[0] is the default
};

// What an op is: its dims in canonical order, attributes and dtypes.
struct OpSpec {
  absl::string_view name;
  std::vector<DimSpec> dims;
  std::vector<AttrSpec> attrs;
  std::vector<Dtype> dtypes;  // empty: fp32 only
};

// Returns the spec of a known op, or nullptr. Thread-safe.
const OpSpec* FindOp(absl::string_view op);

// Adds an op (a user template's). Its names are copied. Errors:
// ALREADY_EXISTS when an op of that name exists with other dims;
// INVALID_ARGUMENT for an empty name or no dims. Registering the same op
// again is OK.
absl::Status RegisterOp(const OpSpec& spec);

// Names of all known ops, for messages and --help.
std::vector<absl::string_view> KnownOps();

struct Dim {
  std::string name;
  int64_t value = 0;
};

struct Attr {
  std::string name;
  std::string value;
};

// An immutable, validated workload. Copyable value type.
class Workload {
 public:
  // Validates op, dims (each required dim exactly once, optional ones
  // defaulted, min <= value <= kMaxDim, the product of those in the shape
  // product <= kMaxShapeProduct),
  // attrs (each at most once) and dtype; puts dims and attrs in the op's
  // canonical order. Errors: INVALID_ARGUMENT naming the offending op, dim,
  // attr or dtype, or the dims whose product is too large.
  static absl::StatusOr<Workload> Create(absl::string_view op,
                                         std::vector<Dim> dims,
                                         Dtype dtype = Dtype::kFp32,
                                         std::vector<Attr> attrs = {});
  // As above, for the op `spec` whether or not it is registered (a user
  // template's new op before its submission is accepted,
  // registry.h PendingTemplate). A workload of an op with attributes
  // needs the op registered for Canonical() and ShapeString().
  static absl::StatusOr<Workload> Create(const OpSpec& spec,
                                         std::vector<Dim> dims,
                                         Dtype dtype = Dtype::kFp32,
                                         std::vector<Attr> attrs = {});

  // Parses a shape string "M=512,N=512,K=512" (also ' ' or ';' separated);
  // tokens naming an attribute ("act=relu") set it; `dtype` is a dtype's
  // name. Errors: as Create, and INVALID_ARGUMENT naming a malformed token,
  // a non-integer dim or an unknown dtype.
  static absl::StatusOr<Workload> Parse(absl::string_view op,
                                        absl::string_view shape,
                                        absl::string_view dtype = "fp32");

  // Parses a canonical string "gemm M=512 N=512 K=512 fp32 [attr=v ...]".
  static absl::StatusOr<Workload> ParseCanonical(absl::string_view text);

  const std::string& op() const { return op_; }
  const std::vector<Dim>& dims() const { return dims_; }
  // Every attribute of the op, defaults included, in canonical order.
  const std::vector<Attr>& attrs() const { return attrs_; }
  Dtype dtype() const { return dtype_; }

  // Value of a dim the op defines; 0 for a name the op does not have.
  int64_t dim(absl::string_view name) const;
  // Value of an attribute; "" for a name the op does not have.
  const std::string& attr(absl::string_view name) const;

  // "conv2d N=1 ... G=1 fp32 act=relu": the workload's identity. Attributes
  // at their default are left out.
  std::string Canonical() const;
  // "M=512,N=512,K=512[,act=relu]": the form Parse() reads.
  std::string ShapeString() const;
  // 16 hex digits of the 64-bit FNV-1a hash of Canonical(); stable across
  // builds and machines.
  std::string Hash() const;

  bool operator==(const Workload& other) const {
    return Canonical() == other.Canonical();
  }

 private:
  Workload() = default;
  // Attributes away from their default, in canonical order.
  std::vector<const Attr*> NonDefaultAttrs() const;

  std::string op_;
  std::vector<Dim> dims_;
  std::vector<Attr> attrs_;
  Dtype dtype_ = Dtype::kFp32;
};

// Whether `w` leaves a template buffer named `buffer` unread: its op has an
// attribute of that name whose default value is "none" (the "residual" of
// conv2d, depthwise_conv2d, dense and eltwise) and `w` has it at "none".
// False for any other buffer, and for an op that is not registered.
bool BufferUnread(const Workload& w, absl::string_view buffer);

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_WORKLOAD_H_
