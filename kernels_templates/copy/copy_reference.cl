// Naive reference strided copy (see copy.cl for the formula): one
// work-item per element of the box, global size D0*D1*D2*D3*D4*D5, the
// shape as arguments (one program serves every copy of a dtype). Verifies
// candidates, is the speed baseline and the fallback kernel of emitted
// libraries, so it stays simple. Elements move bit for bit; DTYPE_FP16
// picks their size.
#if DTYPE_FP16
typedef ushort elem_t;
#else
typedef uint elem_t;
#endif

__kernel void copy_reference(
    const int D0, const int D1, const int D2, const int D3, const int D4,
    const int D5, const int IS0, const int IS1, const int IS2, const int IS3,
    const int IS4, const int IS5, const int IO, const int OS0, const int OS1,
    const int OS2, const int OS3, const int OS4, const int OS5, const int OO,
    const __global elem_t* input, __global elem_t* output) {
  int t = get_global_id(0);
  if (t >= D0 * D1 * D2 * D3 * D4 * D5) return;
  const int i5 = t % D5;
  t /= D5;
  const int i4 = t % D4;
  t /= D4;
  const int i3 = t % D3;
  t /= D3;
  const int i2 = t % D2;
  t /= D2;
  const int i1 = t % D1;
  const int i0 = t / D1;
  output[OO + i0 * OS0 + i1 * OS1 + i2 * OS2 + i3 * OS3 + i4 * OS4 +
         i5 * OS5] = input[IO + i0 * IS0 + i1 * IS1 + i2 * IS2 + i3 * IS3 +
                           i4 * IS4 + i5 * IS5];
}
