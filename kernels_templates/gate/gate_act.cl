// The activations of channel_gate (act1, act2), numbered as
// common/epilogue.cl's ACT, with their parameters a and b:
//   0 none; 1 relu; 2 clip to [a, b]; 3 hardsigmoid clamp(a*y + b, 0, 1);
//   4 hardswish y * clamp(a*y + b, 0, 1); 5 leakyrelu y >= 0 ? y : a*y;
//   6 sigmoid 1 / (1 + exp(-y)); 7 silu y * sigmoid(y).
// `act` is a build-time constant at every call (ACT1, ACT2), so the
// compiler keeps one branch. epilogue.cl's epilogue_act() reads the single
// ACT define; this op applies two activations in one kernel.
inline float gate_act(const int act, float y, const float a, const float b) {
  if (act == 1) return fmax(y, 0.0f);
  if (act == 2) return clamp(y, a, b);
  if (act == 3) return clamp(a * y + b, 0.0f, 1.0f);
  if (act == 4) return y * clamp(a * y + b, 0.0f, 1.0f);
  if (act == 5) return y >= 0.0f ? y : a * y;
  if (act == 6) return 1.0f / (1.0f + exp(-y));
  if (act == 7) return y / (1.0f + exp(-y));
  return y;
}
