// What an agent agrees to compile (kernel_policy/): sources, build options,
// the compiler log it reports.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_policy/build_options.h"
#include "kernel_policy/compiler_log.h"
#include "kernel_policy/source_check.h"

namespace tunefleet::kernel_policy {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

MATCHER_P(RefusedWith, text, "") {
  return !arg.ok() && absl::IsInvalidArgument(arg) &&
         std::string(arg.message()).find(text) != std::string::npos;
}

TEST(SourceCheckTest, AcceptsWhatTheBuiltInTemplatesUse) {
  const char* source = R"(// A comment with #include "x" and 'quotes
/* #include <stdio.h> in a block comment */
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define TF_CAT_(a, b) a##b
#define STR(x) #x
#define LOOP _Pragma("unroll") for (int i = 0; i < 4; ++i)
#if defined(FOO) && FOO > 1
#error FOO can't be more than 1
#elif 0
#else
#endif
#ifndef VW
  #  define VW 4
#endif
#undef VW
#
__kernel void k(__global float* y) {
  const char* s = "#include \"/etc/passwd\" __FILE__ ??";
  float x = 1e-3f + 0x1p+4f + .5f;
#pragma unroll 4
  for (int i = 0; i < 4; ++i) y[i] = x;
  #pragma clang loop unroll(full)
  LOOP { y[i] = 2.0f; }
}
)";
  EXPECT_TRUE(CheckKernelSource(source).ok())
      << CheckKernelSource(source).message();
}

TEST(SourceCheckTest, RefusesDirectivesThatReadFilesNamingThem) {
  EXPECT_THAT(CheckKernelSource("#include \"/tmp/x\"\n"),
              RefusedWith("line 1: #include is not allowed"));
  EXPECT_THAT(CheckKernelSource("int a;\n  #  include_next <x>\n"),
              RefusedWith("line 2: #include_next"));
  EXPECT_THAT(CheckKernelSource("#import \"x\"\n"), RefusedWith("#import"));
  EXPECT_THAT(CheckKernelSource("#embed \"/etc/passwd\"\n"),
              RefusedWith("#embed"));
  EXPECT_THAT(CheckKernelSource("#line 1 \"/etc/passwd\"\n"),
              RefusedWith("#line"));
  EXPECT_THAT(CheckKernelSource("# 1 \"/etc/passwd\"\n"),
              RefusedWith("a line marker"));
  EXPECT_THAT(CheckKernelSource("#ident \"x\"\n"),
              RefusedWith("#ident is not allowed"));
}

TEST(SourceCheckTest, SeesDirectivesThroughSplicesDigraphsAndComments) {
  // A splice inside the name, a digraph for '#', a comment before the name
  // or before the '#', a comment over lines before it.
  EXPECT_THAT(CheckKernelSource("#inc\\\nlude \"x\"\n"),
              RefusedWith("line 1: #include"));
  EXPECT_THAT(CheckKernelSource("#\\\r\ninclude \"x\"\n"),
              RefusedWith("#include"));
  EXPECT_THAT(CheckKernelSource("%:include \"x\"\n"), RefusedWith("#include"));
  EXPECT_THAT(CheckKernelSource("# /* c */ include \"x\"\n"),
              RefusedWith("#include"));
  EXPECT_THAT(CheckKernelSource("/* c */ #include \"x\"\n"),
              RefusedWith("#include"));
  EXPECT_THAT(CheckKernelSource("int a; /*\n*/ #include \"x\"\n"),
              RefusedWith("#include"));
  EXPECT_THAT(CheckKernelSource("#/*\n*/include \"x\"\n"),
              RefusedWith("#include"));
  // A line comment spliced onto the next line hides nothing: the next
  // line is still read (and the splice makes it part of the comment, as
  // the compiler reads it).
  EXPECT_TRUE(CheckKernelSource("// c \\\n#include \"x\"\n").ok());
  EXPECT_THAT(CheckKernelSource("// c\n#include \"x\"\n"),
              RefusedWith("line 2: #include"));
  // An unterminated literal ends at its line, as compilers end it.
  EXPECT_THAT(CheckKernelSource("char c = 'a;\n#include \"x\"\n"),
              RefusedWith("line 2: #include"));
  EXPECT_THAT(CheckKernelSource("const char* s = \"a;\n#include \"x\"\n"),
              RefusedWith("line 2: #include"));
}

TEST(SourceCheckTest, RefusesWhatCompilersReadDifferently) {
  EXPECT_THAT(CheckKernelSource("?\?=include \"x\"\n"),
              RefusedWith("the trigraph ?\?="));
  EXPECT_THAT(CheckKernelSource("// c ?\?/\n#define X 1\n"),
              RefusedWith("the trigraph ?\?/"));
  EXPECT_THAT(CheckKernelSource("// c \\ \n#include \"x\"\n"),
              RefusedWith("a backslash followed by blanks"));
  EXPECT_THAT(CheckKernelSource("int a;\r#include \"x\"\n"),
              RefusedWith("a carriage return"));
  EXPECT_THAT(CheckKernelSource(std::string("int a;\0#include", 16)),
              RefusedWith("a NUL byte"));
  EXPECT_THAT(CheckKernelSource("#\\u0069nclude \"x\"\n"),
              RefusedWith("a directive needs a name"));
  EXPECT_THAT(CheckKernelSource("int \\u0061;\n"),
              RefusedWith("a backslash outside a literal"));
  EXPECT_THAT(CheckKernelSource("\xc2\xa0#include \"x\"\n"),
              RefusedWith("a non-ASCII byte"));
  EXPECT_THAT(CheckKernelSource("const char* s = R\"x(\n)x\";\n"),
              RefusedWith("a raw string literal"));
  EXPECT_THAT(CheckKernelSource("int a; /* never closed\n"),
              RefusedWith("an unterminated comment"));
  EXPECT_THAT(CheckKernelSource("int a;\x1b[2J\n"),
              RefusedWith("the control character 0x1b"));
}

TEST(SourceCheckTest, RefusesFileProbesAndNames) {
  EXPECT_THAT(CheckKernelSource("#if __has_include(\"/etc/passwd\")\n#endif\n"),
              RefusedWith("line 1: __has_include is not allowed"));
  EXPECT_THAT(CheckKernelSource("constant char* f = __FILE__;\n"),
              RefusedWith("__FILE__"));
  EXPECT_THAT(CheckKernelSource("#define T __TIMESTAMP__\n"),
              RefusedWith("__TIMESTAMP__"));
  // Inside a literal or a number they are text.
  EXPECT_TRUE(CheckKernelSource("constant char* f = \"__FILE__\";\n").ok());
}

TEST(SourceCheckTest, AllowsOnlyKnownPragmas) {
  EXPECT_THAT(CheckKernelSource("#pragma GCC dependency \"/etc/passwd\"\n"),
              RefusedWith("line 1: #pragma GCC dependency is not allowed"));
  EXPECT_THAT(CheckKernelSource("#pragma clang __debug crash\n"),
              RefusedWith("#pragma clang __debug"));
  EXPECT_THAT(CheckKernelSource("#pragma /* c */ GCC system_header\n"),
              RefusedWith("#pragma GCC system_header"));
  EXPECT_THAT(CheckKernelSource("_Pragma(\"GCC dependency \\\"/x\\\"\")\n"),
              RefusedWith("#pragma GCC dependency"));
  EXPECT_THAT(CheckKernelSource("#define P(x) _Pragma(#x)\n"),
              RefusedWith("_Pragma without a string literal"));
  EXPECT_TRUE(CheckKernelSource("_Pragma ( \"unroll\" ) for (;;) {}\n").ok());
  EXPECT_TRUE(CheckKernelSource("#pragma\n").ok());
  EXPECT_TRUE(CheckPragma("OPENCL EXTENSION cl_khr_fp16 : enable").ok());
  EXPECT_TRUE(CheckPragma("GCC diagnostic ignored \"-Wunused\"").ok());
}

TEST(BuildOptionsTest, AcceptsDefinesAndOpenClFlags) {
  EXPECT_TRUE(CheckBuildOptions("").ok());
  EXPECT_TRUE(CheckBuildOptions(" -DMWG=64 -DEDGE_M=0 -DNEG=-1 -DF=1.5f "
                                "-DE=(A+B)*2 -DFLAG -UOLD")
                  .ok());
  EXPECT_TRUE(CheckBuildOptions("-cl-fast-relaxed-math -cl-std=CL2.0 -w "
                                "-Werror -cl-nv-maxrregcount=128 "
                                "-cl-intel-greater-than-4GB-buffer-required")
                  .ok());
}

TEST(BuildOptionsTest, RefusesWhatReadsFilesOrChangesTheLanguage) {
  for (const char* bad :
       {"-I/etc",      "-I /etc",      "-include /tmp/x.h", "-imacros x",
        "-isystem /x", "-iquote /x",   "-idirafter /x",     "@/tmp/opts",
        "/etc/passwd", "-x clc++",     "-cl-std=CLC++",     "-Xclang -load",
        "-mllvm -x",   "-save-temps",  "-DX=\"a b\"",       "-DX=a\\b",
        "-D X",        "-DX=$(cat)",   "-fplugin=x.so",     "-o /tmp/y",
        "-D1X=2",      "-cl-nv-x=/etc"}) {
    EXPECT_FALSE(CheckBuildOptions(bad).ok()) << bad;
  }
  EXPECT_THAT(CheckBuildOptions("-DA=1 -I/etc"),
              RefusedWith("build option '-I/etc' is not allowed"));
  EXPECT_THAT(CheckBuildOptions("-DA=1\n-I/etc"), RefusedWith("'\\n'"));
  EXPECT_THAT(CheckBuildOptions(std::string(kMaxBuildOptionsBytes + 1, ' ')),
              RefusedWith("at most"));
}

TEST(CompilerLogTest, KeepsTheRequestsDiagnosticsWithoutHostPaths) {
  const std::string source =
      "__kernel void k(__global float* y) {\n"
      "  y[0] = undefined_thing + 1;\n"
      "}\n";
  const std::string log =
      "error: /root/.cache/pocl/kcache/tempfile_a5egyK.cl:2:10: use of "
      "undeclared identifier 'undefined_thing'\n"
      "/home/u/x.cl:2:10: error: cannot convert 'float4' to '__global "
      "float *'\n"
      "  y[0] = undefined_thing + 1;\n"
      "         ^~~~~~~~~~~~~~~\n"
      "    2 |   y[0] = undefined_thing + 1;\n"
      "      |          ^\n"
      "1 error generated.\n";
  const std::string out = ScrubCompilerLog(log, source, "", 8192);
  EXPECT_EQ(out,
            "error: tempfile_a5egyK.cl:2:10: use of undeclared identifier "
            "'undefined_thing'\n"
            "x.cl:2:10: error: cannot convert 'float4' to '__global float *'\n"
            "  y[0] = undefined_thing + 1;\n"
            "         ^~~~~~~~~~~~~~~\n"
            "    2 |   y[0] = undefined_thing + 1;\n"
            "      |          ^\n"
            "1 error generated.");
}

TEST(CompilerLogTest, LeavesOutWhatDidNotComeFromTheRequest) {
  const std::string source = "__kernel void k() { int a = 1; }\n";
  const std::string log =
      "error: /tmp/planted.h:1:1: unknown type name 'SECRET_TOKEN_x1'\n"
      "SECRET_TOKEN_x1 y;\n"
      "^\n"
      "Device pthread failed to build the program\n"
      "note: 'a' and 'int' here \x1b[31mred\x1b[0m\n";
  const std::string out = ScrubCompilerLog(log, source, "-DZ=1", 8192);
  EXPECT_THAT(out, Not(HasSubstr("SECRET")));
  EXPECT_THAT(out, Not(HasSubstr("/tmp")));
  EXPECT_THAT(out, HasSubstr("error: planted.h:1:1: unknown type name '...'"));
  EXPECT_THAT(out, HasSubstr("note: 'a' and 'int' here \\x1b[31mred"));
  EXPECT_THAT(out, HasSubstr("[2 lines of the build log not from the "
                             "request left out]"));
}

TEST(CompilerLogTest, IsCut) {
  std::string log;
  for (int i = 0; i < 1000; ++i) log += "error: too many things here\n";
  const std::string out = ScrubCompilerLog(log, "", "", 1000);
  EXPECT_LT(out.size(), 1100u);
  EXPECT_THAT(out, HasSubstr("[build log cut at 1000 bytes]"));
}

}  // namespace
}  // namespace tunefleet::kernel_policy
