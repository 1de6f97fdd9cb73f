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

