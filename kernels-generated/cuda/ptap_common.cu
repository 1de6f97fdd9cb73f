typedef unsigned int u32;
typedef unsigned long long u64;
// y = a x + b y (b = 0 overwrites y)
extern "C" __global__ void ptap_vec_axpby(double a, const double* __restrict__ x, double b, double* __restrict__ y, unsigned long long n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  y[t] = b == 0.0 ? a * x[t] : a * x[t] + b * y[t];
}

// y = x, grid-stride with 16-byte accesses where aligned
extern "C" __global__ void ptap_vec_copy(const double* __restrict__ x, double* __restrict__ y, unsigned long long n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 stride = (u64)gridDim.x * blockDim.x;
  u64 n2 = n / 2;
  const double2* x2 = (const double2*)x; double2* y2 = (double2*)y;
  for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t < n2; t += stride) y2[t] = x2[t];
  if ((n & 1) && blockIdx.x == 0 && threadIdx.x == 0) y[n - 1] = x[n - 1];
}

// y = x rounded to the nearest f32 (ties to even), grid-stride; overflow[0] = 1 where a finite x rounds to an infinite y
extern "C" __global__ void ptap_vec_to_f32(const double* __restrict__ x, float* __restrict__ y, unsigned int* __restrict__ overflow, unsigned long long n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
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
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
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
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
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
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) y[t] = v;
}

// out[0] = max |a_ii| (one block of 256 threads)
extern "C" __global__ void ptap_chol_scale(const double* __restrict__ a, double* __restrict__ out, unsigned int n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double sh[256];
  double m = 0.0;
  for (u32 i = threadIdx.x; i < n; i += 256) m = fmax(m, fabs(a[(u64)i * n + i]));
  sh[threadIdx.x] = m;
  __syncthreads();
  for (u32 h = 128; h > 0; h >>= 1) { if (threadIdx.x < h) sh[threadIdx.x] = fmax(sh[threadIdx.x], sh[threadIdx.x + h]); __syncthreads(); }
  if (threadIdx.x == 0) out[0] = sh[0];
}

// columns k0 .. k0 + 32 of the Cholesky factor (blocked right-looking; a holds the operator less the earlier panels' updates): every block factors the diagonal block in shared memory, block 0 writes it; then one warp per row i below it, 8 warps per block, solves the row against it, lane c owning column k0 + c. Each entry subtracts its terms in the order of Cholesky::refactor. Writes L (row-major) and L^T; a pivot below 1e-14 max|a_ii| or not finite records its row in status[0]
extern "C" __global__ void ptap_chol_panel(double* __restrict__ a, double* __restrict__ l, double* __restrict__ lt, const double* __restrict__ scale, unsigned int* __restrict__ status, unsigned int n, unsigned int k0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double d[32][33];
  u32 tid = threadIdx.x, nt = blockDim.x;
  u32 w = n - k0 < 32u ? n - k0 : 32u;
  for (u32 q = tid; q < w * w; q += nt) { u32 i = q / w, c = q % w; d[i][c] = a[(u64)(k0 + i) * n + k0 + c]; }
  __syncthreads();
  for (u32 j = 0; j < w; ++j) {
    if (tid == 0) {
      double v = d[j][j];
      if (blockIdx.x == 0 && (!isfinite(v) || v <= 1e-14 * scale[0])) atomicMax(status, 0xffffffffu - (k0 + j));
      d[j][j] = sqrt(v);
    }
    __syncthreads();
    for (u32 i = j + 1 + tid; i < w; i += nt) d[i][j] = d[i][j] / d[j][j];
    __syncthreads();
    u32 m = w - j - 1;
    for (u32 q = tid; q < m * m; q += nt) { u32 i = j + 1 + q / m, c = j + 1 + q % m; if (c <= i) d[i][c] = d[i][c] - d[i][j] * d[c][j]; }
    __syncthreads();
  }
  if (blockIdx.x == 0)
    for (u32 q = tid; q < w * w; q += nt) { u32 i = q / w, c = q % w; if (c <= i) { double v = d[i][c]; l[(u64)(k0 + i) * n + k0 + c] = v; lt[(u64)(k0 + c) * n + k0 + i] = v; } }
  u32 lane = tid & 31;
  u32 i = k0 + w + blockIdx.x * 8 + (tid >> 5);
  if (i >= n) return;
  double acc = lane < w ? a[(u64)i * n + k0 + lane] : 0.0;
  for (u32 j = 0; j < w; ++j) {
    double x = __shfl_sync(0xffffffffu, acc, j) / d[j][j];
    if (lane == j) acc = x;
    else if (lane > j && lane < w) acc = acc - x * d[lane][j];
  }
  if (lane < w) { l[(u64)i * n + k0 + lane] = acc; lt[(u64)(k0 + lane) * n + i] = acc; }
}

// trailing update after the panel of columns k0 .. k0 + 32: a_ic -= L_i,k0+m L_c,k0+m for m in order, i >= c >= k0 + 32; one 32x32 tile of a per block of 32x8 threads (tiles above the diagonal exit)
extern "C" __global__ void ptap_chol_update(double* __restrict__ a, const double* __restrict__ l, unsigned int n, unsigned int k0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double li[32][33], lc[32][33];
  if (blockIdx.y < blockIdx.x) return;
  u32 k1 = k0 + 32, tx = threadIdx.x, ty = threadIdx.y;
  u32 r0 = k1 + blockIdx.y * 32, c0 = k1 + blockIdx.x * 32;
  for (u32 q = ty; q < 32; q += 8) {
    li[q][tx] = r0 + q < n ? l[(u64)(r0 + q) * n + k0 + tx] : 0.0;
    lc[q][tx] = c0 + q < n ? l[(u64)(c0 + q) * n + k0 + tx] : 0.0;
  }
  __syncthreads();
  u32 c = c0 + tx;
  if (c >= n) return;
  for (u32 q = ty; q < 32; q += 8) {
    u32 i = r0 + q;
    if (i >= n || i < c) continue;
    double acc = a[(u64)i * n + c];
    for (u32 m = 0; m < 32; ++m) acc = acc - li[q][m] * lc[tx][m];
    a[(u64)i * n + c] = acc;
  }
}

// x = (L L^T)^-1 x in place: column-oriented forward (rows of L^T) and backward (rows of L) substitution, one block of 1024 threads
extern "C" __global__ void ptap_chol_solve(const double* __restrict__ l, const double* __restrict__ lt, double* __restrict__ x, unsigned int n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
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
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
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
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
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
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  double beta = s[num_at] / s[den_at];
  pv[t] = 1.0 * z[t] + beta * pv[t];
}

// c = s[num_at] / s[den_at]; mode 0: y = c x + y, 1: y = (-c) x + y, 2: y = x + c y (y = a x + b y as ptap_vec_axpby computes it)
extern "C" __global__ void ptap_axpby_ratio(const double* __restrict__ s, unsigned int num_at, unsigned int den_at, unsigned int mode, const double* __restrict__ x, double* __restrict__ y, unsigned long long n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  double c = s[num_at] / s[den_at];
  double a = mode == 2u ? 1.0 : (mode == 1u ? -c : c), b = mode == 2u ? c : 1.0;
  y[t] = b == 0.0 ? a * x[t] : a * x[t] + b * y[t];
}

// rows k0 .. k0 + 32 of W = L^-1 (row-major, lower) and of W^T's columns: L W = I solved a panel of 32 rows at a time; w holds minus the earlier panels' terms (zero at the start). One warp per column c < k0 + 32, 8 per block, lane j owning row k0 + j: W_rc = (delta_rc + w_rc - sum over earlier rows m of the panel of L_rm W_mc) / L_rr, the terms in row order
extern "C" __global__ void ptap_chol_inverse_panel(const double* __restrict__ l, double* __restrict__ w, double* __restrict__ wt, unsigned int n, unsigned int k0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double d[32][33];
  u32 tid = threadIdx.x;
  u32 h = n - k0 < 32u ? n - k0 : 32u;
  for (u32 q = tid; q < h * h; q += blockDim.x) { u32 i = q / h, c = q % h; d[i][c] = c <= i ? l[(u64)(k0 + i) * n + k0 + c] : 0.0; }
  __syncthreads();
  u32 lane = tid & 31, c = blockIdx.x * 8 + (tid >> 5);
  if (c >= k0 + h) return;
  u32 r = k0 + lane;
  double acc = lane < h ? (r == c ? 1.0 : 0.0) + w[(u64)r * n + c] : 0.0;
  for (u32 j = 0; j < h; ++j) {
    double x = __shfl_sync(0xffffffffu, acc, j) / d[j][j];
    if (lane == j) acc = x;
    else if (lane > j && lane < h) acc = acc - d[lane][j] * x;
  }
  if (lane < h && c <= r) { w[(u64)r * n + c] = acc; wt[(u64)c * n + r] = acc; }
}

// after the panel of W's rows k0 .. k0 + 32: w_ic -= L_i,k0+m W_k0+m,c for m in order, rows i >= k0 + 32, columns c < k0 + 32; one 32x32 tile per block of 32x8 threads
extern "C" __global__ void ptap_chol_inverse_update(const double* __restrict__ l, double* __restrict__ w, unsigned int n, unsigned int k0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double li[32][33], wc[32][33];
  u32 k1 = k0 + 32, tx = threadIdx.x, ty = threadIdx.y;
  u32 r0 = k1 + blockIdx.y * 32, c0 = blockIdx.x * 32;
  for (u32 q = ty; q < 32; q += 8) {
    li[q][tx] = r0 + q < n ? l[(u64)(r0 + q) * n + k0 + tx] : 0.0;
    wc[q][tx] = w[(u64)(k0 + q) * n + c0 + tx];
  }
  __syncthreads();
  u32 c = c0 + tx;
  for (u32 q = ty; q < 32; q += 8) {
    u32 i = r0 + q;
    if (i >= n) continue;
    double acc = w[(u64)i * n + c];
    for (u32 m = 0; m < 32; ++m) acc = acc - li[q][m] * wc[m][tx];
    w[(u64)i * n + c] = acc;
  }
}

// y_i = sum over the lower (k <= i) or upper (k >= i) triangle of row i of the row-major n x n m times x_k; one warp per row, 8 warps per block, lanes summed in a fixed tree
extern "C" __global__ void ptap_tri_mv(const double* __restrict__ m, const double* __restrict__ x, double* __restrict__ y, unsigned int n, unsigned int lower) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u32 i = blockIdx.x * 8 + (threadIdx.x >> 5), lane = threadIdx.x & 31;
  if (i >= n) return;
  u32 k0 = lower ? 0 : i, k1 = lower ? i + 1 : n;
  const double* mi = m + (u64)i * n;
  double acc = 0.0;
  for (u32 k = k0 + lane; k < k1; k += 32) acc += mi[k] * x[k];
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (lane == 0) y[i] = acc;
}

