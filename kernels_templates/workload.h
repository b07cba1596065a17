// Workloads: an op with concrete shapes and a dtype, e.g.
// "gemm M=512 N=512 K=512 fp32" (DESIGN.md, Vocabulary).
#ifndef TUNEFLEET_KERNELS_TEMPLATES_WORKLOAD_H_
#define TUNEFLEET_KERNELS_TEMPLATES_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet::templates {

// The largest value of one dim: kernels take dims as 32-bit ints.
inline constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1;

// What an op is: its dims in canonical order and the dtypes it supports.
struct OpSpec {
  absl::string_view name;
  std::vector<absl::string_view> dims;
  std::vector<absl::string_view> dtypes;
};

// Returns the spec of a known op, or nullptr.
const OpSpec* FindOp(absl::string_view op);

// Names of all known ops, for messages and --help.
std::vector<absl::string_view> KnownOps();

struct Dim {
  std::string name;
  int64_t value = 0;
};

// An immutable, validated workload. Copyable value type.
class Workload {
 public:
  // Validates op, dims (each of the op's dims exactly once, 1 <= value <=
  // kMaxDim) and dtype; dims are put in the op's canonical order.
  // Errors: INVALID_ARGUMENT naming the offending op, dim or dtype.
  static absl::StatusOr<Workload> Create(absl::string_view op,
                                         std::vector<Dim> dims,
                                         absl::string_view dtype = "fp32");

  // Parses a canonical string "gemm M=512 N=512 K=512 fp32".
  // Errors: as Parse().
  static absl::StatusOr<Workload> ParseCanonical(absl::string_view text);

  // Parses a shape string "M=512,N=512,K=512" (also ' ' or ';' separated).
  // Errors: INVALID_ARGUMENT naming the bad token or value.
  static absl::StatusOr<Workload> Parse(absl::string_view op,
                                        absl::string_view shape,
                                        absl::string_view dtype = "fp32");

  const std::string& op() const { return op_; }
  const std::vector<Dim>& dims() const { return dims_; }
  const std::string& dtype() const { return dtype_; }

  // Value of a dim the op defines; 0 for a name the op does not have.
  int64_t dim(absl::string_view name) const;

  // "gemm M=512 N=512 K=512 fp32": the workload's identity.
  std::string Canonical() const;
  // "M=512,N=512,K=512": the form Parse() reads.
  std::string ShapeString() const;
  // 16 hex digits of the 64-bit FNV-1a hash of Canonical(); stable across
  // builds and machines.
  std::string Hash() const;

  bool operator==(const Workload& other) const {
    return Canonical() == other.Canonical();
  }

 private:
  Workload() = default;
  std::string op_;
  std::vector<Dim> dims_;
  std::string dtype_;
};

// 64-bit FNV-1a (Fowler, Noll, Vo) of bytes, as 16 lowercase hex digits.
std::string Fnv1aHex(absl::string_view bytes);

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_WORKLOAD_H_
