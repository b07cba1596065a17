#include "base/printable.h"

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace tunefleet::base {
namespace {

// The code point of the UTF-8 sequence at `text[i]` and its length in
// bytes; length 0 when it is malformed (overlong, surrogate, past U+10FFFF,
// cut short).
struct Decoded {
  uint32_t code = 0;
  size_t length = 0;
};

Decoded Decode(absl::string_view text, size_t i) {
  const auto byte = [&](size_t k) {
    return static_cast<unsigned char>(text[k]);
  };
  const unsigned char b = byte(i);
  if (b < 0x80) return {b, 1};
  size_t length = 0;
  uint32_t code = 0;
  uint32_t min = 0;
  if ((b & 0xe0) == 0xc0) {
    length = 2, code = b & 0x1f, min = 0x80;
  } else if ((b & 0xf0) == 0xe0) {
    length = 3, code = b & 0x0f, min = 0x800;
  } else if ((b & 0xf8) == 0xf0) {
    length = 4, code = b & 0x07, min = 0x10000;
  } else {
    return {};
  }
  if (i + length > text.size()) return {};
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return {};
    code = (code << 6) | (byte(i + k) & 0x3f);
  }
  if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
    return {};
  }
  return {code, length};
}

bool IsRefused(uint32_t code) {
  return code < 0x20 || code == 0x7f || (code >= 0x80 && code <= 0x9f) ||
         code == 0x061c || code == 0x200e || code == 0x200f ||
         (code >= 0x2028 && code <= 0x202e) ||
         (code >= 0x2066 && code <= 0x2069);
}

}  // namespace

bool IsPrintable(absl::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const Decoded d = Decode(text, i);
    if (d.length == 0 || IsRefused(d.code)) return false;
    i += d.length;
  }
  return true;
}

std::string EscapeUnprintable(absl::string_view text) {
  if (IsPrintable(text)) return std::string(text);
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const Decoded d = Decode(text, i);
    if (d.length == 0) {
      absl::StrAppend(
          &out, "\\x",
          absl::Hex(static_cast<unsigned char>(text[i]), absl::kZeroPad2));
      ++i;
      continue;
    }
    if (d.code == '\\') {
      out += "\\\\";
    } else if (d.code == '\n') {
      out += "\\n";
    } else if (d.code == '\t') {
      out += "\\t";
    } else if (d.code == '\r') {
      out += "\\r";
    } else if (d.code < 0x20 || d.code == 0x7f) {
      absl::StrAppend(&out, "\\x", absl::Hex(d.code, absl::kZeroPad2));
    } else if (IsRefused(d.code)) {
      absl::StrAppend(&out, "\\u{", absl::Hex(d.code, absl::kZeroPad4), "}");
    } else {
      absl::StrAppend(&out, text.substr(i, d.length));
    }
    i += d.length;
  }
  return out;
}

}  // namespace tunefleet::base
