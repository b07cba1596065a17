// Unit tests of base/npy.h: .npy files as NumPy writes them, round trips,
// and hostile files refused with the reason.
#include "base/npy.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/command_runner.h"

namespace tunefleet::base {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A .npy file as NumPy's np.save writes it: magic, version, header length,
// the dict padded with spaces to a 64-byte boundary, '\n', the data.
std::string NumpyFile(const std::string& dict, const std::string& data,
                      int major = 1) {
  const size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  header.append(64 - (prefix + header.size() + 1) % 64, ' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  for (size_t i = 0; i < prefix - 8; ++i) {
    out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  }
  return out + header + data;
}

std::string Floats(std::vector<float> values) {
  return std::string(reinterpret_cast<const char*>(values.data()),
                     values.size() * sizeof(float));
}

TEST(Npy, ReadsWhatNumpyWrites) {
  // np.save(f, np.arange(6, dtype=np.float32).reshape(2, 3))
  const std::string file =
      NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                Floats({0, 1, 2, 3, 4, 5}));
  ASSERT_EQ(file.size(), 128u + 24u);
  absl::StatusOr<NpyArray> a = ParseNpy(file);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->shape, ElementsAre(2, 3));
  EXPECT_THAT(a->data, ElementsAre(0, 1, 2, 3, 4, 5));
  // SerializeNpy writes the same bytes.
  EXPECT_EQ(SerializeNpy(*a), file);
}

TEST(Npy, ReadsOtherSpellingsOfTheHeader) {
  // Version 2.0, keys in another order, Python 2's longs, '=' byte order,
  // a one-dim tuple, no trailing comma.
  for (const std::string& dict :
       {std::string("{'shape': (3L,), 'fortran_order': False, "
                    "'descr': '=f4'}"),
        std::string("{\"descr\":\"<f4\",\"fortran_order\":False,"
                    "\"shape\":(3,)}")}) {
    absl::StatusOr<NpyArray> a =
        ParseNpy(NumpyFile(dict, Floats({1, 2, 3}), 2));
    ASSERT_TRUE(a.ok()) << dict << ": " << a.status();
    EXPECT_THAT(a->shape, ElementsAre(3));
    EXPECT_THAT(a->data, ElementsAre(1, 2, 3));
  }
}

TEST(Npy, RoundTripsEveryRank) {
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{
           {}, {5}, {2, 3}, {1, 3, 4, 6}, {0, 3}, {1, 1, 1, 1, 1, 1, 2}}) {
    NpyArray a;
    a.shape = shape;
    for (int64_t i = 0; i < a.elements(); ++i) a.data.push_back(0.5f * i - 3);
    const std::string bytes = SerializeNpy(a);
    EXPECT_EQ((bytes.size() - a.data.size() * 4) % 64, 0u)
        << "data not 64-byte aligned";
    absl::StatusOr<NpyArray> b = ParseNpy(bytes);
    ASSERT_TRUE(b.ok()) << NpyShapeString(shape) << ": " << b.status();
    EXPECT_EQ(b->shape, a.shape);
    EXPECT_EQ(b->data, a.data);
  }
}

TEST(Npy, RefusesHostileFilesNamingTheCause) {
  const std::string ok_dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string two = Floats({1, 2});
  struct Case {
    std::string bytes;
    std::string cause;
  };
  std::string version4 = NumpyFile(ok_dict, two);
  version4[6] = 4;
  std::string long_header = NumpyFile(ok_dict, two);
  long_header[8] = '\xff', long_header[9] = '\x7f';
  const Case cases[] = {
      {"", "\\x93NUMPY"},
      {"PK\x03\x04 a zip file, not a .npy", "\\x93NUMPY"},
      {version4, "format version 4.0"},
      {long_header, "ends in its header"},
      {NumpyFile(ok_dict, two).substr(0, 130), "data bytes"},
      {NumpyFile(ok_dict, two + two), "16 data bytes for shape (2,)"},
      {NumpyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
                 two),
       "dtype '<f8' (float64); float32 ('<f4') is read: save it with "
       "x.astype(np.float32)"},
      {NumpyFile("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
                 two),
       "big-endian"},
      {NumpyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }",
                 two),
       "Fortran order"},
      {NumpyFile("{'descr': '<f4', 'shape': (2,), }", two),
       "no 'fortran_order'"},
      {NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "
                 "'x': 1}",
                 two),
       "unknown key 'x'"},
      {NumpyFile("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
                 "'shape': (2,)}",
                 two),
       "repeats 'descr'"},
      {NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
                 two),
       "non-negative int"},
      {NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': "
                 "(4294967296, 4294967296, 4294967296), }",
                 two),
       "8 data bytes for shape (4294967296, 4294967296, 4294967296)"},
      {NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': "
                 "(99999999999999999999,), }",
                 two),
       "too large"},
      {NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2 }", two),
       "not closed"},
      {NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': [2], }",
                 two),
       "not a tuple"},
      {NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,) "
                 "} trailing",
                 two),
       "text after its dict"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<NpyArray> a = ParseNpy(c.bytes);
    ASSERT_FALSE(a.ok()) << "accepted: " << absl::CEscape(c.bytes);
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(a.status().message()), HasSubstr(c.cause));
  }
  // Over kMaxNpyDims dims.
  std::string dims;
  for (int i = 0; i < 40; ++i) dims += "1, ";
  absl::StatusOr<NpyArray> a = ParseNpy(NumpyFile(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }",
      Floats({1})));
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(std::string(a.status().message()), HasSubstr("over 32 dims"));
}

TEST(Npy, FilesAreWrittenWholeOrNotAtAll) {
  const std::string dir = testing::FreshTempDir("npy_test");
  NpyArray a{{2, 2}, {1, 2, 3, 4}};
  ASSERT_TRUE(WriteNpy(dir + "/a.npy", a).ok());
  absl::StatusOr<NpyArray> b = ReadNpy(dir + "/a.npy");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->data, a.data);

  NpyArray wrong{{3}, {1, 2}};
  absl::Status s = WriteNpy(dir + "/wrong.npy", wrong);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("2 floats for shape (3,)"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/wrong.npy"));

  absl::StatusOr<NpyArray> missing = ReadNpy(dir + "/missing.npy");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("missing.npy"));

  std::ofstream(dir + "/text.npy") << "1,2,3\n";
  absl::StatusOr<NpyArray> text = ReadNpy(dir + "/text.npy");
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(text.status().message()),
              HasSubstr(dir + "/text.npy: not a float32 .npy file"));
  std::filesystem::remove_all(dir);
}

TEST(Npy, FileNamesKeepSafeCharacters) {
  EXPECT_EQ(NpyFileName("softmax_0.tmp_0"), "softmax_0.tmp_0.npy");
  EXPECT_EQ(NpyFileName("save_infer_model/scale_0.tmp_1"),
            "save_infer_model_scale_0.tmp_1.npy");
  EXPECT_EQ(NpyFileName("a b:c/../d"), "a_b_c_.._d.npy");
  EXPECT_EQ(NpyShapeString({}), "()");
  EXPECT_EQ(NpyShapeString({5}), "(5,)");
  EXPECT_EQ(NpyShapeString({1, 3, 48, 192}), "(1, 3, 48, 192)");
}

}  // namespace
}  // namespace tunefleet::base
