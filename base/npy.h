// NumPy's .npy files of float32 arrays: the model inputs and outputs that
// `tunefleet run` reads and saves and the tests compare with ONNX Runtime's
// (docs/ORT_ORACLE.md). The format is NumPy's (numpy/lib/format.py,
// "NEP 1"):
//   bytes 0-5   the magic "\x93NUMPY"
//   bytes 6, 7  the format version, major and minor: 1.0, 2.0 or 3.0
//   then the header's length: uint16 little-endian (1.0) or uint32 (2.0,
//   3.0), then the header: a Python dict literal with exactly the keys
//   'descr' (the dtype, '<f4' for little-endian float32), 'fortran_order'
//   (True or False) and 'shape' (a tuple of ints), padded with spaces and
//   ended by '\n' so that the data starts at a multiple of 64 bytes; then
//   the data, row-major (C order) when fortran_order is False.
// Only little-endian float32 in C order is read; anything else is refused
// with the reason and what to do (e.g. `x.astype(np.float32)`). Own code
// rather than xtensor's xt::load_npy (libxtensor-dev): that one throws
// exceptions, does not notice a truncated file and would pull xtensor's
// templates into the CLI for ~200 lines of parsing.
#ifndef TUNEFLEET_BASE_NPY_H_
#define TUNEFLEET_BASE_NPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet::base {

// A float32 array in row-major (C) order.
struct NpyArray {
  std::vector<int64_t> shape;  // empty for a 0-d array (one element)
  std::vector<float> data;     // the product of `shape` elements

  // The product of the shape's dims (1 for a 0-d array).
  int64_t elements() const;
};

// The most dims an array may have (NumPy's own limit is 64).
inline constexpr int kMaxNpyDims = 32;

// Parses the bytes of a .npy file. Errors: INVALID_ARGUMENT naming what is
// wrong (no magic, an unknown version, a header that is not the dict
// above, a dtype other than '<f4', Fortran order, a shape over kMaxNpyDims
// dims or with a negative dim, data bytes that do not match the shape).
absl::StatusOr<NpyArray> ParseNpy(absl::string_view bytes);

// Reads a .npy file. Errors: NOT_FOUND "cannot read .npy file <path>";
// ParseNpy's, prefixed with the path.
absl::StatusOr<NpyArray> ReadNpy(const std::string& path);

// The bytes of a .npy file (version 1.0, or 2.0 when the header is over
// 64 KiB) holding `array`. Its data must hold elements() floats.
std::string SerializeNpy(const NpyArray& array);

// Writes `array` to `path` atomically (base::WriteFileAtomically: a reader
// sees no file or the whole one). Errors: INVALID_ARGUMENT when data does
// not hold the shape's elements (nothing written); the write's errors.
absl::Status WriteNpy(const std::string& path, const NpyArray& array);

// The file name a tensor's values are saved under: the name with every
// character outside [A-Za-z0-9._-] replaced by '_', then ".npy" (e.g.
// "save_infer_model/scale_0.tmp_1" -> "save_infer_model_scale_0.tmp_1.npy").
// tests/support/ort_run.mjs and ort_run.py name their files the same way.
std::string NpyFileName(absl::string_view tensor_name);

// "(1, 3, 48, 192)": a shape as NumPy prints it ("(5,)" for one dim, "()"
// for none).
std::string NpyShapeString(const std::vector<int64_t>& shape);

}  // namespace tunefleet::base

#endif  // TUNEFLEET_BASE_NPY_H_
