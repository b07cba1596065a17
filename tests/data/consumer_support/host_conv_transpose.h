// For the programs under tests/data/ built against an emitted library, and
// for the tests that check conv_transpose2d (tests/integration/
// conv_transpose_template_test.cc, tests/unit/onnx_import/
// step_simulator.h): ONNX ConvTranspose's sums, on the host in double,
// before any epilogue. Header-only: each consumer is its own CMake project
// (C++17).
#ifndef TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_HOST_CONV_TRANSPOSE_H_
#define TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_HOST_CONV_TRANSPOSE_H_

#include <cstddef>
#include <vector>

namespace consumer_support {

// Output rows (or columns) of a transposed convolution (ONNX
// ConvTranspose with explicit pads and output_padding).
inline long long TransposedExtent(long long in, long long stride, long long pad,
                                  long long dilation, long long kernel,
                                  long long output_pad) {
  return (in - 1) * stride - 2 * pad + dilation * (kernel - 1) + output_pad + 1;
}

// The sums of a transposed convolution, N x K x OH x OW.
struct ConvTransposeSums {
  long long K = 0, OH = 0, OW = 0;
  std::vector<double> sums;
  // The output channel of sums[i].
  long long Channel(size_t i) const {
    return static_cast<long long>(i / (OH * OW)) % K;
  }
};

// Transposed convolution as the scatter ONNX defines it by: input pixel
// (h, x) of channel c adds weight[c][j][r][s] times itself to output
// (h*SH - PH + r*DH, x*SW - PW + s*DW) of output channel g*(K/G) + j, g
// being c's group. `dim(name)` gives the conv_transpose2d dims (N C H W K
// R S SH SW PH PW DH DW G OPH OPW); `in` is N x C x H x W, `weight`
// C x K/G x R x S. Products and sums in double.
template <typename Dim>
ConvTransposeSums HostConvTransposeSums(const Dim& dim,
                                        const std::vector<float>& in,
                                        const std::vector<float>& weight) {
  const long long N = dim("N"), C = dim("C"), H = dim("H"), W = dim("W"),
                  K = dim("K"), R = dim("R"), S = dim("S"), SH = dim("SH"),
                  SW = dim("SW"), PH = dim("PH"), PW = dim("PW"),
                  DH = dim("DH"), DW = dim("DW"), G = dim("G");
  ConvTransposeSums out;
  out.K = K;
  out.OH = TransposedExtent(H, SH, PH, DH, R, dim("OPH"));
  out.OW = TransposedExtent(W, SW, PW, DW, S, dim("OPW"));
  const long long OH = out.OH, OW = out.OW, cg = C / G, kg = K / G;
  out.sums.assign(N * K * OH * OW, 0.0);
  for (long long n = 0; n < N; ++n)
    for (long long c = 0; c < C; ++c)
      for (long long h = 0; h < H; ++h)
        for (long long x = 0; x < W; ++x) {
          const double v = in.at(((n * C + c) * H + h) * W + x);
          const long long g = c / cg;
          for (long long j = 0; j < kg; ++j)
            for (long long r = 0; r < R; ++r)
              for (long long s = 0; s < S; ++s) {
                const long long oh = h * SH - PH + r * DH,
                                ow = x * SW - PW + s * DW;
                if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                const long long k = g * kg + j;
                out.sums[((n * K + k) * OH + oh) * OW + ow] +=
                    v * weight.at(((c * kg + j) * R + r) * S + s);
              }
        }
  return out;
}

}  // namespace consumer_support

#endif  // TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_HOST_CONV_TRANSPOSE_H_
