#include "base/npy.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/files.h"

namespace tunefleet::base {
namespace {

static_assert(std::endian::native == std::endian::little,
              ".npy data is read as little-endian float32 in place");

constexpr absl::string_view kMagic = "\x93NUMPY";

absl::Status Bad(absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("not a float32 .npy file: ", why));
}

// A cursor over the header's dict literal: the few Python literals a .npy
// header holds (strings, True/False, tuples of ints).
class HeaderParser {
 public:
  explicit HeaderParser(absl::string_view text) : text_(text) {}

  void SkipSpace() {
    while (!text_.empty() && absl::ascii_isspace(text_.front())) {
      text_.remove_prefix(1);
    }
  }
  bool Eat(char c) {
    SkipSpace();
    if (text_.empty() || text_.front() != c) return false;
    text_.remove_prefix(1);
    return true;
  }
  bool AtEnd() {
    SkipSpace();
    return text_.empty();
  }
  // A quoted string ('...' or "..."), no escapes (none occur in a header).
  std::optional<std::string> String() {
    SkipSpace();
    if (text_.empty() || (text_.front() != '\'' && text_.front() != '"')) {
      return std::nullopt;
    }
    const char quote = text_.front();
    const size_t end = text_.find(quote, 1);
    if (end == absl::string_view::npos) return std::nullopt;
    std::string s(text_.substr(1, end - 1));
    text_.remove_prefix(end + 1);
    return s;
  }
  std::optional<bool> Bool() {
    SkipSpace();
    if (absl::ConsumePrefix(&text_, "True")) return true;
    if (absl::ConsumePrefix(&text_, "False")) return false;
    return std::nullopt;
  }
  // A tuple of non-negative ints, "(1, 3, 48, 192)", "(5,)", "()"; Python
  // 2's "5L" too. Errors name what is wrong.
  absl::StatusOr<std::vector<int64_t>> Shape() {
    if (!Eat('(')) return Bad("the header's shape is not a tuple");
    std::vector<int64_t> dims;
    while (!Eat(')')) {
      SkipSpace();
      int64_t value = 0;
      size_t digits = 0;
      while (digits < text_.size() && absl::ascii_isdigit(text_[digits])) {
        if (value > (INT64_MAX - 9) / 10) {
          return Bad("a dim of the shape is too large");
        }
        value = value * 10 + (text_[digits] - '0');
        ++digits;
      }
      if (digits == 0) {
        return Bad(
            absl::StrCat("the shape holds '",
                         text_.substr(0, std::min<size_t>(text_.size(), 16)),
                         "' where a non-negative int belongs"));
      }
      text_.remove_prefix(digits);
      Eat('L');
      dims.push_back(value);
      if (dims.size() > static_cast<size_t>(kMaxNpyDims)) {
        return Bad(absl::StrCat("the shape has over ", kMaxNpyDims, " dims"));
      }
      if (!Eat(',')) {
        if (!Eat(')')) return Bad("the header's shape tuple is not closed");
        break;
      }
    }
    return dims;
  }

 private:
  absl::string_view text_;
};

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

absl::StatusOr<Header> ParseHeader(absl::string_view text) {
  HeaderParser p(text);
  if (!p.Eat('{')) return Bad("the header is not a dict ('{...}')");
  Header h;
  std::map<std::string, bool> seen;
  while (!p.Eat('}')) {
    const std::optional<std::string> key = p.String();
    if (!key || !p.Eat(':')) return Bad("the header's dict is malformed");
    if (seen[*key]) return Bad(absl::StrCat("the header repeats '", *key, "'"));
    seen[*key] = true;
    if (*key == "descr") {
      const std::optional<std::string> descr = p.String();
      if (!descr) return Bad("the header's descr is not a string");
      h.descr = *descr;
    } else if (*key == "fortran_order") {
      const std::optional<bool> fortran = p.Bool();
      if (!fortran) return Bad("the header's fortran_order is not True/False");
      h.fortran_order = *fortran;
    } else if (*key == "shape") {
      absl::StatusOr<std::vector<int64_t>> shape = p.Shape();
      if (!shape.ok()) return shape.status();
      h.shape = *std::move(shape);
    } else {
      return Bad(absl::StrCat("the header has the unknown key '", *key, "'"));
    }
    if (!p.Eat(',')) {
      if (!p.Eat('}')) return Bad("the header's dict is not closed");
      break;
    }
  }
  if (!p.AtEnd()) return Bad("the header has text after its dict");
  for (const char* key : {"descr", "fortran_order", "shape"}) {
    if (!seen[key]) return Bad(absl::StrCat("the header has no '", key, "'"));
  }
  return h;
}

// What a dtype is, for the message that refuses it.
std::string DtypeName(absl::string_view descr) {
  static const std::map<std::string, std::string, std::less<>> names = {
      {"<f8", "float64"}, {"<f2", "float16"}, {"<i8", "int64"},
      {"<i4", "int32"},   {"<i2", "int16"},   {"|i1", "int8"},
      {"|u1", "uint8"},   {"|b1", "bool"},    {">f4", "big-endian float32"},
  };
  const auto it = names.find(descr);
  return it == names.end() ? "" : absl::StrCat(" (", it->second, ")");
}

}  // namespace

int64_t NpyArray::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

absl::StatusOr<NpyArray> ParseNpy(absl::string_view bytes) {
  if (bytes.size() < 10 || bytes.substr(0, kMagic.size()) != kMagic) {
    return Bad("it does not start with \\x93NUMPY");
  }
  const unsigned major = static_cast<unsigned char>(bytes[6]);
  const unsigned minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0) {
    return Bad(absl::StrCat("format version ", major, ".", minor,
                            " (reads 1.0, 2.0 and 3.0)"));
  }
  const auto byte = [&](size_t i) {
    return static_cast<uint64_t>(static_cast<unsigned char>(bytes[i]));
  };
  size_t prefix = 10;
  uint64_t header_length = byte(8) | byte(9) << 8;
  if (major >= 2) {
    prefix = 12;
    if (bytes.size() < prefix) return Bad("the file ends in its header");
    header_length |= byte(10) << 16 | byte(11) << 24;
  }
  if (header_length > bytes.size() - prefix) {
    return Bad("the file ends in its header");
  }
  absl::StatusOr<Header> header =
      ParseHeader(bytes.substr(prefix, header_length));
  if (!header.ok()) return header.status();
  if (header->descr != "<f4" && header->descr != "=f4") {
    return Bad(absl::StrCat("dtype '", header->descr, "'",
                            DtypeName(header->descr),
                            "; float32 ('<f4') is read: save it with "
                            "x.astype(np.float32)"));
  }
  if (header->fortran_order) {
    return Bad(
        "Fortran order; C order is read: save it with "
        "np.ascontiguousarray(x)");
  }
  const absl::string_view data = bytes.substr(prefix + header_length);
  // Every dim's product stays within the data's float count, or the data
  // cannot match: no overflow on the way.
  const uint64_t floats = data.size() / sizeof(float);
  bool too_many = false;
  uint64_t elements = 1;
  for (int64_t d : header->shape) {
    if (d == 0) elements = 0;
  }
  for (int64_t d : header->shape) {
    if (elements == 0) break;
    if (elements > floats / static_cast<uint64_t>(d)) {
      too_many = true;
      break;
    }
    elements *= static_cast<uint64_t>(d);
  }
  if (too_many || elements * sizeof(float) != data.size()) {
    return Bad(absl::StrCat(
        data.size(), " data bytes for shape ", NpyShapeString(header->shape),
        " of float32",
        too_many ? "" : absl::StrCat(" (wants ", elements * 4, ")")));
  }
  NpyArray array;
  array.shape = std::move(header->shape);
  array.data.resize(elements);
  if (elements > 0) std::memcpy(array.data.data(), data.data(), data.size());
  return array;
}

absl::StatusOr<NpyArray> ReadNpy(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadWholeFile(path, ".npy file");
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<NpyArray> array = ParseNpy(*bytes);
  if (!array.ok()) {
    return absl::Status(array.status().code(),
                        absl::StrCat(path, ": ", array.status().message()));
  }
  return array;
}

std::string SerializeNpy(const NpyArray& array) {
  std::string dict =
      absl::StrCat("{'descr': '<f4', 'fortran_order': False, 'shape': ",
                   NpyShapeString(array.shape), ", }");
  // Version 1.0 holds a header of up to 65535 bytes; padded so the data
  // starts at a multiple of 64, the header ending in '\n'.
  const bool v1 = dict.size() + 10 + 64 <= 65535;
  const size_t prefix = v1 ? 10 : 12;
  dict.append(63 - (prefix + dict.size()) % 64, ' ');
  dict.push_back('\n');
  std::string out(kMagic);
  out.push_back(static_cast<char>(v1 ? 1 : 2));
  out.push_back(0);
  const size_t n = dict.size();
  for (size_t i = 0; i < prefix - 8; ++i) {
    out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  }
  out += dict;
  out.append(reinterpret_cast<const char*>(array.data.data()),
             array.data.size() * sizeof(float));
  return out;
}

absl::Status WriteNpy(const std::string& path, const NpyArray& array) {
  if (static_cast<int64_t>(array.data.size()) != array.elements()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write ", path, ": ", array.data.size(),
                     " floats for shape ", NpyShapeString(array.shape)));
  }
  return WriteFileAtomically(path, SerializeNpy(array));
}

std::string NpyFileName(absl::string_view tensor_name) {
  std::string name(tensor_name);
  for (char& c : name) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '_' && c != '-') c = '_';
  }
  return name + ".npy";
}

std::string NpyShapeString(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return absl::StrCat("(", shape[0], ",)");
  return absl::StrCat("(", absl::StrJoin(shape, ", "), ")");
}

}  // namespace tunefleet::base
