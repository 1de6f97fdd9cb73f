typedef unsigned int u32;
typedef unsigned long long u64;
// y = a x + b y (b = 0 overwrites y)
extern "C" __global__ void ptap_vec_axpby(double a, const double* __restrict__ x, double b, double* __restrict__ y, unsigned long long n) {
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  y[t] = b == 0.0 ? a * x[t] : a * x[t] + b * y[t];
}

// y = x, grid-stride with 16-byte accesses where aligned
extern "C" __global__ void ptap_vec_copy(const double* __restrict__ x, double* __restrict__ y, unsigned long long n) {
  u64 stride = (u64)gridDim.x * blockDim.x;
  u64 n2 = n / 2;
  const double2* x2 = (const double2*)x; double2* y2 = (double2*)y;
  for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t < n2; t += stride) y2[t] = x2[t];
  if ((n & 1) && blockIdx.x == 0 && threadIdx.x == 0) y[n - 1] = x[n - 1];
}

// y = x rounded to the nearest f32 (ties to even), grid-stride; overflow[0] = 1 where a finite x rounds to an infinite y
extern "C" __global__ void ptap_vec_to_f32(const double* __restrict__ x, float* __restrict__ y, unsigned int* __restrict__ overflow, unsigned long long n) {
  u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += stride) {
    double v = x[t];
    float f = __double2float_rn(v);
    y[t] = f;
    if (isinf(f) && !isinf(v)) overflow[0] = 1u;
  }
}

// per-block partial sums of x . y (256 threads, grid-stride, fixed tree)
extern "C" __global__ void ptap_vec_dot_partial(const double* __restrict__ x, const double* __restrict__ y, double* __restrict__ part, unsigned long long n) {
  __shared__ double sh[256];
  double s = 0.0;
  u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += stride) s += x[t] * y[t];
  sh[threadIdx.x] = s;
  __syncthreads();
  for (u32 h = 128; h > 0; h >>= 1) { if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h]; __syncthreads(); }
  if (threadIdx.x == 0) part[blockIdx.x] = sh[0];
}

// out[slot] = sum of n partials (one block of 256 threads, fixed tree)
extern "C" __global__ void ptap_vec_sum_partial(const double* __restrict__ part, double* __restrict__ out, unsigned int slot, unsigned int n) {
  __shared__ double sh[256];
  double s = 0.0;
  for (u32 t = threadIdx.x; t < n; t += 256) s += part[t];
  sh[threadIdx.x] = s;
  __syncthreads();
  for (u32 h = 128; h > 0; h >>= 1) { if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h]; __syncthreads(); }
  if (threadIdx.x == 0) out[slot] = sh[0];
}

// y = v
extern "C" __global__ void ptap_fill(double* __restrict__ y, double v, unsigned long long n) {
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) y[t] = v;
}

// out[0] = max |a_ii| (one block of 256 threads)
extern "C" __global__ void ptap_chol_scale(const double* __restrict__ a, double* __restrict__ out, unsigned int n) {
  __shared__ double sh[256];
  double m = 0.0;
  for (u32 i = threadIdx.x; i < n; i += 256) m = fmax(m, fabs(a[(u64)i * n + i]));
  sh[threadIdx.x] = m;
  __syncthreads();
  for (u32 h = 128; h > 0; h >>= 1) { if (threadIdx.x < h) sh[threadIdx.x] = fmax(sh[threadIdx.x], sh[threadIdx.x + h]); __syncthreads(); }
  if (threadIdx.x == 0) out[0] = sh[0];
}

// column j of the Cholesky factor L (left-looking, as Cholesky::refactor), one warp per row i >= j, 8 warps per block; writes L (row-major) and L^T; a pivot below 1e-14 max|a_ii| or not finite records j in status[0]
extern "C" __global__ void ptap_chol_column(const double* __restrict__ a, double* __restrict__ l, double* __restrict__ lt, const double* __restrict__ scale, unsigned int* __restrict__ status, unsigned int n, unsigned int j) {
  u32 w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  u32 i = j + w;
  if (i >= n) return;
  const double* lj = l + (u64)j * n;
  const double* li = l + (u64)i * n;
  double d = 0.0, s = 0.0;
  for (u32 k = lane; k < j; k += 32) { double x = lj[k]; d += x * x; s += li[k] * x; }
  for (int o = 16; o > 0; o >>= 1) { d += __shfl_xor_sync(0xffffffffu, d, o); s += __shfl_xor_sync(0xffffffffu, s, o); }
  d = a[(u64)j * n + j] - d;
  if (lane == 0 && i == j && (!isfinite(d) || d <= 1e-14 * scale[0])) atomicMax(status, 0xffffffffu - j);
  double r = sqrt(d);
  if (lane == 0) {
    double v = i == j ? r : (a[(u64)i * n + j] - s) / r;
    l[(u64)i * n + j] = v;
    lt[(u64)j * n + i] = v;
  }
}

// x = (L L^T)^-1 x in place: column-oriented forward (rows of L^T) and backward (rows of L) substitution, one block of 1024 threads
extern "C" __global__ void ptap_chol_solve(const double* __restrict__ l, const double* __restrict__ lt, double* __restrict__ x, unsigned int n) {
  __shared__ double piv;
  u32 tid = threadIdx.x;
  for (u32 j = 0; j < n; ++j) {
    if (tid == 0) { double v = x[j] / lt[(u64)j * n + j]; x[j] = v; piv = v; }
    __syncthreads();
    double v = piv;
    const double* row = lt + (u64)j * n;
    for (u32 i = j + 1 + tid; i < n; i += 1024) x[i] = x[i] - row[i] * v;
    __syncthreads();
  }
  for (u32 i = n; i-- > 0;) {
    if (tid == 0) { double v = x[i] / l[(u64)i * n + i]; x[i] = v; piv = v; }
    __syncthreads();
    double v = piv;
    const double* row = l + (u64)i * n;
    for (u32 k = tid; k < i; k += 1024) x[k] = x[k] - row[k] * v;
    __syncthreads();
  }
}

// out[keep] = out[slot], then out[slot] = sum of n partials (one block of 256 threads, the fixed tree of ptap_vec_sum_partial)
extern "C" __global__ void ptap_vec_sum_partial_keep(const double* __restrict__ part, double* __restrict__ out, unsigned int slot, unsigned int keep, unsigned int n) {
  __shared__ double sh[256];
  double acc = 0.0;
  for (u32 t = threadIdx.x; t < n; t += 256) acc += part[t];
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (u32 h = 128; h > 0; h >>= 1) { if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h]; __syncthreads(); }
  if (threadIdx.x == 0) { out[keep] = out[slot]; out[slot] = sh[0]; }
}

// alpha = s[rz_at] / s[pap_at]; x += alpha p; r -= alpha ap; per-block partial sums of the new r . r (256 threads, grid-stride: the thread-to-element map of ptap_vec_dot_partial)
extern "C" __global__ void ptap_cg_update(const double* __restrict__ s, unsigned int rz_at, unsigned int pap_at, const double* __restrict__ p, const double* __restrict__ ap, double* __restrict__ x, double* __restrict__ r, double* __restrict__ part, unsigned long long n) {
  __shared__ double sh[256];
  double alpha = s[rz_at] / s[pap_at];
  double acc = 0.0;
  u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += stride) {
    x[t] = alpha * p[t] + x[t];
    double v = -alpha * ap[t] + r[t];
    r[t] = v;
    acc += v * v;
  }
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (u32 h = 128; h > 0; h >>= 1) { if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h]; __syncthreads(); }
  if (threadIdx.x == 0) part[blockIdx.x] = sh[0];
}

// beta = s[num_at] / s[den_at]; p = z + beta p
extern "C" __global__ void ptap_cg_direction(const double* __restrict__ s, unsigned int num_at, unsigned int den_at, const double* __restrict__ z, double* __restrict__ pv, unsigned long long n) {
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  double beta = s[num_at] / s[den_at];
  pv[t] = 1.0 * z[t] + beta * pv[t];
}

// W = L^-1 (lower triangular, row-major) and W^T from the Cholesky factor L: one warp per column c (blocks of one warp, n doubles of dynamic shared memory, n <= 6144); row i of the column is (delta_ic - sum_k L_ik W_kc) / L_ii, the sum over lanes in a fixed tree
extern "C" __global__ void ptap_chol_inverse(const double* __restrict__ l, double* __restrict__ w, double* __restrict__ wt, unsigned int n) {
  extern __shared__ double col[];
  u32 c = blockIdx.x, lane = threadIdx.x;
  if (c >= n) return;
  for (u32 i = lane; i < n; i += 32) col[i] = 0.0;
  __syncwarp();
  for (u32 i = c; i < n; ++i) {
    const double* li = l + (u64)i * n;
    double acc = 0.0;
    for (u32 k = c + lane; k < i; k += 32) acc += li[k] * col[k];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (lane == 0) col[i] = ((i == c ? 1.0 : 0.0) - acc) / li[i];
    __syncwarp();
  }
  for (u32 i = lane; i < n; i += 32) { w[(u64)i * n + c] = col[i]; wt[(u64)c * n + i] = col[i]; }
}

// y_i = sum over the lower (k <= i) or upper (k >= i) triangle of row i of the row-major n x n m times x_k; one warp per row, 8 warps per block, lanes summed in a fixed tree
extern "C" __global__ void ptap_tri_mv(const double* __restrict__ m, const double* __restrict__ x, double* __restrict__ y, unsigned int n, unsigned int lower) {
  u32 i = blockIdx.x * 8 + (threadIdx.x >> 5), lane = threadIdx.x & 31;
  if (i >= n) return;
  u32 k0 = lower ? 0 : i, k1 = lower ? i + 1 : n;
  const double* mi = m + (u64)i * n;
  double acc = 0.0;
  for (u32 k = k0 + lane; k < k1; k += 32) acc += mi[k] * x[k];
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (lane == 0) y[i] = acc;
}

