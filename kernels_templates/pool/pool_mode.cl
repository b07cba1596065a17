// The pooling mode of pool2d.cl and global_pool.cl, chosen by POOL_MAX
// (from the workload's attr "mode"): max pooling starts from -INFINITY and
// combines with fmax, average pooling starts from 0 and adds (the kernel
// divides by the count at the end).
#if POOL_MAX
#define PAD_VALUE (-INFINITY)
#define COMBINE(a, b) fmax((a), (b))
#else
#define PAD_VALUE 0.0f
#define COMBINE(a, b) ((a) + (b))
#endif
