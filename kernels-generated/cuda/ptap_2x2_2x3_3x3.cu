typedef unsigned int u32;
typedef unsigned long long u64;
// R = P^T, 3x2 blocks gathered from transposed 2x3 blocks of P
extern "C" __global__ void ptap_gather_r_2x3(const double* __restrict__ pv, const unsigned int* __restrict__ src, double* __restrict__ rv, unsigned int nblocks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nblocks * 6) return;
  u32 b = (u32)(t / 6); u32 e = (u32)(t % 6);
  u32 i = e / 2, j = e % 2;
  rv[t] = pv[(u64)src[b] * 6 + j * 3 + i];
}

// two-pass stage C = X Y (2x2 by 2x3), one thread per output scalar
extern "C" __global__ void ptap_row_owner_2x2x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ x_rp, const unsigned int* __restrict__ x_ci, const unsigned int* __restrict__ y_rp, const unsigned int* __restrict__ y_ci, const unsigned int* __restrict__ c_row, const unsigned int* __restrict__ c_ci, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nslots * 6) return;
  u32 s = (u32)(t / 6); u32 e = (u32)(t % 6);
  u32 i = e / 3, j = e % 3;
  u32 row = c_row[s], col = c_ci[s];
  double acc = 0.0;
  for (u32 kx = x_rp[row]; kx < x_rp[row + 1]; ++kx) {
    u32 l = x_ci[kx];
    u32 lo = y_rp[l], hi = y_rp[l + 1], end = hi;
    while (lo < hi) { u32 mid = (lo + hi) >> 1; if (y_ci[mid] < col) lo = mid + 1; else hi = mid; }
    if (lo < end && y_ci[lo] == col) {
      const double* xb = xv + (u64)kx * 4;
      const double* yb = yv + (u64)lo * 6;
      acc = acc + xb[(i)*2+(0)] * yb[0 * 3 + j];
      acc = acc + xb[(i)*2+(1)] * yb[1 * 3 + j];
    }
  }
  cv[t] = acc;
}

// two-pass stage C = X Y (3x2 by 2x3), one thread per output scalar
extern "C" __global__ void ptap_row_owner_3x2x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ x_rp, const unsigned int* __restrict__ x_ci, const unsigned int* __restrict__ y_rp, const unsigned int* __restrict__ y_ci, const unsigned int* __restrict__ c_row, const unsigned int* __restrict__ c_ci, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nslots * 9) return;
  u32 s = (u32)(t / 9); u32 e = (u32)(t % 9);
  u32 i = e / 3, j = e % 3;
  u32 row = c_row[s], col = c_ci[s];
  double acc = 0.0;
  for (u32 kx = x_rp[row]; kx < x_rp[row + 1]; ++kx) {
    u32 l = x_ci[kx];
    u32 lo = y_rp[l], hi = y_rp[l + 1], end = hi;
    while (lo < hi) { u32 mid = (lo + hi) >> 1; if (y_ci[mid] < col) lo = mid + 1; else hi = mid; }
    if (lo < end && y_ci[lo] == col) {
      const double* xb = xv + (u64)kx * 6;
      const double* yb = yv + (u64)lo * 6;
      acc = acc + xb[(i)*2+(0)] * yb[0 * 3 + j];
      acc = acc + xb[(i)*2+(1)] * yb[1 * 3 + j];
    }
  }
  cv[t] = acc;
}

// slot-tiled stage (2x2 by 2x3), 128 slots per block, register accumulators
extern "C" __global__ void ptap_slot_tiled_2x2x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double tile[128 * 6];
  u32 s0 = blockIdx.x * 128;
  u32 s = s0 + threadIdx.x;
  double a0 = 0.0;
  double a1 = 0.0;
  double a2 = 0.0;
  double a3 = 0.0;
  double a4 = 0.0;
  double a5 = 0.0;
  if (s < nslots) {
    for (u32 q = ptr[s]; q < ptr[s + 1]; ++q) {
      const double* xb = xv + (u64)rx[q] * 4;
      const double* yb = yv + (u64)ry[q] * 6;
      double y0_0 = yb[0];
      double y0_1 = yb[1];
      double y0_2 = yb[2];
      double y1_0 = yb[3];
      double y1_1 = yb[4];
      double y1_2 = yb[5];
      { double x = xb[(0)*2+(0)];
        a0 = a0 + x * y0_0;
        a1 = a1 + x * y0_1;
        a2 = a2 + x * y0_2;
      }
      { double x = xb[(1)*2+(0)];
        a3 = a3 + x * y0_0;
        a4 = a4 + x * y0_1;
        a5 = a5 + x * y0_2;
      }
      { double x = xb[(0)*2+(1)];
        a0 = a0 + x * y1_0;
        a1 = a1 + x * y1_1;
        a2 = a2 + x * y1_2;
      }
      { double x = xb[(1)*2+(1)];
        a3 = a3 + x * y1_0;
        a4 = a4 + x * y1_1;
        a5 = a5 + x * y1_2;
      }
    }
  }
  tile[threadIdx.x * 6 + 0] = a0;
  tile[threadIdx.x * 6 + 1] = a1;
  tile[threadIdx.x * 6 + 2] = a2;
  tile[threadIdx.x * 6 + 3] = a3;
  tile[threadIdx.x * 6 + 4] = a4;
  tile[threadIdx.x * 6 + 5] = a5;
  __syncthreads();
  u32 valid = nslots - s0 < 128 ? nslots - s0 : 128;
  for (u32 e = threadIdx.x; e < valid * 6; e += 128) cv[(u64)s0 * 6 + e] = tile[e];
}

// column-split stage (2x2 by 2x3), 3 lanes per slot, 10 slots per warp, one window per block, x staged in shared memory, 2 contributions per step, 3 indices per fetch
extern "C" __global__ void ptap_column_split_2x2x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots, unsigned int window) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  extern __shared__ double2 cs_smem[];
  u32 lane = threadIdx.x & 31, gw = lane / 3;
  if (gw >= 10) return;
  u32 j = lane - gw * 3;
  u32 g = (threadIdx.x >> 5) * 10 + gw;
  if (g >= window) return;
  u32 idx = blockIdx.x * window + g;
  if (idx >= nslots) return;
  u32 s = order[idx];
  double* sx = (double*)((char*)cs_smem + (u64)g * 112);
  u32* si = (u32*)(sx + 8);
  const u32 gm = 7u << (gw * 3);
  double c0 = 0.0;
  double c1 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 3) {
    u32 cnt = q1 - q0 < 3 ? q1 - q0 : 3;
    { u32 e = 0 + j; if (e < cnt) { si[e] = rx[q0 + e]; si[3 + e] = ry[q0 + e]; } }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double y0_0 = 0.0, y0_1 = 0.0;
      {
        const double2* xs_g = (const double2*)(xv + (u64)si[t + 0] * 4);
        const double* yb = yv + (u64)si[3 + t + 0] * 6;
        double2* xs_s = (double2*)(sx + 0);
        if (0 + j < 2) xs_s[0 + j] = xs_g[0 + j];
        y0_0 = yb[0 * 3 + j];
        y0_1 = yb[1 * 3 + j];
      }
      double y1_0 = 0.0, y1_1 = 0.0;
      if (t + 1 < cnt) {
        const double2* xs_g = (const double2*)(xv + (u64)si[t + 1] * 4);
        const double* yb = yv + (u64)si[3 + t + 1] * 6;
        double2* xs_s = (double2*)(sx + 4);
        if (0 + j < 2) xs_s[0 + j] = xs_g[0 + j];
        y1_0 = yb[0 * 3 + j];
        y1_1 = yb[1 * 3 + j];
      }
      __syncwarp(gm);
      double2 x0_0 = ((const double2*)(sx + 0))[0];
      double2 x0_1 = ((const double2*)(sx + 0))[1];
      c0 = c0 + x0_0.x * y0_0;
      c1 = c1 + x0_1.x * y0_0;
      c0 = c0 + x0_0.y * y0_1;
      c1 = c1 + x0_1.y * y0_1;
      if (t + 1 < cnt) {
      double2 x1_0 = ((const double2*)(sx + 4))[0];
      double2 x1_1 = ((const double2*)(sx + 4))[1];
      c0 = c0 + x1_0.x * y1_0;
      c1 = c1 + x1_1.x * y1_0;
      c0 = c0 + x1_0.y * y1_1;
      c1 = c1 + x1_1.y * y1_1;
      }
      __syncwarp(gm);
    }
  }
  cv[(u64)s * 6 + 0 + j] = c0;
  cv[(u64)s * 6 + 3 + j] = c1;
}

// flat-stream stage (2x2 by 2x3), one warp per record tile
extern "C" __global__ void ptap_flat_stream_2x2x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ rslot, const unsigned int* __restrict__ tile_rows, const unsigned int* __restrict__ tile_records, const unsigned int* __restrict__ c_rp, double* __restrict__ cv, unsigned int ntiles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u32 w = (u32)(((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (w >= ntiles) return;
  u64 e0 = (u64)c_rp[tile_rows[w]] * 6, e1 = (u64)c_rp[tile_rows[w + 1]] * 6;
  for (u64 e = e0 + lane; e < e1; e += 32) cv[e] = 0.0;
  __syncwarp();
  for (u32 q = tile_records[w]; q < tile_records[w + 1]; ++q) {
    const double* xb = xv + (u64)rx[q] * 4;
    const double* yb = yv + (u64)ry[q] * 6;
    double* cb = cv + (u64)rslot[q] * 6;
    for (u32 e = lane; e < 6; e += 32) {
      u32 i = e / 3, j = e % 3;
      double c = cb[e];
      c = c + xb[(i)*2+(0)] * yb[0 * 3 + j];
      c = c + xb[(i)*2+(1)] * yb[1 * 3 + j];
      cb[e] = c;
    }
  }
}

// lane-tiled stage (2x2 by 2x3), 6 lanes per slot each owning 1x1 outputs, 5 slots per warp, operands read straight into registers, 2 contributions per step
extern "C" __global__ void ptap_lane_tiled_2x2x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ u32 lt_idx[40 * 12];
  u32 lane = threadIdx.x & 31, gw = lane / 6;
  if (gw >= 5) return;
  u32 r = lane - gw * 6;
  u32 ti = r / 3, tj = r - ti * 3;
  u32 gl = (threadIdx.x >> 5) * 5 + gw;
  u32 idx = blockIdx.x * 40 + gl;
  if (idx >= nslots) return;
  u32 s = order[idx];
  u32* si = lt_idx + gl * 12;
  const u32 gm = 63u << (gw * 6);
  u32 xo = ti * 2;
  u32 yo = tj * 1;
  double c0_0 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 6) {
    u32 cnt = q1 - q0 < 6 ? q1 - q0 : 6;
    if (r < cnt) { si[r] = rx[q0 + r]; si[6 + r] = ry[q0 + r]; }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double x0_0_0 = 0.0, x0_0_1 = 0.0;
      double y0_0_0 = 0.0, y0_1_0 = 0.0;
      {
        const double* xb = xv + (u64)si[t + 0] * 4 + xo;
        const double* yb = yv + (u64)si[6 + t + 0] * 6 + yo;
        y0_0_0 = yb[0];
        y0_1_0 = yb[3];
        { double2 v = ((const double2*)(xb + 0))[0]; x0_0_0 = v.x; x0_0_1 = v.y; }
      }
      double x1_0_0 = 0.0, x1_0_1 = 0.0;
      double y1_0_0 = 0.0, y1_1_0 = 0.0;
      if (t + 1 < cnt) {
        const double* xb = xv + (u64)si[t + 1] * 4 + xo;
        const double* yb = yv + (u64)si[6 + t + 1] * 6 + yo;
        y1_0_0 = yb[0];
        y1_1_0 = yb[3];
        { double2 v = ((const double2*)(xb + 0))[0]; x1_0_0 = v.x; x1_0_1 = v.y; }
      }
      c0_0 = c0_0 + x0_0_0 * y0_0_0;
      c0_0 = c0_0 + x0_0_1 * y0_1_0;
      if (t + 1 < cnt) {
      c0_0 = c0_0 + x1_0_0 * y1_0_0;
      c0_0 = c0_0 + x1_0_1 * y1_1_0;
      }
    }
    __syncwarp(gm);
  }
  double* cb = cv + (u64)s * 6;
  cb[(ti * 1 + 0) * 3 + tj * 1 + 0] = c0_0;
}

// k-split stage (2x2 by 2x3), 6 lanes per slot each owning inner index kk and 1 columns, 5 slots per warp, 8 warps per block, 2 contributions per step, partials added in kk order
extern "C" __global__ void ptap_k_split_2x2x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  extern __shared__ double2 ks_smem[];
  u32 lane = threadIdx.x & 31, gw = lane / 6;
  if (gw >= 5) return;
  u32 r = lane - gw * 6;
  u32 kk = r / 3, c = r - kk * 3;
  u32 gl = (threadIdx.x >> 5) * 5 + gw;
  u32 idx = blockIdx.x * 40 + gl;
  if (idx >= nslots) return;
  u32 s = order[idx];
  double* sx = (double*)((char*)ks_smem + (u64)gl * 224);
  u32* si = (u32*)(sx + 8);
  const u32 gm = 63u << (gw * 6);
  u32 yo = kk * 3 + c * 1;
  double c0_0 = 0.0;
  double c1_0 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 6) {
    u32 cnt = q1 - q0 < 6 ? q1 - q0 : 6;
    if (r < cnt) { si[r] = rx[q0 + r]; si[6 + r] = ry[q0 + r]; }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double y0_0 = 0.0;
      {
        const double2* xs_g = (const double2*)(xv + (u64)si[t + 0] * 4);
        double2* xs_s = (double2*)(sx + 0);
        const double* yb = yv + (u64)si[6 + t + 0] * 6 + yo;
        if (0 + r < 2) xs_s[0 + r] = xs_g[0 + r];
        y0_0 = yb[0];
      }
      double y1_0 = 0.0;
      if (t + 1 < cnt) {
        const double2* xs_g = (const double2*)(xv + (u64)si[t + 1] * 4);
        double2* xs_s = (double2*)(sx + 4);
        const double* yb = yv + (u64)si[6 + t + 1] * 6 + yo;
        if (0 + r < 2) xs_s[0 + r] = xs_g[0 + r];
        y1_0 = yb[0];
      }
      __syncwarp(gm);
      { double x = sx[0 + 0 + kk];
        c0_0 = c0_0 + x * y0_0;
      }
      { double x = sx[0 + 2 + kk];
        c1_0 = c1_0 + x * y0_0;
      }
      if (t + 1 < cnt) {
      { double x = sx[4 + 0 + kk];
        c0_0 = c0_0 + x * y1_0;
      }
      { double x = sx[4 + 2 + kk];
        c1_0 = c1_0 + x * y1_0;
      }
      }
      __syncwarp(gm);
    }
  }
  double* part = sx;
  part[(kk * 2 + 0) * 3 + c * 1 + 0] = c0_0;
  part[(kk * 2 + 1) * 3 + c * 1 + 0] = c1_0;
  __syncwarp(gm);
  double* cb = cv + (u64)s * 6;
  for (u32 e = r; e < 6; e += 6) {
    double v = part[e];
    v = v + part[6 + e];
    cb[e] = v;
  }
}

// tensor-core stage (2x2 by 2x3), one warp per slot, 1 FP64 m8n8k4 MMA per contribution, 4 contributions per step
extern "C" __global__ void ptap_mma_2x2x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (w >= nslots) return;
  u32 s = order[w];
  u32 r = lane >> 2, t = lane & 3;
  const double* xl0 = xv + (r < 2 && (0 + t) < 2 ? r * 2 + (0 + t) : 0);
  const double* yl0 = yv + (r < 3 && (0 + t) < 2 ? (0 + t) * 3 + r : 0);
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 2 ? 1.0 : 0.0;
  double d0 = 0.0, d1 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 16) {
    u32 cnt = q1 - q0 < 16 ? q1 - q0 : 16;
    u32 e = lane & 15;
    u32 idx = 0;
    if (e < cnt) idx = lane < 16 ? rx[q0 + e] : ry[q0 + e];
    u32 u = 0;
    for (; u + 4 <= cnt; u += 4) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = __ldg(xl0 + (u64)xi0 * 4), b0_0 = __ldg(yl0 + (u64)yi0 * 6) * ym0;
      u32 xi1 = __shfl_sync(0xffffffffu, idx, u + 1), yi1 = __shfl_sync(0xffffffffu, idx, 16 + u + 1);
      double a1_0 = __ldg(xl0 + (u64)xi1 * 4), b1_0 = __ldg(yl0 + (u64)yi1 * 6) * ym0;
      u32 xi2 = __shfl_sync(0xffffffffu, idx, u + 2), yi2 = __shfl_sync(0xffffffffu, idx, 16 + u + 2);
      double a2_0 = __ldg(xl0 + (u64)xi2 * 4), b2_0 = __ldg(yl0 + (u64)yi2 * 6) * ym0;
      u32 xi3 = __shfl_sync(0xffffffffu, idx, u + 3), yi3 = __shfl_sync(0xffffffffu, idx, 16 + u + 3);
      double a3_0 = __ldg(xl0 + (u64)xi3 * 4), b3_0 = __ldg(yl0 + (u64)yi3 * 6) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a3_0), "d"(b3_0));
    }
    for (; u < cnt; ++u) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = __ldg(xl0 + (u64)xi0 * 4), b0_0 = __ldg(yl0 + (u64)yi0 * 6) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    }
  }
  u32 c0 = 2 * t;
  double* cb = cv + (u64)s * 6;
  if (r < 2) { if (c0 < 3) cb[r * 3 + c0] = d0; if (c0 + 1 < 3) cb[r * 3 + c0 + 1] = d1; }
#else
  __trap();
#endif
}

// tensor-pair stage (2x2 by 2x3, Packed), one warp per unit of 2 slot(s), 1 FP64 m8n8k4 MMA per entry and side, 4 entries per step, the last ones as one guarded step
extern "C" __global__ void ptap_mma2_2x2x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ uptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (w >= nunits) return;
  u32 r = lane >> 2, t = lane & 3;
  const bool av0 = (r & 3) < 2 && (0 + t) < 2, bv0 = r < 3 && (0 + t) < 2;
  const double* xl0 = xv + (av0 ? (r & 3) * 2 + (0 + t) : 0);
  const double* yl0 = yv + (bv0 ? (0 + t) * 3 + r : (r < 3 ? r : 2));
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 2 ? 1.0 : 0.0;
  const uint2* ep = (const uint2*)ent;
  double d0 = 0.0, d1 = 0.0;
  u32 q = uptr[w], q1 = uptr[w + 1];
  for (; q + 4 <= q1; q += 4) {
    uint2 e0 = __ldg(ep + (2 * q + (r >> 2)) + 0);
    uint2 e1 = __ldg(ep + (2 * q + (r >> 2)) + 2);
    uint2 e2 = __ldg(ep + (2 * q + (r >> 2)) + 4);
    uint2 e3 = __ldg(ep + (2 * q + (r >> 2)) + 6);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 6) * ym0;
    if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)e0.x * 4);
    double b1_0 = 0.0, a1_0 = 0.0;
    b1_0 = __ldg(yl0 + (u64)e1.y * 6) * ym0;
    if (av0 && e1.x != 0xffffffffu) a1_0 = __ldg(xl0 + (u64)e1.x * 4);
    double b2_0 = 0.0, a2_0 = 0.0;
    b2_0 = __ldg(yl0 + (u64)e2.y * 6) * ym0;
    if (av0 && e2.x != 0xffffffffu) a2_0 = __ldg(xl0 + (u64)e2.x * 4);
    double b3_0 = 0.0, a3_0 = 0.0;
    b3_0 = __ldg(yl0 + (u64)e3.y * 6) * ym0;
    if (av0 && e3.x != 0xffffffffu) a3_0 = __ldg(xl0 + (u64)e3.x * 4);
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a3_0), "d"(b3_0));
  }
  if (q < q1) {
    u32 rem = q1 - q;
    uint2 e0 = __ldg(ep + (2 * q + (r >> 2)) + 0);
    uint2 e1 = make_uint2(0, 0);
    if (1 < rem) e1 = __ldg(ep + (2 * q + (r >> 2)) + 2);
    uint2 e2 = make_uint2(0, 0);
    if (2 < rem) e2 = __ldg(ep + (2 * q + (r >> 2)) + 4);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 6) * ym0;
    if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)e0.x * 4);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 6) * ym0; if (av0 && e1.x != 0xffffffffu) a1_0 = __ldg(xl0 + (u64)e1.x * 4); }
    double b2_0 = 0.0, a2_0 = 0.0;
    if (2 < rem) { b2_0 = __ldg(yl0 + (u64)e2.y * 6) * ym0; if (av0 && e2.x != 0xffffffffu) a2_0 = __ldg(xl0 + (u64)e2.x * 4); }
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    if (1 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    if (2 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
  }
  u32 c0 = 2 * t;
  {
  u32 s = uslot[2 * w + (r >> 2)];
  double* cb = cv + (u64)s * 6;
  if (s != 0xffffffffu && (r & 3) < 2) {
    if (c0 < 3) cb[(r & 3) * 3 + c0] = d0; if (c0 + 1 < 3) cb[(r & 3) * 3 + c0 + 1] = d1;
  }
  }
#else
  __trap();
#endif
}

// tensor-core stage (2x2 by 2x3), a block's warps interleaved over `chunk` consecutive slots, 1 FP64 m8n8k4 MMA per contribution, 4 contributions per step, a run's last x block halved where its end bound has bit 31
extern "C" __global__ void ptap_mmah_2x2x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots, unsigned int chunk) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  const u32 nbw = blockDim.x >> 5, w1 = min(blockIdx.x * chunk + chunk, nslots);
  for (u32 w = blockIdx.x * chunk + (threadIdx.x >> 5); w < w1; w += nbw) {
  uint2 qb = __ldg((const uint2*)ptr + w);
  u32 s = order[w];
  const bool dg = (int)qb.y < 0;
  u32 r = lane >> 2, t = lane & 3;
  const double* xl0 = xv + (r < 2 && (0 + t) < 2 ? r * 2 + (0 + t) : 0);
  const double* yl0 = yv + (r < 3 && (0 + t) < 2 ? (0 + t) * 3 + r : 0);
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 2 ? 1.0 : 0.0;
  double d0 = 0.0, d1 = 0.0;
  u32 q1 = qb.y & 0x7fffffffu;
  for (u32 q0 = qb.x; q0 < q1; q0 += 16) {
    u32 cnt = q1 - q0 < 16 ? q1 - q0 : 16;
    u32 ce = cnt - (dg && q0 + cnt == q1 ? 1 : 0);
    u32 e = lane & 15;
    u32 idx = 0;
    if (e < cnt) idx = lane < 16 ? rx[q0 + e] : ry[q0 + e];
    u32 u = 0;
    for (; u + 4 <= ce; u += 4) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = __ldg(xl0 + (u64)xi0 * 4), b0_0 = __ldg(yl0 + (u64)yi0 * 6) * ym0;
      u32 xi1 = __shfl_sync(0xffffffffu, idx, u + 1), yi1 = __shfl_sync(0xffffffffu, idx, 16 + u + 1);
      double a1_0 = __ldg(xl0 + (u64)xi1 * 4), b1_0 = __ldg(yl0 + (u64)yi1 * 6) * ym0;
      u32 xi2 = __shfl_sync(0xffffffffu, idx, u + 2), yi2 = __shfl_sync(0xffffffffu, idx, 16 + u + 2);
      double a2_0 = __ldg(xl0 + (u64)xi2 * 4), b2_0 = __ldg(yl0 + (u64)yi2 * 6) * ym0;
      u32 xi3 = __shfl_sync(0xffffffffu, idx, u + 3), yi3 = __shfl_sync(0xffffffffu, idx, 16 + u + 3);
      double a3_0 = __ldg(xl0 + (u64)xi3 * 4), b3_0 = __ldg(yl0 + (u64)yi3 * 6) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a3_0), "d"(b3_0));
    }
    for (; u < ce; ++u) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = __ldg(xl0 + (u64)xi0 * 4), b0_0 = __ldg(yl0 + (u64)yi0 * 6) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    }
    if (u < cnt) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      xi0 &= 0x7fffffffu;
      double a0_0 = __ldg(xl0 + (u64)xi0 * 4), b0_0 = __ldg(yl0 + (u64)yi0 * 6) * ym0;
      d0 *= 2.0;
      d1 *= 2.0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      d0 *= 0.5;
      d1 *= 0.5;
    }
  }
  u32 c0 = 2 * t;
  double* cb = cv + (u64)s * 6;
  if (r < 2) { if (c0 < 3) cb[r * 3 + c0] = d0; if (c0 + 1 < 3) cb[r * 3 + c0 + 1] = d1; }
  }
#else
  __trap();
#endif
}

// tensor-pair stage (2x2 by 2x3, Packed), warps walking spans of units of 2 slot(s), 1 FP64 m8n8k4 MMA per entry and side, 4 entries per step, the last ones as one guarded step, x blocks flagged in bit 31 halved
extern "C" __global__ __launch_bounds__(128, 16) void ptap_mma2h_2x2x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ uptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits, unsigned int chunk, unsigned int inter) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 r = lane >> 2, t = lane & 3;
  const bool av0 = (r & 3) < 2 && (0 + t) < 2, bv0 = r < 3 && (0 + t) < 2;
  const double* xl0 = xv + (av0 ? (r & 3) * 2 + (0 + t) : 0);
  const double* yl0 = yv + (bv0 ? (0 + t) * 3 + r : (r < 3 ? r : 2));
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 2 ? 1.0 : 0.0;
  const uint2* ep = (const uint2*)ent;
  const u32 nb = blockDim.x >> 5, lw = threadIdx.x >> 5, g = blockIdx.x * nb + lw;
  const u32 step = inter ? nb : 1, span = chunk * step;
  const u64 jump = (u64)(inter ? gridDim.x : gridDim.x * nb) * span;
  for (u64 b0 = (u64)(inter ? blockIdx.x : g) * span; b0 < nunits; b0 += jump) {
  const u32 b1 = (u32)(b0 + span < nunits ? b0 + span : nunits);
  for (u32 w = (u32)b0 + (inter ? lw : 0); w < b1; w += step) {
  double d0 = 0.0, d1 = 0.0;
  u32 q = uptr[w], q1 = uptr[w + 1];
  const u32 qt = q1 - q < 2 ? q : q1 - 2;
  for (; q + 4 <= qt; q += 4) {
    uint2 e0 = __ldg(ep + (2 * q + (r >> 2)) + 0);
    uint2 e1 = __ldg(ep + (2 * q + (r >> 2)) + 2);
    uint2 e2 = __ldg(ep + (2 * q + (r >> 2)) + 4);
    uint2 e3 = __ldg(ep + (2 * q + (r >> 2)) + 6);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 6) * ym0;
    if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)(e0.x & 0x7fffffffu) * 4);
    double b1_0 = 0.0, a1_0 = 0.0;
    b1_0 = __ldg(yl0 + (u64)e1.y * 6) * ym0;
    if (av0 && e1.x != 0xffffffffu) a1_0 = __ldg(xl0 + (u64)(e1.x & 0x7fffffffu) * 4);
    double b2_0 = 0.0, a2_0 = 0.0;
    b2_0 = __ldg(yl0 + (u64)e2.y * 6) * ym0;
    if (av0 && e2.x != 0xffffffffu) a2_0 = __ldg(xl0 + (u64)(e2.x & 0x7fffffffu) * 4);
    double b3_0 = 0.0, a3_0 = 0.0;
    b3_0 = __ldg(yl0 + (u64)e3.y * 6) * ym0;
    if (av0 && e3.x != 0xffffffffu) a3_0 = __ldg(xl0 + (u64)(e3.x & 0x7fffffffu) * 4);
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a3_0), "d"(b3_0));
  }
  if (q < qt) {
    u32 rem = qt - q;
    uint2 e0 = __ldg(ep + (2 * q + (r >> 2)) + 0);
    uint2 e1 = make_uint2(0, 0);
    if (1 < rem) e1 = __ldg(ep + (2 * q + (r >> 2)) + 2);
    uint2 e2 = make_uint2(0, 0);
    if (2 < rem) e2 = __ldg(ep + (2 * q + (r >> 2)) + 4);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 6) * ym0;
    if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)(e0.x & 0x7fffffffu) * 4);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 6) * ym0; if (av0 && e1.x != 0xffffffffu) a1_0 = __ldg(xl0 + (u64)(e1.x & 0x7fffffffu) * 4); }
    double b2_0 = 0.0, a2_0 = 0.0;
    if (2 < rem) { b2_0 = __ldg(yl0 + (u64)e2.y * 6) * ym0; if (av0 && e2.x != 0xffffffffu) a2_0 = __ldg(xl0 + (u64)(e2.x & 0x7fffffffu) * 4); }
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    if (1 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    if (2 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
  }
  q = qt;
  if (q < q1) {
    u32 rem = q1 - q;
    d0 *= 2.0;
    d1 *= 2.0;
    uint2 e0 = __ldg(ep + (2 * q + (r >> 2)) + 0);
    uint2 e1 = make_uint2(0, 0);
    if (1 < rem) e1 = __ldg(ep + (2 * q + (r >> 2)) + 2);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 6) * ym0;
    if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)(e0.x & 0x7fffffffu) * 4);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 6) * ym0; if (av0 && e1.x != 0xffffffffu) a1_0 = __ldg(xl0 + (u64)(e1.x & 0x7fffffffu) * 4); }
    a0_0 *= (int)e0.x < 0 ? 1.0 : 2.0;
    a1_0 *= (int)e1.x < 0 ? 1.0 : 2.0;
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    if (1 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    d0 *= 0.5;
    d1 *= 0.5;
  }
  u32 c0 = 2 * t;
  {
  u32 s = uslot[2 * w + (r >> 2)];
  double* cb = cv + (u64)s * 6;
  if (s != 0xffffffffu && (r & 3) < 2) {
    if (c0 < 3) cb[(r & 3) * 3 + c0] = d0; if (c0 + 1 < 3) cb[(r & 3) * 3 + c0 + 1] = d1;
  }
  }
  }
  }
#else
  __trap();
#endif
}

// C = X + X^T in place over 3x3 blocks, one thread per slot element
extern "C" __global__ void ptap_symmetrize_3x3(double* __restrict__ cv, const unsigned int* __restrict__ tr, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (u64)nslots * 9) return;
  u32 s = (u32)(i / 9), e = (u32)(i % 9), a = e / 3, b = e % 3;
  u32 t = tr[s];
  if (s < t || (s == t && a <= b)) {
    double* x = cv + (u64)s * 9 + a * 3 + b;
    double* y = cv + (u64)t * 9 + b * 3 + a;
    double v = *x + *y;
    *x = v;
    *y = v;
  }
}

// C = X + X^T over 3x3 blocks from X's chunk sums, one thread per slot element
extern "C" __global__ void ptap_symsplit_3x3(double* __restrict__ cv, const double* __restrict__ xs, const unsigned int* __restrict__ first, const unsigned int* __restrict__ tr, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (u64)nslots * 9) return;
  u32 s = (u32)(i / 9), e = (u32)(i % 9), a = e / 3, b = e % 3;
  u32 t = tr[s];
  u32 c = first[s], c1 = first[s + 1];
  double x = __ldg(xs + (u64)c * 9 + a * 3 + b);
  for (++c; c < c1; ++c) x += __ldg(xs + (u64)c * 9 + a * 3 + b);
  c = first[t]; c1 = first[t + 1];
  double y = __ldg(xs + (u64)c * 9 + b * 3 + a);
  for (++c; c < c1; ++c) y += __ldg(xs + (u64)c * 9 + b * 3 + a);
  cv[(u64)s * 9 + e] = x + y;
}

// folded P^T W' stage (3x2 by 2x3), one warp per slot (I, J) of the upper triangle summing X_IJ + X_JI^T, 1 FP64 m8n8k4 MMA per entry, 4 entries per step, each half's last ones as one guarded step; writes (I, J) and (J, I)
extern "C" __global__ void ptap_mma2f_3x2x3t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ hptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (w >= nunits) return;
  u32 r = lane >> 2, t = lane & 3;
  const bool av0 = r < 3 && (0 + t) < 2, bv0 = r < 3 && (0 + t) < 2;
  const double* xl0 = xv + (av0 ? (0 + t) * 3 + r : (r < 3 ? r : 2));
  const double* yl0 = yv + (bv0 ? (0 + t) * 3 + r : (r < 3 ? r : 2));
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 2 ? 1.0 : 0.0;
  const uint2* ep = (const uint2*)ent;
  double d0 = 0.0, d1 = 0.0;
  u32 q = hptr[2 * w], q1 = hptr[2 * w + 1];
  for (; q + 4 <= q1; q += 4) {
    uint2 e0 = __ldg(ep + q + 0);
    uint2 e1 = __ldg(ep + q + 1);
    uint2 e2 = __ldg(ep + q + 2);
    uint2 e3 = __ldg(ep + q + 3);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 6) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 6);
    double b1_0 = 0.0, a1_0 = 0.0;
    b1_0 = __ldg(yl0 + (u64)e1.y * 6) * ym0;
    a1_0 = __ldg(xl0 + (u64)e1.x * 6);
    double b2_0 = 0.0, a2_0 = 0.0;
    b2_0 = __ldg(yl0 + (u64)e2.y * 6) * ym0;
    a2_0 = __ldg(xl0 + (u64)e2.x * 6);
    double b3_0 = 0.0, a3_0 = 0.0;
    b3_0 = __ldg(yl0 + (u64)e3.y * 6) * ym0;
    a3_0 = __ldg(xl0 + (u64)e3.x * 6);
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a3_0), "d"(b3_0));
  }
  if (q < q1) {
    u32 rem = q1 - q;
    uint2 e0 = __ldg(ep + q + 0);
    uint2 e1 = make_uint2(0, 0);
    if (1 < rem) e1 = __ldg(ep + q + 1);
    uint2 e2 = make_uint2(0, 0);
    if (2 < rem) e2 = __ldg(ep + q + 2);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 6) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 6);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 6) * ym0; a1_0 = __ldg(xl0 + (u64)e1.x * 6); }
    double b2_0 = 0.0, a2_0 = 0.0;
    if (2 < rem) { b2_0 = __ldg(yl0 + (u64)e2.y * 6) * ym0; a2_0 = __ldg(xl0 + (u64)e2.x * 6); }
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    if (1 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    if (2 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
  }
  q = q1;
  q1 = hptr[2 * w + 2];
  for (; q + 4 <= q1; q += 4) {
    uint2 e0 = __ldg(ep + q + 0);
    uint2 e1 = __ldg(ep + q + 1);
    uint2 e2 = __ldg(ep + q + 2);
    uint2 e3 = __ldg(ep + q + 3);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 6) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 6);
    double b1_0 = 0.0, a1_0 = 0.0;
    b1_0 = __ldg(yl0 + (u64)e1.y * 6) * ym0;
    a1_0 = __ldg(xl0 + (u64)e1.x * 6);
    double b2_0 = 0.0, a2_0 = 0.0;
    b2_0 = __ldg(yl0 + (u64)e2.y * 6) * ym0;
    a2_0 = __ldg(xl0 + (u64)e2.x * 6);
    double b3_0 = 0.0, a3_0 = 0.0;
    b3_0 = __ldg(yl0 + (u64)e3.y * 6) * ym0;
    a3_0 = __ldg(xl0 + (u64)e3.x * 6);
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(b0_0), "d"(a0_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(b1_0), "d"(a1_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(b2_0), "d"(a2_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(b3_0), "d"(a3_0));
  }
  if (q < q1) {
    u32 rem = q1 - q;
    uint2 e0 = __ldg(ep + q + 0);
    uint2 e1 = make_uint2(0, 0);
    if (1 < rem) e1 = __ldg(ep + q + 1);
    uint2 e2 = make_uint2(0, 0);
    if (2 < rem) e2 = __ldg(ep + q + 2);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 6) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 6);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 6) * ym0; a1_0 = __ldg(xl0 + (u64)e1.x * 6); }
    double b2_0 = 0.0, a2_0 = 0.0;
    if (2 < rem) { b2_0 = __ldg(yl0 + (u64)e2.y * 6) * ym0; a2_0 = __ldg(xl0 + (u64)e2.x * 6); }
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(b0_0), "d"(a0_0));
    if (1 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(b1_0), "d"(a1_0));
    if (2 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(b2_0), "d"(a2_0));
  }
  u32 c0 = 2 * t;
  u32 s0 = uslot[2 * w], s1 = uslot[2 * w + 1];
  if (s1 == 0xffffffffu) {
    u32 la = c0 * 4 + (r >> 1);
    double a0 = __shfl_sync(0xffffffffu, d0, la), a1 = __shfl_sync(0xffffffffu, d1, la);
    double b0 = __shfl_sync(0xffffffffu, d0, la + 4), b1 = __shfl_sync(0xffffffffu, d1, la + 4);
    d0 += (r & 1) ? a1 : a0;
    d1 += (r & 1) ? b1 : b0;
  }
  if (r < 3) {
    double* cb = cv + (u64)s0 * 9;
    if (c0 < 3) cb[r * 3 + c0] = d0; if (c0 + 1 < 3) cb[r * 3 + c0 + 1] = d1;
    if (s1 != 0xffffffffu) {
      double* ct = cv + (u64)s1 * 9;
      if (c0 < 3) ct[c0 * 3 + r] = d0; if (c0 + 1 < 3) ct[(c0 + 1) * 3 + r] = d1;
    }
  }
#else
  __trap();
#endif
}

// row-Gustavson stage (2x2 by 2x3), one warp per chunk of 32 output slots, 4 warps per block
extern "C" __global__ void ptap_row_gustavson_2x2x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ chunk_slot, const unsigned int* __restrict__ chunk_seg, const unsigned int* __restrict__ chunk_pos, const unsigned int* __restrict__ seg_x, const unsigned int* __restrict__ seg_y, const unsigned int* __restrict__ seg_n, const unsigned int* __restrict__ pos, double* __restrict__ cv, unsigned int nchunks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double rg_acc[4][32 * 6];
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u32 c = blockIdx.x * 4 + wl;
  if (c >= nchunks) return;
  double* acc = rg_acc[wl];
  u32 s0 = chunk_slot[c], ne = (chunk_slot[c + 1] - s0) * 6;
  for (u32 e = lane; e < ne; e += 32) acc[e] = 0.0;
  __syncwarp();
  const unsigned char* sn = (const unsigned char*)seg_n;
  const unsigned char* ps = (const unsigned char*)pos;
  u32 pb = chunk_pos[c];
  u32 g1 = chunk_seg[c + 1];
  for (u32 g = chunk_seg[c]; g < g1; ++g) {
    u32 cnt = sn[g];
    const double* xb = xv + (u64)seg_x[g] * 4;
    const double* yb0 = yv + (u64)seg_y[g] * 6;
    double x0 = __ldg(xb + 0);
    double x1 = __ldg(xb + 1);
    double x2 = __ldg(xb + 2);
    double x3 = __ldg(xb + 3);
    for (u32 t = lane; t < cnt * 3; t += 32) {
      u32 b = t / 3, j = t - b * 3;
      const double* yb = yb0 + (u64)b * 6;
      double* o = acc + (u32)ps[pb + b] * 6 + j;
      double y0 = __ldg(yb + 0 * 3 + j);
      double y1 = __ldg(yb + 1 * 3 + j);
      { double a = o[0];
        a = a + x0 * y0;
        a = a + x1 * y1;
        o[0] = a; }
      { double a = o[3];
        a = a + x2 * y0;
        a = a + x3 * y1;
        o[3] = a; }
    }
    pb += cnt;
    __syncwarp();
  }
  for (u32 e = lane; e < ne; e += 32) cv[(u64)s0 * 6 + e] = acc[e];
}

// outer-product scatter pass (2x2 by 2x3), atomic accumulation
extern "C" __global__ void ptap_scatter_2x2x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ rslot, double* __restrict__ cv, unsigned int nrecords) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nrecords * 6) return;
  u32 q = (u32)(t / 6); u32 e = (u32)(t % 6);
  u32 i = e / 3, j = e % 3;
  const double* xb = xv + (u64)rx[q] * 4;
  const double* yb = yv + (u64)ry[q] * 6;
  double v = 0.0;
  v = v + xb[(i)*2+(0)] * yb[0 * 3 + j];
  v = v + xb[(i)*2+(1)] * yb[1 * 3 + j];
  atomicAdd(cv + (u64)rslot[q] * 6 + e, v);
}

// slot-tiled stage (3x2 by 2x3), 128 slots per block, register accumulators
extern "C" __global__ void ptap_slot_tiled_3x2x3t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double tile[128 * 9];
  u32 s0 = blockIdx.x * 128;
  u32 s = s0 + threadIdx.x;
  double a0 = 0.0;
  double a1 = 0.0;
  double a2 = 0.0;
  double a3 = 0.0;
  double a4 = 0.0;
  double a5 = 0.0;
  double a6 = 0.0;
  double a7 = 0.0;
  double a8 = 0.0;
  if (s < nslots) {
    for (u32 q = ptr[s]; q < ptr[s + 1]; ++q) {
      const double* xb = xv + (u64)rx[q] * 6;
      const double* yb = yv + (u64)ry[q] * 6;
      double y0_0 = yb[0];
      double y0_1 = yb[1];
      double y0_2 = yb[2];
      double y1_0 = yb[3];
      double y1_1 = yb[4];
      double y1_2 = yb[5];
      { double x = xb[(0)*3+(0)];
        a0 = a0 + x * y0_0;
        a1 = a1 + x * y0_1;
        a2 = a2 + x * y0_2;
      }
      { double x = xb[(0)*3+(1)];
        a3 = a3 + x * y0_0;
        a4 = a4 + x * y0_1;
        a5 = a5 + x * y0_2;
      }
      { double x = xb[(0)*3+(2)];
        a6 = a6 + x * y0_0;
        a7 = a7 + x * y0_1;
        a8 = a8 + x * y0_2;
      }
      { double x = xb[(1)*3+(0)];
        a0 = a0 + x * y1_0;
        a1 = a1 + x * y1_1;
        a2 = a2 + x * y1_2;
      }
      { double x = xb[(1)*3+(1)];
        a3 = a3 + x * y1_0;
        a4 = a4 + x * y1_1;
        a5 = a5 + x * y1_2;
      }
      { double x = xb[(1)*3+(2)];
        a6 = a6 + x * y1_0;
        a7 = a7 + x * y1_1;
        a8 = a8 + x * y1_2;
      }
    }
  }
  tile[threadIdx.x * 9 + 0] = a0;
  tile[threadIdx.x * 9 + 1] = a1;
  tile[threadIdx.x * 9 + 2] = a2;
  tile[threadIdx.x * 9 + 3] = a3;
  tile[threadIdx.x * 9 + 4] = a4;
  tile[threadIdx.x * 9 + 5] = a5;
  tile[threadIdx.x * 9 + 6] = a6;
  tile[threadIdx.x * 9 + 7] = a7;
  tile[threadIdx.x * 9 + 8] = a8;
  __syncthreads();
  u32 valid = nslots - s0 < 128 ? nslots - s0 : 128;
  for (u32 e = threadIdx.x; e < valid * 9; e += 128) cv[(u64)s0 * 9 + e] = tile[e];
}

// column-split stage (3x2 by 2x3), 3 lanes per slot, 10 slots per warp, one window per block, x staged in shared memory, 2 contributions per step, 3 indices per fetch
extern "C" __global__ void ptap_column_split_3x2x3t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots, unsigned int window) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  extern __shared__ double2 cs_smem[];
  u32 lane = threadIdx.x & 31, gw = lane / 3;
  if (gw >= 10) return;
  u32 j = lane - gw * 3;
  u32 g = (threadIdx.x >> 5) * 10 + gw;
  if (g >= window) return;
  u32 idx = blockIdx.x * window + g;
  if (idx >= nslots) return;
  u32 s = order[idx];
  double* sx = (double*)((char*)cs_smem + (u64)g * 144);
  u32* si = (u32*)(sx + 12);
  const u32 gm = 7u << (gw * 3);
  double c0 = 0.0;
  double c1 = 0.0;
  double c2 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 3) {
    u32 cnt = q1 - q0 < 3 ? q1 - q0 : 3;
    { u32 e = 0 + j; if (e < cnt) { si[e] = rx[q0 + e]; si[3 + e] = ry[q0 + e]; } }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double y0_0 = 0.0, y0_1 = 0.0;
      {
        const double2* xs_g = (const double2*)(xv + (u64)si[t + 0] * 6);
        const double* yb = yv + (u64)si[3 + t + 0] * 6;
        double2* xs_s = (double2*)(sx + 0);
        xs_s[0 + j] = xs_g[0 + j];
        y0_0 = yb[0 * 3 + j];
        y0_1 = yb[1 * 3 + j];
      }
      double y1_0 = 0.0, y1_1 = 0.0;
      if (t + 1 < cnt) {
        const double2* xs_g = (const double2*)(xv + (u64)si[t + 1] * 6);
        const double* yb = yv + (u64)si[3 + t + 1] * 6;
        double2* xs_s = (double2*)(sx + 6);
        xs_s[0 + j] = xs_g[0 + j];
        y1_0 = yb[0 * 3 + j];
        y1_1 = yb[1 * 3 + j];
      }
      __syncwarp(gm);
      double2 x0_0 = ((const double2*)(sx + 0))[0];
      double2 x0_1 = ((const double2*)(sx + 0))[1];
      double2 x0_2 = ((const double2*)(sx + 0))[2];
      c0 = c0 + x0_0.x * y0_0;
      c1 = c1 + x0_0.y * y0_0;
      c2 = c2 + x0_1.x * y0_0;
      c0 = c0 + x0_1.y * y0_1;
      c1 = c1 + x0_2.x * y0_1;
      c2 = c2 + x0_2.y * y0_1;
      if (t + 1 < cnt) {
      double2 x1_0 = ((const double2*)(sx + 6))[0];
      double2 x1_1 = ((const double2*)(sx + 6))[1];
      double2 x1_2 = ((const double2*)(sx + 6))[2];
      c0 = c0 + x1_0.x * y1_0;
      c1 = c1 + x1_0.y * y1_0;
      c2 = c2 + x1_1.x * y1_0;
      c0 = c0 + x1_1.y * y1_1;
      c1 = c1 + x1_2.x * y1_1;
      c2 = c2 + x1_2.y * y1_1;
      }
      __syncwarp(gm);
    }
  }
  cv[(u64)s * 9 + 0 + j] = c0;
  cv[(u64)s * 9 + 3 + j] = c1;
  cv[(u64)s * 9 + 6 + j] = c2;
}

// flat-stream stage (3x2 by 2x3), one warp per record tile
extern "C" __global__ void ptap_flat_stream_3x2x3t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ rslot, const unsigned int* __restrict__ tile_rows, const unsigned int* __restrict__ tile_records, const unsigned int* __restrict__ c_rp, double* __restrict__ cv, unsigned int ntiles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u32 w = (u32)(((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (w >= ntiles) return;
  u64 e0 = (u64)c_rp[tile_rows[w]] * 9, e1 = (u64)c_rp[tile_rows[w + 1]] * 9;
  for (u64 e = e0 + lane; e < e1; e += 32) cv[e] = 0.0;
  __syncwarp();
  for (u32 q = tile_records[w]; q < tile_records[w + 1]; ++q) {
    const double* xb = xv + (u64)rx[q] * 6;
    const double* yb = yv + (u64)ry[q] * 6;
    double* cb = cv + (u64)rslot[q] * 9;
    for (u32 e = lane; e < 9; e += 32) {
      u32 i = e / 3, j = e % 3;
      double c = cb[e];
      c = c + xb[(0)*3+(i)] * yb[0 * 3 + j];
      c = c + xb[(1)*3+(i)] * yb[1 * 3 + j];
      cb[e] = c;
    }
  }
}

// lane-tiled stage (3x2 by 2x3), 9 lanes per slot each owning 1x1 outputs, 3 slots per warp, operands read straight into registers, 2 contributions per step
extern "C" __global__ void ptap_lane_tiled_3x2x3t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ u32 lt_idx[24 * 18];
  u32 lane = threadIdx.x & 31, gw = lane / 9;
  if (gw >= 3) return;
  u32 r = lane - gw * 9;
  u32 ti = r / 3, tj = r - ti * 3;
  u32 gl = (threadIdx.x >> 5) * 3 + gw;
  u32 idx = blockIdx.x * 24 + gl;
  if (idx >= nslots) return;
  u32 s = order[idx];
  u32* si = lt_idx + gl * 18;
  const u32 gm = 511u << (gw * 9);
  u32 xo = ti * 1;
  u32 yo = tj * 1;
  double c0_0 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 9) {
    u32 cnt = q1 - q0 < 9 ? q1 - q0 : 9;
    if (r < cnt) { si[r] = rx[q0 + r]; si[9 + r] = ry[q0 + r]; }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double x0_0_0 = 0.0, x0_0_1 = 0.0;
      double y0_0_0 = 0.0, y0_1_0 = 0.0;
      {
        const double* xb = xv + (u64)si[t + 0] * 6 + xo;
        const double* yb = yv + (u64)si[9 + t + 0] * 6 + yo;
        y0_0_0 = yb[0];
        y0_1_0 = yb[3];
        x0_0_0 = xb[0];
        x0_0_1 = xb[3];
      }
      double x1_0_0 = 0.0, x1_0_1 = 0.0;
      double y1_0_0 = 0.0, y1_1_0 = 0.0;
      if (t + 1 < cnt) {
        const double* xb = xv + (u64)si[t + 1] * 6 + xo;
        const double* yb = yv + (u64)si[9 + t + 1] * 6 + yo;
        y1_0_0 = yb[0];
        y1_1_0 = yb[3];
        x1_0_0 = xb[0];
        x1_0_1 = xb[3];
      }
      c0_0 = c0_0 + x0_0_0 * y0_0_0;
      c0_0 = c0_0 + x0_0_1 * y0_1_0;
      if (t + 1 < cnt) {
      c0_0 = c0_0 + x1_0_0 * y1_0_0;
      c0_0 = c0_0 + x1_0_1 * y1_1_0;
      }
    }
    __syncwarp(gm);
  }
  double* cb = cv + (u64)s * 9;
  cb[(ti * 1 + 0) * 3 + tj * 1 + 0] = c0_0;
}

// k-split stage (3x2 by 2x3), 6 lanes per slot each owning inner index kk and 1 columns, 5 slots per warp, 8 warps per block, 2 contributions per step, partials added in kk order
extern "C" __global__ void ptap_k_split_3x2x3t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  extern __shared__ double2 ks_smem[];
  u32 lane = threadIdx.x & 31, gw = lane / 6;
  if (gw >= 5) return;
  u32 r = lane - gw * 6;
  u32 kk = r / 3, c = r - kk * 3;
  u32 gl = (threadIdx.x >> 5) * 5 + gw;
  u32 idx = blockIdx.x * 40 + gl;
  if (idx >= nslots) return;
  u32 s = order[idx];
  double* sx = (double*)((char*)ks_smem + (u64)gl * 352);
  u32* si = (u32*)(sx + 12);
  const u32 gm = 63u << (gw * 6);
  u32 yo = kk * 3 + c * 1;
  double c0_0 = 0.0;
  double c1_0 = 0.0;
  double c2_0 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 6) {
    u32 cnt = q1 - q0 < 6 ? q1 - q0 : 6;
    if (r < cnt) { si[r] = rx[q0 + r]; si[6 + r] = ry[q0 + r]; }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double y0_0 = 0.0;
      {
        const double2* xs_g = (const double2*)(xv + (u64)si[t + 0] * 6);
        double2* xs_s = (double2*)(sx + 0);
        const double* yb = yv + (u64)si[6 + t + 0] * 6 + yo;
        if (0 + r < 3) xs_s[0 + r] = xs_g[0 + r];
        y0_0 = yb[0];
      }
      double y1_0 = 0.0;
      if (t + 1 < cnt) {
        const double2* xs_g = (const double2*)(xv + (u64)si[t + 1] * 6);
        double2* xs_s = (double2*)(sx + 6);
        const double* yb = yv + (u64)si[6 + t + 1] * 6 + yo;
        if (0 + r < 3) xs_s[0 + r] = xs_g[0 + r];
        y1_0 = yb[0];
      }
      __syncwarp(gm);
      { double x = sx[0 + kk * 3 + 0];
        c0_0 = c0_0 + x * y0_0;
      }
      { double x = sx[0 + kk * 3 + 1];
        c1_0 = c1_0 + x * y0_0;
      }
      { double x = sx[0 + kk * 3 + 2];
        c2_0 = c2_0 + x * y0_0;
      }
      if (t + 1 < cnt) {
      { double x = sx[6 + kk * 3 + 0];
        c0_0 = c0_0 + x * y1_0;
      }
      { double x = sx[6 + kk * 3 + 1];
        c1_0 = c1_0 + x * y1_0;
      }
      { double x = sx[6 + kk * 3 + 2];
        c2_0 = c2_0 + x * y1_0;
      }
      }
      __syncwarp(gm);
    }
  }
  double* part = sx;
  part[(kk * 3 + 0) * 3 + c * 1 + 0] = c0_0;
  part[(kk * 3 + 1) * 3 + c * 1 + 0] = c1_0;
  part[(kk * 3 + 2) * 3 + c * 1 + 0] = c2_0;
  __syncwarp(gm);
  double* cb = cv + (u64)s * 9;
  for (u32 e = r; e < 9; e += 6) {
    double v = part[e];
    v = v + part[9 + e];
    cb[e] = v;
  }
}

// tensor-core stage (3x2 by 2x3), one warp per slot, 1 FP64 m8n8k4 MMA per contribution, 4 contributions per step
extern "C" __global__ void ptap_mma_3x2x3t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (w >= nslots) return;
  u32 s = order[w];
  u32 r = lane >> 2, t = lane & 3;
  const double* xl0 = xv + (r < 3 && (0 + t) < 2 ? (0 + t) * 3 + r : 0);
  const double* yl0 = yv + (r < 3 && (0 + t) < 2 ? (0 + t) * 3 + r : 0);
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 2 ? 1.0 : 0.0;
  double d0 = 0.0, d1 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 16) {
    u32 cnt = q1 - q0 < 16 ? q1 - q0 : 16;
    u32 e = lane & 15;
    u32 idx = 0;
    if (e < cnt) idx = lane < 16 ? rx[q0 + e] : ry[q0 + e];
    u32 u = 0;
    for (; u + 4 <= cnt; u += 4) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = __ldg(xl0 + (u64)xi0 * 6), b0_0 = __ldg(yl0 + (u64)yi0 * 6) * ym0;
      u32 xi1 = __shfl_sync(0xffffffffu, idx, u + 1), yi1 = __shfl_sync(0xffffffffu, idx, 16 + u + 1);
      double a1_0 = __ldg(xl0 + (u64)xi1 * 6), b1_0 = __ldg(yl0 + (u64)yi1 * 6) * ym0;
      u32 xi2 = __shfl_sync(0xffffffffu, idx, u + 2), yi2 = __shfl_sync(0xffffffffu, idx, 16 + u + 2);
      double a2_0 = __ldg(xl0 + (u64)xi2 * 6), b2_0 = __ldg(yl0 + (u64)yi2 * 6) * ym0;
      u32 xi3 = __shfl_sync(0xffffffffu, idx, u + 3), yi3 = __shfl_sync(0xffffffffu, idx, 16 + u + 3);
      double a3_0 = __ldg(xl0 + (u64)xi3 * 6), b3_0 = __ldg(yl0 + (u64)yi3 * 6) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a3_0), "d"(b3_0));
    }
    for (; u < cnt; ++u) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = __ldg(xl0 + (u64)xi0 * 6), b0_0 = __ldg(yl0 + (u64)yi0 * 6) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    }
  }
  u32 c0 = 2 * t;
  double* cb = cv + (u64)s * 9;
  if (r < 3) { if (c0 < 3) cb[r * 3 + c0] = d0; if (c0 + 1 < 3) cb[r * 3 + c0 + 1] = d1; }
#else
  __trap();
#endif
}

// tensor-pair stage (3x2 by 2x3, Single), one warp per unit of 1 slot(s), 1 FP64 m8n8k4 MMA per entry and side, 4 entries per step, the last ones as one guarded step
extern "C" __global__ void ptap_mma2_3x2x3t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ uptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (w >= nunits) return;
  u32 r = lane >> 2, t = lane & 3;
  const bool av0 = r < 3 && (0 + t) < 2, bv0 = r < 3 && (0 + t) < 2;
  const double* xl0 = xv + (av0 ? (0 + t) * 3 + r : (r < 3 ? r : 2));
  const double* yl0 = yv + (bv0 ? (0 + t) * 3 + r : (r < 3 ? r : 2));
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 2 ? 1.0 : 0.0;
  const uint2* ep = (const uint2*)ent;
  double d0 = 0.0, d1 = 0.0;
  u32 q = uptr[w], q1 = uptr[w + 1];
  for (; q + 4 <= q1; q += 4) {
    uint2 e0 = __ldg(ep + q + 0);
    uint2 e1 = __ldg(ep + q + 1);
    uint2 e2 = __ldg(ep + q + 2);
    uint2 e3 = __ldg(ep + q + 3);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 6) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 6);
    double b1_0 = 0.0, a1_0 = 0.0;
    b1_0 = __ldg(yl0 + (u64)e1.y * 6) * ym0;
    a1_0 = __ldg(xl0 + (u64)e1.x * 6);
    double b2_0 = 0.0, a2_0 = 0.0;
    b2_0 = __ldg(yl0 + (u64)e2.y * 6) * ym0;
    a2_0 = __ldg(xl0 + (u64)e2.x * 6);
    double b3_0 = 0.0, a3_0 = 0.0;
    b3_0 = __ldg(yl0 + (u64)e3.y * 6) * ym0;
    a3_0 = __ldg(xl0 + (u64)e3.x * 6);
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a3_0), "d"(b3_0));
  }
  if (q < q1) {
    u32 rem = q1 - q;
    uint2 e0 = __ldg(ep + q + 0);
    uint2 e1 = make_uint2(0, 0);
    if (1 < rem) e1 = __ldg(ep + q + 1);
    uint2 e2 = make_uint2(0, 0);
    if (2 < rem) e2 = __ldg(ep + q + 2);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 6) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 6);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 6) * ym0; a1_0 = __ldg(xl0 + (u64)e1.x * 6); }
    double b2_0 = 0.0, a2_0 = 0.0;
    if (2 < rem) { b2_0 = __ldg(yl0 + (u64)e2.y * 6) * ym0; a2_0 = __ldg(xl0 + (u64)e2.x * 6); }
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    if (1 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    if (2 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
  }
  u32 c0 = 2 * t;
  {
  u32 s = uslot[1 * w + 0];
  double* cb = cv + (u64)s * 9;
  if (s != 0xffffffffu && r < 3) {
    if (c0 < 3) cb[r * 3 + c0] = d0; if (c0 + 1 < 3) cb[r * 3 + c0 + 1] = d1;
  }
  }
#else
  __trap();
#endif
}

// row-Gustavson stage (3x2 by 2x3), one warp per chunk of 32 output slots, 4 warps per block
extern "C" __global__ void ptap_row_gustavson_3x2x3t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ chunk_slot, const unsigned int* __restrict__ chunk_seg, const unsigned int* __restrict__ chunk_pos, const unsigned int* __restrict__ seg_x, const unsigned int* __restrict__ seg_y, const unsigned int* __restrict__ seg_n, const unsigned int* __restrict__ pos, double* __restrict__ cv, unsigned int nchunks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double rg_acc[4][32 * 9];
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u32 c = blockIdx.x * 4 + wl;
  if (c >= nchunks) return;
  double* acc = rg_acc[wl];
  u32 s0 = chunk_slot[c], ne = (chunk_slot[c + 1] - s0) * 9;
  for (u32 e = lane; e < ne; e += 32) acc[e] = 0.0;
  __syncwarp();
  const unsigned char* sn = (const unsigned char*)seg_n;
  const unsigned char* ps = (const unsigned char*)pos;
  u32 pb = chunk_pos[c];
  u32 g1 = chunk_seg[c + 1];
  for (u32 g = chunk_seg[c]; g < g1; ++g) {
    u32 cnt = sn[g];
    const double* xb = xv + (u64)seg_x[g] * 6;
    const double* yb0 = yv + (u64)seg_y[g] * 6;
    double x0 = __ldg(xb + 0);
    double x1 = __ldg(xb + 1);
    double x2 = __ldg(xb + 2);
    double x3 = __ldg(xb + 3);
    double x4 = __ldg(xb + 4);
    double x5 = __ldg(xb + 5);
    for (u32 t = lane; t < cnt * 3; t += 32) {
      u32 b = t / 3, j = t - b * 3;
      const double* yb = yb0 + (u64)b * 6;
      double* o = acc + (u32)ps[pb + b] * 9 + j;
      double y0 = __ldg(yb + 0 * 3 + j);
      double y1 = __ldg(yb + 1 * 3 + j);
      { double a = o[0];
        a = a + x0 * y0;
        a = a + x3 * y1;
        o[0] = a; }
      { double a = o[3];
        a = a + x1 * y0;
        a = a + x4 * y1;
        o[3] = a; }
      { double a = o[6];
        a = a + x2 * y0;
        a = a + x5 * y1;
        o[6] = a; }
    }
    pb += cnt;
    __syncwarp();
  }
  for (u32 e = lane; e < ne; e += 32) cv[(u64)s0 * 9 + e] = acc[e];
}

// outer-product scatter pass (3x2 by 2x3), atomic accumulation
extern "C" __global__ void ptap_scatter_3x2x3t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ rslot, double* __restrict__ cv, unsigned int nrecords) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nrecords * 9) return;
  u32 q = (u32)(t / 9); u32 e = (u32)(t % 9);
  u32 i = e / 3, j = e % 3;
  const double* xb = xv + (u64)rx[q] * 6;
  const double* yb = yv + (u64)ry[q] * 6;
  double v = 0.0;
  v = v + xb[(0)*3+(i)] * yb[0 * 3 + j];
  v = v + xb[(1)*3+(i)] * yb[1 * 3 + j];
  atomicAdd(cv + (u64)rslot[q] * 9 + e, v);
}

// R = P^T, 3x3 blocks gathered from transposed 3x3 blocks of P
extern "C" __global__ void ptap_gather_r_3x3(const double* __restrict__ pv, const unsigned int* __restrict__ src, double* __restrict__ rv, unsigned int nblocks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nblocks * 9) return;
  u32 b = (u32)(t / 9); u32 e = (u32)(t % 9);
  u32 i = e / 3, j = e % 3;
  rv[t] = pv[(u64)src[b] * 9 + j * 3 + i];
}

// two-pass stage C = X Y (3x3 by 3x3), one thread per output scalar
extern "C" __global__ void ptap_row_owner_3x3x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ x_rp, const unsigned int* __restrict__ x_ci, const unsigned int* __restrict__ y_rp, const unsigned int* __restrict__ y_ci, const unsigned int* __restrict__ c_row, const unsigned int* __restrict__ c_ci, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nslots * 9) return;
  u32 s = (u32)(t / 9); u32 e = (u32)(t % 9);
  u32 i = e / 3, j = e % 3;
  u32 row = c_row[s], col = c_ci[s];
  double acc = 0.0;
  for (u32 kx = x_rp[row]; kx < x_rp[row + 1]; ++kx) {
    u32 l = x_ci[kx];
    u32 lo = y_rp[l], hi = y_rp[l + 1], end = hi;
    while (lo < hi) { u32 mid = (lo + hi) >> 1; if (y_ci[mid] < col) lo = mid + 1; else hi = mid; }
    if (lo < end && y_ci[lo] == col) {
      const double* xb = xv + (u64)kx * 9;
      const double* yb = yv + (u64)lo * 9;
      acc = acc + xb[(i)*3+(0)] * yb[0 * 3 + j];
      acc = acc + xb[(i)*3+(1)] * yb[1 * 3 + j];
      acc = acc + xb[(i)*3+(2)] * yb[2 * 3 + j];
    }
  }
  cv[t] = acc;
}

// slot-tiled stage (3x3 by 3x3), 128 slots per block, register accumulators
extern "C" __global__ void ptap_slot_tiled_3x3x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double tile[128 * 9];
  u32 s0 = blockIdx.x * 128;
  u32 s = s0 + threadIdx.x;
  double a0 = 0.0;
  double a1 = 0.0;
  double a2 = 0.0;
  double a3 = 0.0;
  double a4 = 0.0;
  double a5 = 0.0;
  double a6 = 0.0;
  double a7 = 0.0;
  double a8 = 0.0;
  if (s < nslots) {
    for (u32 q = ptr[s]; q < ptr[s + 1]; ++q) {
      const double* xb = xv + (u64)rx[q] * 9;
      const double* yb = yv + (u64)ry[q] * 9;
      double y0_0 = yb[0];
      double y0_1 = yb[1];
      double y0_2 = yb[2];
      double y1_0 = yb[3];
      double y1_1 = yb[4];
      double y1_2 = yb[5];
      double y2_0 = yb[6];
      double y2_1 = yb[7];
      double y2_2 = yb[8];
      { double x = xb[(0)*3+(0)];
        a0 = a0 + x * y0_0;
        a1 = a1 + x * y0_1;
        a2 = a2 + x * y0_2;
      }
      { double x = xb[(1)*3+(0)];
        a3 = a3 + x * y0_0;
        a4 = a4 + x * y0_1;
        a5 = a5 + x * y0_2;
      }
      { double x = xb[(2)*3+(0)];
        a6 = a6 + x * y0_0;
        a7 = a7 + x * y0_1;
        a8 = a8 + x * y0_2;
      }
      { double x = xb[(0)*3+(1)];
        a0 = a0 + x * y1_0;
        a1 = a1 + x * y1_1;
        a2 = a2 + x * y1_2;
      }
      { double x = xb[(1)*3+(1)];
        a3 = a3 + x * y1_0;
        a4 = a4 + x * y1_1;
        a5 = a5 + x * y1_2;
      }
      { double x = xb[(2)*3+(1)];
        a6 = a6 + x * y1_0;
        a7 = a7 + x * y1_1;
        a8 = a8 + x * y1_2;
      }
      { double x = xb[(0)*3+(2)];
        a0 = a0 + x * y2_0;
        a1 = a1 + x * y2_1;
        a2 = a2 + x * y2_2;
      }
      { double x = xb[(1)*3+(2)];
        a3 = a3 + x * y2_0;
        a4 = a4 + x * y2_1;
        a5 = a5 + x * y2_2;
      }
      { double x = xb[(2)*3+(2)];
        a6 = a6 + x * y2_0;
        a7 = a7 + x * y2_1;
        a8 = a8 + x * y2_2;
      }
    }
  }
  tile[threadIdx.x * 9 + 0] = a0;
  tile[threadIdx.x * 9 + 1] = a1;
  tile[threadIdx.x * 9 + 2] = a2;
  tile[threadIdx.x * 9 + 3] = a3;
  tile[threadIdx.x * 9 + 4] = a4;
  tile[threadIdx.x * 9 + 5] = a5;
  tile[threadIdx.x * 9 + 6] = a6;
  tile[threadIdx.x * 9 + 7] = a7;
  tile[threadIdx.x * 9 + 8] = a8;
  __syncthreads();
  u32 valid = nslots - s0 < 128 ? nslots - s0 : 128;
  for (u32 e = threadIdx.x; e < valid * 9; e += 128) cv[(u64)s0 * 9 + e] = tile[e];
}

// column-split stage (3x3 by 3x3), 3 lanes per slot, 10 slots per warp, one window per block, x staged in shared memory, 2 contributions per step, 3 indices per fetch
extern "C" __global__ void ptap_column_split_3x3x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots, unsigned int window) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  extern __shared__ double2 cs_smem[];
  u32 lane = threadIdx.x & 31, gw = lane / 3;
  if (gw >= 10) return;
  u32 j = lane - gw * 3;
  u32 g = (threadIdx.x >> 5) * 10 + gw;
  if (g >= window) return;
  u32 idx = blockIdx.x * window + g;
  if (idx >= nslots) return;
  u32 s = order[idx];
  double* sx = (double*)((char*)cs_smem + (u64)g * 208);
  u32* si = (u32*)(sx + 20);
  const u32 gm = 7u << (gw * 3);
  double c0 = 0.0;
  double c1 = 0.0;
  double c2 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 3) {
    u32 cnt = q1 - q0 < 3 ? q1 - q0 : 3;
    { u32 e = 0 + j; if (e < cnt) { si[e] = rx[q0 + e]; si[3 + e] = ry[q0 + e]; } }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double y0_0 = 0.0, y0_1 = 0.0, y0_2 = 0.0;
      {
        const double* xs_g = (const double*)(xv + (u64)si[t + 0] * 9);
        const double* yb = yv + (u64)si[3 + t + 0] * 9;
        double* xs_s = (double*)(sx + 0);
        xs_s[0 + j] = xs_g[0 + j];
        xs_s[3 + j] = xs_g[3 + j];
        xs_s[6 + j] = xs_g[6 + j];
        y0_0 = yb[0 * 3 + j];
        y0_1 = yb[1 * 3 + j];
        y0_2 = yb[2 * 3 + j];
      }
      double y1_0 = 0.0, y1_1 = 0.0, y1_2 = 0.0;
      if (t + 1 < cnt) {
        const double* xs_g = (const double*)(xv + (u64)si[t + 1] * 9);
        const double* yb = yv + (u64)si[3 + t + 1] * 9;
        double* xs_s = (double*)(sx + 10);
        xs_s[0 + j] = xs_g[0 + j];
        xs_s[3 + j] = xs_g[3 + j];
        xs_s[6 + j] = xs_g[6 + j];
        y1_0 = yb[0 * 3 + j];
        y1_1 = yb[1 * 3 + j];
        y1_2 = yb[2 * 3 + j];
      }
      __syncwarp(gm);
      double2 x0_0 = ((const double2*)(sx + 0))[0];
      double2 x0_1 = ((const double2*)(sx + 0))[1];
      double2 x0_2 = ((const double2*)(sx + 0))[2];
      double2 x0_3 = ((const double2*)(sx + 0))[3];
      double2 x0_4 = ((const double2*)(sx + 0))[4];
      c0 = c0 + x0_0.x * y0_0;
      c1 = c1 + x0_1.y * y0_0;
      c2 = c2 + x0_3.x * y0_0;
      c0 = c0 + x0_0.y * y0_1;
      c1 = c1 + x0_2.x * y0_1;
      c2 = c2 + x0_3.y * y0_1;
      c0 = c0 + x0_1.x * y0_2;
      c1 = c1 + x0_2.y * y0_2;
      c2 = c2 + x0_4.x * y0_2;
      if (t + 1 < cnt) {
      double2 x1_0 = ((const double2*)(sx + 10))[0];
      double2 x1_1 = ((const double2*)(sx + 10))[1];
      double2 x1_2 = ((const double2*)(sx + 10))[2];
      double2 x1_3 = ((const double2*)(sx + 10))[3];
      double2 x1_4 = ((const double2*)(sx + 10))[4];
      c0 = c0 + x1_0.x * y1_0;
      c1 = c1 + x1_1.y * y1_0;
      c2 = c2 + x1_3.x * y1_0;
      c0 = c0 + x1_0.y * y1_1;
      c1 = c1 + x1_2.x * y1_1;
      c2 = c2 + x1_3.y * y1_1;
      c0 = c0 + x1_1.x * y1_2;
      c1 = c1 + x1_2.y * y1_2;
      c2 = c2 + x1_4.x * y1_2;
      }
      __syncwarp(gm);
    }
  }
  cv[(u64)s * 9 + 0 + j] = c0;
  cv[(u64)s * 9 + 3 + j] = c1;
  cv[(u64)s * 9 + 6 + j] = c2;
}

// flat-stream stage (3x3 by 3x3), one warp per record tile
extern "C" __global__ void ptap_flat_stream_3x3x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ rslot, const unsigned int* __restrict__ tile_rows, const unsigned int* __restrict__ tile_records, const unsigned int* __restrict__ c_rp, double* __restrict__ cv, unsigned int ntiles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u32 w = (u32)(((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (w >= ntiles) return;
  u64 e0 = (u64)c_rp[tile_rows[w]] * 9, e1 = (u64)c_rp[tile_rows[w + 1]] * 9;
  for (u64 e = e0 + lane; e < e1; e += 32) cv[e] = 0.0;
  __syncwarp();
  for (u32 q = tile_records[w]; q < tile_records[w + 1]; ++q) {
    const double* xb = xv + (u64)rx[q] * 9;
    const double* yb = yv + (u64)ry[q] * 9;
    double* cb = cv + (u64)rslot[q] * 9;
    for (u32 e = lane; e < 9; e += 32) {
      u32 i = e / 3, j = e % 3;
      double c = cb[e];
      c = c + xb[(i)*3+(0)] * yb[0 * 3 + j];
      c = c + xb[(i)*3+(1)] * yb[1 * 3 + j];
      c = c + xb[(i)*3+(2)] * yb[2 * 3 + j];
      cb[e] = c;
    }
  }
}

// lane-tiled stage (3x3 by 3x3), 9 lanes per slot each owning 1x1 outputs, 3 slots per warp, operands read straight into registers, 2 contributions per step
extern "C" __global__ void ptap_lane_tiled_3x3x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ u32 lt_idx[24 * 18];
  u32 lane = threadIdx.x & 31, gw = lane / 9;
  if (gw >= 3) return;
  u32 r = lane - gw * 9;
  u32 ti = r / 3, tj = r - ti * 3;
  u32 gl = (threadIdx.x >> 5) * 3 + gw;
  u32 idx = blockIdx.x * 24 + gl;
  if (idx >= nslots) return;
  u32 s = order[idx];
  u32* si = lt_idx + gl * 18;
  const u32 gm = 511u << (gw * 9);
  u32 xo = ti * 3;
  u32 yo = tj * 1;
  double c0_0 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 9) {
    u32 cnt = q1 - q0 < 9 ? q1 - q0 : 9;
    if (r < cnt) { si[r] = rx[q0 + r]; si[9 + r] = ry[q0 + r]; }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double x0_0_0 = 0.0, x0_0_1 = 0.0, x0_0_2 = 0.0;
      double y0_0_0 = 0.0, y0_1_0 = 0.0, y0_2_0 = 0.0;
      {
        const double* xb = xv + (u64)si[t + 0] * 9 + xo;
        const double* yb = yv + (u64)si[9 + t + 0] * 9 + yo;
        y0_0_0 = yb[0];
        y0_1_0 = yb[3];
        y0_2_0 = yb[6];
        x0_0_0 = xb[0];
        x0_0_1 = xb[1];
        x0_0_2 = xb[2];
      }
      double x1_0_0 = 0.0, x1_0_1 = 0.0, x1_0_2 = 0.0;
      double y1_0_0 = 0.0, y1_1_0 = 0.0, y1_2_0 = 0.0;
      if (t + 1 < cnt) {
        const double* xb = xv + (u64)si[t + 1] * 9 + xo;
        const double* yb = yv + (u64)si[9 + t + 1] * 9 + yo;
        y1_0_0 = yb[0];
        y1_1_0 = yb[3];
        y1_2_0 = yb[6];
        x1_0_0 = xb[0];
        x1_0_1 = xb[1];
        x1_0_2 = xb[2];
      }
      c0_0 = c0_0 + x0_0_0 * y0_0_0;
      c0_0 = c0_0 + x0_0_1 * y0_1_0;
      c0_0 = c0_0 + x0_0_2 * y0_2_0;
      if (t + 1 < cnt) {
      c0_0 = c0_0 + x1_0_0 * y1_0_0;
      c0_0 = c0_0 + x1_0_1 * y1_1_0;
      c0_0 = c0_0 + x1_0_2 * y1_2_0;
      }
    }
    __syncwarp(gm);
  }
  double* cb = cv + (u64)s * 9;
  cb[(ti * 1 + 0) * 3 + tj * 1 + 0] = c0_0;
}

// k-split stage (3x3 by 3x3), 9 lanes per slot each owning inner index kk and 1 columns, 3 slots per warp, 8 warps per block, 2 contributions per step, partials added in kk order
extern "C" __global__ void ptap_k_split_3x3x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  extern __shared__ double2 ks_smem[];
  u32 lane = threadIdx.x & 31, gw = lane / 9;
  if (gw >= 3) return;
  u32 r = lane - gw * 9;
  u32 kk = r / 3, c = r - kk * 3;
  u32 gl = (threadIdx.x >> 5) * 3 + gw;
  u32 idx = blockIdx.x * 24 + gl;
  if (idx >= nslots) return;
  u32 s = order[idx];
  double* sx = (double*)((char*)ks_smem + (u64)gl * 328);
  u32* si = (u32*)(sx + 20);
  const u32 gm = 511u << (gw * 9);
  u32 yo = kk * 3 + c * 1;
  double c0_0 = 0.0;
  double c1_0 = 0.0;
  double c2_0 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 9) {
    u32 cnt = q1 - q0 < 9 ? q1 - q0 : 9;
    if (r < cnt) { si[r] = rx[q0 + r]; si[9 + r] = ry[q0 + r]; }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double y0_0 = 0.0;
      {
        const double* xs_g = (const double*)(xv + (u64)si[t + 0] * 9);
        double* xs_s = (double*)(sx + 0);
        const double* yb = yv + (u64)si[9 + t + 0] * 9 + yo;
        xs_s[0 + r] = xs_g[0 + r];
        y0_0 = yb[0];
      }
      double y1_0 = 0.0;
      if (t + 1 < cnt) {
        const double* xs_g = (const double*)(xv + (u64)si[t + 1] * 9);
        double* xs_s = (double*)(sx + 10);
        const double* yb = yv + (u64)si[9 + t + 1] * 9 + yo;
        xs_s[0 + r] = xs_g[0 + r];
        y1_0 = yb[0];
      }
      __syncwarp(gm);
      { double x = sx[0 + 0 + kk];
        c0_0 = c0_0 + x * y0_0;
      }
      { double x = sx[0 + 3 + kk];
        c1_0 = c1_0 + x * y0_0;
      }
      { double x = sx[0 + 6 + kk];
        c2_0 = c2_0 + x * y0_0;
      }
      if (t + 1 < cnt) {
      { double x = sx[10 + 0 + kk];
        c0_0 = c0_0 + x * y1_0;
      }
      { double x = sx[10 + 3 + kk];
        c1_0 = c1_0 + x * y1_0;
      }
      { double x = sx[10 + 6 + kk];
        c2_0 = c2_0 + x * y1_0;
      }
      }
      __syncwarp(gm);
    }
  }
  double* part = sx;
  part[(kk * 3 + 0) * 3 + c * 1 + 0] = c0_0;
  part[(kk * 3 + 1) * 3 + c * 1 + 0] = c1_0;
  part[(kk * 3 + 2) * 3 + c * 1 + 0] = c2_0;
  __syncwarp(gm);
  double* cb = cv + (u64)s * 9;
  for (u32 e = r; e < 9; e += 9) {
    double v = part[e];
    v = v + part[9 + e];
    v = v + part[18 + e];
    cb[e] = v;
  }
}

// tensor-core stage (3x3 by 3x3), one warp per slot, 1 FP64 m8n8k4 MMA per contribution, 4 contributions per step
extern "C" __global__ void ptap_mma_3x3x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (w >= nslots) return;
  u32 s = order[w];
  u32 r = lane >> 2, t = lane & 3;
  const double* xl0 = xv + (r < 3 && (0 + t) < 3 ? r * 3 + (0 + t) : 0);
  const double* yl0 = yv + (r < 3 && (0 + t) < 3 ? (0 + t) * 3 + r : 0);
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 3 ? 1.0 : 0.0;
  double d0 = 0.0, d1 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 16) {
    u32 cnt = q1 - q0 < 16 ? q1 - q0 : 16;
    u32 e = lane & 15;
    u32 idx = 0;
    if (e < cnt) idx = lane < 16 ? rx[q0 + e] : ry[q0 + e];
    u32 u = 0;
    for (; u + 4 <= cnt; u += 4) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = __ldg(xl0 + (u64)xi0 * 9), b0_0 = __ldg(yl0 + (u64)yi0 * 9) * ym0;
      u32 xi1 = __shfl_sync(0xffffffffu, idx, u + 1), yi1 = __shfl_sync(0xffffffffu, idx, 16 + u + 1);
      double a1_0 = __ldg(xl0 + (u64)xi1 * 9), b1_0 = __ldg(yl0 + (u64)yi1 * 9) * ym0;
      u32 xi2 = __shfl_sync(0xffffffffu, idx, u + 2), yi2 = __shfl_sync(0xffffffffu, idx, 16 + u + 2);
      double a2_0 = __ldg(xl0 + (u64)xi2 * 9), b2_0 = __ldg(yl0 + (u64)yi2 * 9) * ym0;
      u32 xi3 = __shfl_sync(0xffffffffu, idx, u + 3), yi3 = __shfl_sync(0xffffffffu, idx, 16 + u + 3);
      double a3_0 = __ldg(xl0 + (u64)xi3 * 9), b3_0 = __ldg(yl0 + (u64)yi3 * 9) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a3_0), "d"(b3_0));
    }
    for (; u < cnt; ++u) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = __ldg(xl0 + (u64)xi0 * 9), b0_0 = __ldg(yl0 + (u64)yi0 * 9) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    }
  }
  u32 c0 = 2 * t;
  double* cb = cv + (u64)s * 9;
  if (r < 3) { if (c0 < 3) cb[r * 3 + c0] = d0; if (c0 + 1 < 3) cb[r * 3 + c0 + 1] = d1; }
#else
  __trap();
#endif
}

// tensor-pair stage (3x3 by 3x3, Packed), one warp per unit of 2 slot(s), 1 FP64 m8n8k4 MMA per entry and side, 4 entries per step, the last ones as one guarded step
extern "C" __global__ void ptap_mma2_3x3x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ uptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (w >= nunits) return;
  u32 r = lane >> 2, t = lane & 3;
  const bool av0 = (r & 3) < 3 && (0 + t) < 3, bv0 = r < 3 && (0 + t) < 3;
  const double* xl0 = xv + (av0 ? (r & 3) * 3 + (0 + t) : 0);
  const double* yl0 = yv + (bv0 ? (0 + t) * 3 + r : (r < 3 ? r : 2));
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 3 ? 1.0 : 0.0;
  const uint2* ep = (const uint2*)ent;
  double d0 = 0.0, d1 = 0.0;
  u32 q = uptr[w], q1 = uptr[w + 1];
  for (; q + 4 <= q1; q += 4) {
    uint2 e0 = __ldg(ep + (2 * q + (r >> 2)) + 0);
    uint2 e1 = __ldg(ep + (2 * q + (r >> 2)) + 2);
    uint2 e2 = __ldg(ep + (2 * q + (r >> 2)) + 4);
    uint2 e3 = __ldg(ep + (2 * q + (r >> 2)) + 6);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 9) * ym0;
    if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)e0.x * 9);
    double b1_0 = 0.0, a1_0 = 0.0;
    b1_0 = __ldg(yl0 + (u64)e1.y * 9) * ym0;
    if (av0 && e1.x != 0xffffffffu) a1_0 = __ldg(xl0 + (u64)e1.x * 9);
    double b2_0 = 0.0, a2_0 = 0.0;
    b2_0 = __ldg(yl0 + (u64)e2.y * 9) * ym0;
    if (av0 && e2.x != 0xffffffffu) a2_0 = __ldg(xl0 + (u64)e2.x * 9);
    double b3_0 = 0.0, a3_0 = 0.0;
    b3_0 = __ldg(yl0 + (u64)e3.y * 9) * ym0;
    if (av0 && e3.x != 0xffffffffu) a3_0 = __ldg(xl0 + (u64)e3.x * 9);
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a3_0), "d"(b3_0));
  }
  if (q < q1) {
    u32 rem = q1 - q;
    uint2 e0 = __ldg(ep + (2 * q + (r >> 2)) + 0);
    uint2 e1 = make_uint2(0, 0);
    if (1 < rem) e1 = __ldg(ep + (2 * q + (r >> 2)) + 2);
    uint2 e2 = make_uint2(0, 0);
    if (2 < rem) e2 = __ldg(ep + (2 * q + (r >> 2)) + 4);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 9) * ym0;
    if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)e0.x * 9);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 9) * ym0; if (av0 && e1.x != 0xffffffffu) a1_0 = __ldg(xl0 + (u64)e1.x * 9); }
    double b2_0 = 0.0, a2_0 = 0.0;
    if (2 < rem) { b2_0 = __ldg(yl0 + (u64)e2.y * 9) * ym0; if (av0 && e2.x != 0xffffffffu) a2_0 = __ldg(xl0 + (u64)e2.x * 9); }
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    if (1 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    if (2 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
  }
  u32 c0 = 2 * t;
  {
  u32 s = uslot[2 * w + (r >> 2)];
  double* cb = cv + (u64)s * 9;
  if (s != 0xffffffffu && (r & 3) < 3) {
    if (c0 < 3) cb[(r & 3) * 3 + c0] = d0; if (c0 + 1 < 3) cb[(r & 3) * 3 + c0 + 1] = d1;
  }
  }
#else
  __trap();
#endif
}

// tensor-core stage (3x3 by 3x3), a block's warps interleaved over `chunk` consecutive slots, 1 FP64 m8n8k4 MMA per contribution, 4 contributions per step, a run's last x block halved where its end bound has bit 31
extern "C" __global__ void ptap_mmah_3x3x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots, unsigned int chunk) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  const u32 nbw = blockDim.x >> 5, w1 = min(blockIdx.x * chunk + chunk, nslots);
  for (u32 w = blockIdx.x * chunk + (threadIdx.x >> 5); w < w1; w += nbw) {
  uint2 qb = __ldg((const uint2*)ptr + w);
  u32 s = order[w];
  const bool dg = (int)qb.y < 0;
  u32 r = lane >> 2, t = lane & 3;
  const double* xl0 = xv + (r < 3 && (0 + t) < 3 ? r * 3 + (0 + t) : 0);
  const double* yl0 = yv + (r < 3 && (0 + t) < 3 ? (0 + t) * 3 + r : 0);
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 3 ? 1.0 : 0.0;
  double d0 = 0.0, d1 = 0.0;
  u32 q1 = qb.y & 0x7fffffffu;
  for (u32 q0 = qb.x; q0 < q1; q0 += 16) {
    u32 cnt = q1 - q0 < 16 ? q1 - q0 : 16;
    u32 ce = cnt - (dg && q0 + cnt == q1 ? 1 : 0);
    u32 e = lane & 15;
    u32 idx = 0;
    if (e < cnt) idx = lane < 16 ? rx[q0 + e] : ry[q0 + e];
    u32 u = 0;
    for (; u + 4 <= ce; u += 4) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = __ldg(xl0 + (u64)xi0 * 9), b0_0 = __ldg(yl0 + (u64)yi0 * 9) * ym0;
      u32 xi1 = __shfl_sync(0xffffffffu, idx, u + 1), yi1 = __shfl_sync(0xffffffffu, idx, 16 + u + 1);
      double a1_0 = __ldg(xl0 + (u64)xi1 * 9), b1_0 = __ldg(yl0 + (u64)yi1 * 9) * ym0;
      u32 xi2 = __shfl_sync(0xffffffffu, idx, u + 2), yi2 = __shfl_sync(0xffffffffu, idx, 16 + u + 2);
      double a2_0 = __ldg(xl0 + (u64)xi2 * 9), b2_0 = __ldg(yl0 + (u64)yi2 * 9) * ym0;
      u32 xi3 = __shfl_sync(0xffffffffu, idx, u + 3), yi3 = __shfl_sync(0xffffffffu, idx, 16 + u + 3);
      double a3_0 = __ldg(xl0 + (u64)xi3 * 9), b3_0 = __ldg(yl0 + (u64)yi3 * 9) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a3_0), "d"(b3_0));
    }
    for (; u < ce; ++u) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = __ldg(xl0 + (u64)xi0 * 9), b0_0 = __ldg(yl0 + (u64)yi0 * 9) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    }
    if (u < cnt) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      xi0 &= 0x7fffffffu;
      double a0_0 = __ldg(xl0 + (u64)xi0 * 9), b0_0 = __ldg(yl0 + (u64)yi0 * 9) * ym0;
      d0 *= 2.0;
      d1 *= 2.0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      d0 *= 0.5;
      d1 *= 0.5;
    }
  }
  u32 c0 = 2 * t;
  double* cb = cv + (u64)s * 9;
  if (r < 3) { if (c0 < 3) cb[r * 3 + c0] = d0; if (c0 + 1 < 3) cb[r * 3 + c0 + 1] = d1; }
  }
#else
  __trap();
#endif
}

// tensor-pair stage (3x3 by 3x3, Packed), warps walking spans of units of 2 slot(s), 1 FP64 m8n8k4 MMA per entry and side, 4 entries per step, the last ones as one guarded step, x blocks flagged in bit 31 halved
extern "C" __global__ __launch_bounds__(128, 16) void ptap_mma2h_3x3x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ uptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits, unsigned int chunk, unsigned int inter) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 r = lane >> 2, t = lane & 3;
  const bool av0 = (r & 3) < 3 && (0 + t) < 3, bv0 = r < 3 && (0 + t) < 3;
  const double* xl0 = xv + (av0 ? (r & 3) * 3 + (0 + t) : 0);
  const double* yl0 = yv + (bv0 ? (0 + t) * 3 + r : (r < 3 ? r : 2));
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 3 ? 1.0 : 0.0;
  const uint2* ep = (const uint2*)ent;
  const u32 nb = blockDim.x >> 5, lw = threadIdx.x >> 5, g = blockIdx.x * nb + lw;
  const u32 step = inter ? nb : 1, span = chunk * step;
  const u64 jump = (u64)(inter ? gridDim.x : gridDim.x * nb) * span;
  for (u64 b0 = (u64)(inter ? blockIdx.x : g) * span; b0 < nunits; b0 += jump) {
  const u32 b1 = (u32)(b0 + span < nunits ? b0 + span : nunits);
  for (u32 w = (u32)b0 + (inter ? lw : 0); w < b1; w += step) {
  double d0 = 0.0, d1 = 0.0;
  u32 q = uptr[w], q1 = uptr[w + 1];
  const u32 qt = q1 - q < 2 ? q : q1 - 2;
  for (; q + 4 <= qt; q += 4) {
    uint2 e0 = __ldg(ep + (2 * q + (r >> 2)) + 0);
    uint2 e1 = __ldg(ep + (2 * q + (r >> 2)) + 2);
    uint2 e2 = __ldg(ep + (2 * q + (r >> 2)) + 4);
    uint2 e3 = __ldg(ep + (2 * q + (r >> 2)) + 6);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 9) * ym0;
    if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)(e0.x & 0x7fffffffu) * 9);
    double b1_0 = 0.0, a1_0 = 0.0;
    b1_0 = __ldg(yl0 + (u64)e1.y * 9) * ym0;
    if (av0 && e1.x != 0xffffffffu) a1_0 = __ldg(xl0 + (u64)(e1.x & 0x7fffffffu) * 9);
    double b2_0 = 0.0, a2_0 = 0.0;
    b2_0 = __ldg(yl0 + (u64)e2.y * 9) * ym0;
    if (av0 && e2.x != 0xffffffffu) a2_0 = __ldg(xl0 + (u64)(e2.x & 0x7fffffffu) * 9);
    double b3_0 = 0.0, a3_0 = 0.0;
    b3_0 = __ldg(yl0 + (u64)e3.y * 9) * ym0;
    if (av0 && e3.x != 0xffffffffu) a3_0 = __ldg(xl0 + (u64)(e3.x & 0x7fffffffu) * 9);
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a3_0), "d"(b3_0));
  }
  if (q < qt) {
    u32 rem = qt - q;
    uint2 e0 = __ldg(ep + (2 * q + (r >> 2)) + 0);
    uint2 e1 = make_uint2(0, 0);
    if (1 < rem) e1 = __ldg(ep + (2 * q + (r >> 2)) + 2);
    uint2 e2 = make_uint2(0, 0);
    if (2 < rem) e2 = __ldg(ep + (2 * q + (r >> 2)) + 4);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 9) * ym0;
    if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)(e0.x & 0x7fffffffu) * 9);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 9) * ym0; if (av0 && e1.x != 0xffffffffu) a1_0 = __ldg(xl0 + (u64)(e1.x & 0x7fffffffu) * 9); }
    double b2_0 = 0.0, a2_0 = 0.0;
    if (2 < rem) { b2_0 = __ldg(yl0 + (u64)e2.y * 9) * ym0; if (av0 && e2.x != 0xffffffffu) a2_0 = __ldg(xl0 + (u64)(e2.x & 0x7fffffffu) * 9); }
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    if (1 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    if (2 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
  }
  q = qt;
  if (q < q1) {
    u32 rem = q1 - q;
    d0 *= 2.0;
    d1 *= 2.0;
    uint2 e0 = __ldg(ep + (2 * q + (r >> 2)) + 0);
    uint2 e1 = make_uint2(0, 0);
    if (1 < rem) e1 = __ldg(ep + (2 * q + (r >> 2)) + 2);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 9) * ym0;
    if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)(e0.x & 0x7fffffffu) * 9);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 9) * ym0; if (av0 && e1.x != 0xffffffffu) a1_0 = __ldg(xl0 + (u64)(e1.x & 0x7fffffffu) * 9); }
    a0_0 *= (int)e0.x < 0 ? 1.0 : 2.0;
    a1_0 *= (int)e1.x < 0 ? 1.0 : 2.0;
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    if (1 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    d0 *= 0.5;
    d1 *= 0.5;
  }
  u32 c0 = 2 * t;
  {
  u32 s = uslot[2 * w + (r >> 2)];
  double* cb = cv + (u64)s * 9;
  if (s != 0xffffffffu && (r & 3) < 3) {
    if (c0 < 3) cb[(r & 3) * 3 + c0] = d0; if (c0 + 1 < 3) cb[(r & 3) * 3 + c0 + 1] = d1;
  }
  }
  }
  }
#else
  __trap();
#endif
}

// folded P^T W' stage (3x3 by 3x3), one warp per slot (I, J) of the upper triangle summing X_IJ + X_JI^T, 1 FP64 m8n8k4 MMA per entry, 4 entries per step, each half's last ones as one guarded step; writes (I, J) and (J, I)
extern "C" __global__ void ptap_mma2f_3x3x3t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ hptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (w >= nunits) return;
  u32 r = lane >> 2, t = lane & 3;
  const bool av0 = r < 3 && (0 + t) < 3, bv0 = r < 3 && (0 + t) < 3;
  const double* xl0 = xv + (av0 ? (0 + t) * 3 + r : (r < 3 ? r : 2));
  const double* yl0 = yv + (bv0 ? (0 + t) * 3 + r : (r < 3 ? r : 2));
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 3 ? 1.0 : 0.0;
  const uint2* ep = (const uint2*)ent;
  double d0 = 0.0, d1 = 0.0;
  u32 q = hptr[2 * w], q1 = hptr[2 * w + 1];
  for (; q + 4 <= q1; q += 4) {
    uint2 e0 = __ldg(ep + q + 0);
    uint2 e1 = __ldg(ep + q + 1);
    uint2 e2 = __ldg(ep + q + 2);
    uint2 e3 = __ldg(ep + q + 3);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 9) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 9);
    double b1_0 = 0.0, a1_0 = 0.0;
    b1_0 = __ldg(yl0 + (u64)e1.y * 9) * ym0;
    a1_0 = __ldg(xl0 + (u64)e1.x * 9);
    double b2_0 = 0.0, a2_0 = 0.0;
    b2_0 = __ldg(yl0 + (u64)e2.y * 9) * ym0;
    a2_0 = __ldg(xl0 + (u64)e2.x * 9);
    double b3_0 = 0.0, a3_0 = 0.0;
    b3_0 = __ldg(yl0 + (u64)e3.y * 9) * ym0;
    a3_0 = __ldg(xl0 + (u64)e3.x * 9);
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a3_0), "d"(b3_0));
  }
  if (q < q1) {
    u32 rem = q1 - q;
    uint2 e0 = __ldg(ep + q + 0);
    uint2 e1 = make_uint2(0, 0);
    if (1 < rem) e1 = __ldg(ep + q + 1);
    uint2 e2 = make_uint2(0, 0);
    if (2 < rem) e2 = __ldg(ep + q + 2);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 9) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 9);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 9) * ym0; a1_0 = __ldg(xl0 + (u64)e1.x * 9); }
    double b2_0 = 0.0, a2_0 = 0.0;
    if (2 < rem) { b2_0 = __ldg(yl0 + (u64)e2.y * 9) * ym0; a2_0 = __ldg(xl0 + (u64)e2.x * 9); }
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    if (1 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    if (2 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
  }
  q = q1;
  q1 = hptr[2 * w + 2];
  for (; q + 4 <= q1; q += 4) {
    uint2 e0 = __ldg(ep + q + 0);
    uint2 e1 = __ldg(ep + q + 1);
    uint2 e2 = __ldg(ep + q + 2);
    uint2 e3 = __ldg(ep + q + 3);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 9) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 9);
    double b1_0 = 0.0, a1_0 = 0.0;
    b1_0 = __ldg(yl0 + (u64)e1.y * 9) * ym0;
    a1_0 = __ldg(xl0 + (u64)e1.x * 9);
    double b2_0 = 0.0, a2_0 = 0.0;
    b2_0 = __ldg(yl0 + (u64)e2.y * 9) * ym0;
    a2_0 = __ldg(xl0 + (u64)e2.x * 9);
    double b3_0 = 0.0, a3_0 = 0.0;
    b3_0 = __ldg(yl0 + (u64)e3.y * 9) * ym0;
    a3_0 = __ldg(xl0 + (u64)e3.x * 9);
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(b0_0), "d"(a0_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(b1_0), "d"(a1_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(b2_0), "d"(a2_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(b3_0), "d"(a3_0));
  }
  if (q < q1) {
    u32 rem = q1 - q;
    uint2 e0 = __ldg(ep + q + 0);
    uint2 e1 = make_uint2(0, 0);
    if (1 < rem) e1 = __ldg(ep + q + 1);
    uint2 e2 = make_uint2(0, 0);
    if (2 < rem) e2 = __ldg(ep + q + 2);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 9) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 9);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 9) * ym0; a1_0 = __ldg(xl0 + (u64)e1.x * 9); }
    double b2_0 = 0.0, a2_0 = 0.0;
    if (2 < rem) { b2_0 = __ldg(yl0 + (u64)e2.y * 9) * ym0; a2_0 = __ldg(xl0 + (u64)e2.x * 9); }
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(b0_0), "d"(a0_0));
    if (1 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(b1_0), "d"(a1_0));
    if (2 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(b2_0), "d"(a2_0));
  }
  u32 c0 = 2 * t;
  u32 s0 = uslot[2 * w], s1 = uslot[2 * w + 1];
  if (s1 == 0xffffffffu) {
    u32 la = c0 * 4 + (r >> 1);
    double a0 = __shfl_sync(0xffffffffu, d0, la), a1 = __shfl_sync(0xffffffffu, d1, la);
    double b0 = __shfl_sync(0xffffffffu, d0, la + 4), b1 = __shfl_sync(0xffffffffu, d1, la + 4);
    d0 += (r & 1) ? a1 : a0;
    d1 += (r & 1) ? b1 : b0;
  }
  if (r < 3) {
    double* cb = cv + (u64)s0 * 9;
    if (c0 < 3) cb[r * 3 + c0] = d0; if (c0 + 1 < 3) cb[r * 3 + c0 + 1] = d1;
    if (s1 != 0xffffffffu) {
      double* ct = cv + (u64)s1 * 9;
      if (c0 < 3) ct[c0 * 3 + r] = d0; if (c0 + 1 < 3) ct[(c0 + 1) * 3 + r] = d1;
    }
  }
#else
  __trap();
#endif
}

// row-Gustavson stage (3x3 by 3x3), one warp per chunk of 32 output slots, 4 warps per block
extern "C" __global__ void ptap_row_gustavson_3x3x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ chunk_slot, const unsigned int* __restrict__ chunk_seg, const unsigned int* __restrict__ chunk_pos, const unsigned int* __restrict__ seg_x, const unsigned int* __restrict__ seg_y, const unsigned int* __restrict__ seg_n, const unsigned int* __restrict__ pos, double* __restrict__ cv, unsigned int nchunks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double rg_acc[4][32 * 9];
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u32 c = blockIdx.x * 4 + wl;
  if (c >= nchunks) return;
  double* acc = rg_acc[wl];
  u32 s0 = chunk_slot[c], ne = (chunk_slot[c + 1] - s0) * 9;
  for (u32 e = lane; e < ne; e += 32) acc[e] = 0.0;
  __syncwarp();
  const unsigned char* sn = (const unsigned char*)seg_n;
  const unsigned char* ps = (const unsigned char*)pos;
  u32 pb = chunk_pos[c];
  u32 g1 = chunk_seg[c + 1];
  for (u32 g = chunk_seg[c]; g < g1; ++g) {
    u32 cnt = sn[g];
    const double* xb = xv + (u64)seg_x[g] * 9;
    const double* yb0 = yv + (u64)seg_y[g] * 9;
    double x0 = __ldg(xb + 0);
    double x1 = __ldg(xb + 1);
    double x2 = __ldg(xb + 2);
    double x3 = __ldg(xb + 3);
    double x4 = __ldg(xb + 4);
    double x5 = __ldg(xb + 5);
    double x6 = __ldg(xb + 6);
    double x7 = __ldg(xb + 7);
    double x8 = __ldg(xb + 8);
    for (u32 t = lane; t < cnt * 3; t += 32) {
      u32 b = t / 3, j = t - b * 3;
      const double* yb = yb0 + (u64)b * 9;
      double* o = acc + (u32)ps[pb + b] * 9 + j;
      double y0 = __ldg(yb + 0 * 3 + j);
      double y1 = __ldg(yb + 1 * 3 + j);
      double y2 = __ldg(yb + 2 * 3 + j);
      { double a = o[0];
        a = a + x0 * y0;
        a = a + x1 * y1;
        a = a + x2 * y2;
        o[0] = a; }
      { double a = o[3];
        a = a + x3 * y0;
        a = a + x4 * y1;
        a = a + x5 * y2;
        o[3] = a; }
      { double a = o[6];
        a = a + x6 * y0;
        a = a + x7 * y1;
        a = a + x8 * y2;
        o[6] = a; }
    }
    pb += cnt;
    __syncwarp();
  }
  for (u32 e = lane; e < ne; e += 32) cv[(u64)s0 * 9 + e] = acc[e];
}

// outer-product scatter pass (3x3 by 3x3), atomic accumulation
extern "C" __global__ void ptap_scatter_3x3x3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ rslot, double* __restrict__ cv, unsigned int nrecords) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nrecords * 9) return;
  u32 q = (u32)(t / 9); u32 e = (u32)(t % 9);
  u32 i = e / 3, j = e % 3;
  const double* xb = xv + (u64)rx[q] * 9;
  const double* yb = yv + (u64)ry[q] * 9;
  double v = 0.0;
  v = v + xb[(i)*3+(0)] * yb[0 * 3 + j];
  v = v + xb[(i)*3+(1)] * yb[1 * 3 + j];
  v = v + xb[(i)*3+(2)] * yb[2 * 3 + j];
  atomicAdd(cv + (u64)rslot[q] * 9 + e, v);
}

// slot-tiled stage (3x3 by 3x3), 128 slots per block, register accumulators
extern "C" __global__ void ptap_slot_tiled_3x3x3t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double tile[128 * 9];
  u32 s0 = blockIdx.x * 128;
  u32 s = s0 + threadIdx.x;
  double a0 = 0.0;
  double a1 = 0.0;
  double a2 = 0.0;
  double a3 = 0.0;
  double a4 = 0.0;
  double a5 = 0.0;
  double a6 = 0.0;
  double a7 = 0.0;
  double a8 = 0.0;
  if (s < nslots) {
    for (u32 q = ptr[s]; q < ptr[s + 1]; ++q) {
      const double* xb = xv + (u64)rx[q] * 9;
      const double* yb = yv + (u64)ry[q] * 9;
      double y0_0 = yb[0];
      double y0_1 = yb[1];
      double y0_2 = yb[2];
      double y1_0 = yb[3];
      double y1_1 = yb[4];
      double y1_2 = yb[5];
      double y2_0 = yb[6];
      double y2_1 = yb[7];
      double y2_2 = yb[8];
      { double x = xb[(0)*3+(0)];
        a0 = a0 + x * y0_0;
        a1 = a1 + x * y0_1;
        a2 = a2 + x * y0_2;
      }
      { double x = xb[(0)*3+(1)];
        a3 = a3 + x * y0_0;
        a4 = a4 + x * y0_1;
        a5 = a5 + x * y0_2;
      }
      { double x = xb[(0)*3+(2)];
        a6 = a6 + x * y0_0;
        a7 = a7 + x * y0_1;
        a8 = a8 + x * y0_2;
      }
      { double x = xb[(1)*3+(0)];
        a0 = a0 + x * y1_0;
        a1 = a1 + x * y1_1;
        a2 = a2 + x * y1_2;
      }
      { double x = xb[(1)*3+(1)];
        a3 = a3 + x * y1_0;
        a4 = a4 + x * y1_1;
        a5 = a5 + x * y1_2;
      }
      { double x = xb[(1)*3+(2)];
        a6 = a6 + x * y1_0;
        a7 = a7 + x * y1_1;
        a8 = a8 + x * y1_2;
      }
      { double x = xb[(2)*3+(0)];
        a0 = a0 + x * y2_0;
        a1 = a1 + x * y2_1;
        a2 = a2 + x * y2_2;
      }
      { double x = xb[(2)*3+(1)];
        a3 = a3 + x * y2_0;
        a4 = a4 + x * y2_1;
        a5 = a5 + x * y2_2;
      }
      { double x = xb[(2)*3+(2)];
        a6 = a6 + x * y2_0;
        a7 = a7 + x * y2_1;
        a8 = a8 + x * y2_2;
      }
    }
  }
  tile[threadIdx.x * 9 + 0] = a0;
  tile[threadIdx.x * 9 + 1] = a1;
  tile[threadIdx.x * 9 + 2] = a2;
  tile[threadIdx.x * 9 + 3] = a3;
  tile[threadIdx.x * 9 + 4] = a4;
  tile[threadIdx.x * 9 + 5] = a5;
  tile[threadIdx.x * 9 + 6] = a6;
  tile[threadIdx.x * 9 + 7] = a7;
  tile[threadIdx.x * 9 + 8] = a8;
  __syncthreads();
  u32 valid = nslots - s0 < 128 ? nslots - s0 : 128;
  for (u32 e = threadIdx.x; e < valid * 9; e += 128) cv[(u64)s0 * 9 + e] = tile[e];
}

// column-split stage (3x3 by 3x3), 3 lanes per slot, 10 slots per warp, one window per block, x staged in shared memory, 2 contributions per step, 3 indices per fetch
extern "C" __global__ void ptap_column_split_3x3x3t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots, unsigned int window) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  extern __shared__ double2 cs_smem[];
  u32 lane = threadIdx.x & 31, gw = lane / 3;
  if (gw >= 10) return;
  u32 j = lane - gw * 3;
  u32 g = (threadIdx.x >> 5) * 10 + gw;
  if (g >= window) return;
  u32 idx = blockIdx.x * window + g;
  if (idx >= nslots) return;
  u32 s = order[idx];
  double* sx = (double*)((char*)cs_smem + (u64)g * 208);
  u32* si = (u32*)(sx + 20);
  const u32 gm = 7u << (gw * 3);
  double c0 = 0.0;
  double c1 = 0.0;
  double c2 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 3) {
    u32 cnt = q1 - q0 < 3 ? q1 - q0 : 3;
    { u32 e = 0 + j; if (e < cnt) { si[e] = rx[q0 + e]; si[3 + e] = ry[q0 + e]; } }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double y0_0 = 0.0, y0_1 = 0.0, y0_2 = 0.0;
      {
        const double* xs_g = (const double*)(xv + (u64)si[t + 0] * 9);
        const double* yb = yv + (u64)si[3 + t + 0] * 9;
        double* xs_s = (double*)(sx + 0);
        xs_s[0 + j] = xs_g[0 + j];
        xs_s[3 + j] = xs_g[3 + j];
        xs_s[6 + j] = xs_g[6 + j];
        y0_0 = yb[0 * 3 + j];
        y0_1 = yb[1 * 3 + j];
        y0_2 = yb[2 * 3 + j];
      }
      double y1_0 = 0.0, y1_1 = 0.0, y1_2 = 0.0;
      if (t + 1 < cnt) {
        const double* xs_g = (const double*)(xv + (u64)si[t + 1] * 9);
        const double* yb = yv + (u64)si[3 + t + 1] * 9;
        double* xs_s = (double*)(sx + 10);
        xs_s[0 + j] = xs_g[0 + j];
        xs_s[3 + j] = xs_g[3 + j];
        xs_s[6 + j] = xs_g[6 + j];
        y1_0 = yb[0 * 3 + j];
        y1_1 = yb[1 * 3 + j];
        y1_2 = yb[2 * 3 + j];
      }
      __syncwarp(gm);
      double2 x0_0 = ((const double2*)(sx + 0))[0];
      double2 x0_1 = ((const double2*)(sx + 0))[1];
      double2 x0_2 = ((const double2*)(sx + 0))[2];
      double2 x0_3 = ((const double2*)(sx + 0))[3];
      double2 x0_4 = ((const double2*)(sx + 0))[4];
      c0 = c0 + x0_0.x * y0_0;
      c1 = c1 + x0_0.y * y0_0;
      c2 = c2 + x0_1.x * y0_0;
      c0 = c0 + x0_1.y * y0_1;
      c1 = c1 + x0_2.x * y0_1;
      c2 = c2 + x0_2.y * y0_1;
      c0 = c0 + x0_3.x * y0_2;
      c1 = c1 + x0_3.y * y0_2;
      c2 = c2 + x0_4.x * y0_2;
      if (t + 1 < cnt) {
      double2 x1_0 = ((const double2*)(sx + 10))[0];
      double2 x1_1 = ((const double2*)(sx + 10))[1];
      double2 x1_2 = ((const double2*)(sx + 10))[2];
      double2 x1_3 = ((const double2*)(sx + 10))[3];
      double2 x1_4 = ((const double2*)(sx + 10))[4];
      c0 = c0 + x1_0.x * y1_0;
      c1 = c1 + x1_0.y * y1_0;
      c2 = c2 + x1_1.x * y1_0;
      c0 = c0 + x1_1.y * y1_1;
      c1 = c1 + x1_2.x * y1_1;
      c2 = c2 + x1_2.y * y1_1;
      c0 = c0 + x1_3.x * y1_2;
      c1 = c1 + x1_3.y * y1_2;
      c2 = c2 + x1_4.x * y1_2;
      }
      __syncwarp(gm);
    }
  }
  cv[(u64)s * 9 + 0 + j] = c0;
  cv[(u64)s * 9 + 3 + j] = c1;
  cv[(u64)s * 9 + 6 + j] = c2;
}

// flat-stream stage (3x3 by 3x3), one warp per record tile
extern "C" __global__ void ptap_flat_stream_3x3x3t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ rslot, const unsigned int* __restrict__ tile_rows, const unsigned int* __restrict__ tile_records, const unsigned int* __restrict__ c_rp, double* __restrict__ cv, unsigned int ntiles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u32 w = (u32)(((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (w >= ntiles) return;
  u64 e0 = (u64)c_rp[tile_rows[w]] * 9, e1 = (u64)c_rp[tile_rows[w + 1]] * 9;
  for (u64 e = e0 + lane; e < e1; e += 32) cv[e] = 0.0;
  __syncwarp();
  for (u32 q = tile_records[w]; q < tile_records[w + 1]; ++q) {
    const double* xb = xv + (u64)rx[q] * 9;
    const double* yb = yv + (u64)ry[q] * 9;
    double* cb = cv + (u64)rslot[q] * 9;
    for (u32 e = lane; e < 9; e += 32) {
      u32 i = e / 3, j = e % 3;
      double c = cb[e];
      c = c + xb[(0)*3+(i)] * yb[0 * 3 + j];
      c = c + xb[(1)*3+(i)] * yb[1 * 3 + j];
      c = c + xb[(2)*3+(i)] * yb[2 * 3 + j];
      cb[e] = c;
    }
  }
}

// lane-tiled stage (3x3 by 3x3), 9 lanes per slot each owning 1x1 outputs, 3 slots per warp, operands read straight into registers, 2 contributions per step
extern "C" __global__ void ptap_lane_tiled_3x3x3t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ u32 lt_idx[24 * 18];
  u32 lane = threadIdx.x & 31, gw = lane / 9;
  if (gw >= 3) return;
  u32 r = lane - gw * 9;
  u32 ti = r / 3, tj = r - ti * 3;
  u32 gl = (threadIdx.x >> 5) * 3 + gw;
  u32 idx = blockIdx.x * 24 + gl;
  if (idx >= nslots) return;
  u32 s = order[idx];
  u32* si = lt_idx + gl * 18;
  const u32 gm = 511u << (gw * 9);
  u32 xo = ti * 1;
  u32 yo = tj * 1;
  double c0_0 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 9) {
    u32 cnt = q1 - q0 < 9 ? q1 - q0 : 9;
    if (r < cnt) { si[r] = rx[q0 + r]; si[9 + r] = ry[q0 + r]; }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double x0_0_0 = 0.0, x0_0_1 = 0.0, x0_0_2 = 0.0;
      double y0_0_0 = 0.0, y0_1_0 = 0.0, y0_2_0 = 0.0;
      {
        const double* xb = xv + (u64)si[t + 0] * 9 + xo;
        const double* yb = yv + (u64)si[9 + t + 0] * 9 + yo;
        y0_0_0 = yb[0];
        y0_1_0 = yb[3];
        y0_2_0 = yb[6];
        x0_0_0 = xb[0];
        x0_0_1 = xb[3];
        x0_0_2 = xb[6];
      }
      double x1_0_0 = 0.0, x1_0_1 = 0.0, x1_0_2 = 0.0;
      double y1_0_0 = 0.0, y1_1_0 = 0.0, y1_2_0 = 0.0;
      if (t + 1 < cnt) {
        const double* xb = xv + (u64)si[t + 1] * 9 + xo;
        const double* yb = yv + (u64)si[9 + t + 1] * 9 + yo;
        y1_0_0 = yb[0];
        y1_1_0 = yb[3];
        y1_2_0 = yb[6];
        x1_0_0 = xb[0];
        x1_0_1 = xb[3];
        x1_0_2 = xb[6];
      }
      c0_0 = c0_0 + x0_0_0 * y0_0_0;
      c0_0 = c0_0 + x0_0_1 * y0_1_0;
      c0_0 = c0_0 + x0_0_2 * y0_2_0;
      if (t + 1 < cnt) {
      c0_0 = c0_0 + x1_0_0 * y1_0_0;
      c0_0 = c0_0 + x1_0_1 * y1_1_0;
      c0_0 = c0_0 + x1_0_2 * y1_2_0;
      }
    }
    __syncwarp(gm);
  }
  double* cb = cv + (u64)s * 9;
  cb[(ti * 1 + 0) * 3 + tj * 1 + 0] = c0_0;
}

// k-split stage (3x3 by 3x3), 9 lanes per slot each owning inner index kk and 1 columns, 3 slots per warp, 8 warps per block, 2 contributions per step, partials added in kk order
extern "C" __global__ void ptap_k_split_3x3x3t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  extern __shared__ double2 ks_smem[];
  u32 lane = threadIdx.x & 31, gw = lane / 9;
  if (gw >= 3) return;
  u32 r = lane - gw * 9;
  u32 kk = r / 3, c = r - kk * 3;
  u32 gl = (threadIdx.x >> 5) * 3 + gw;
  u32 idx = blockIdx.x * 24 + gl;
  if (idx >= nslots) return;
  u32 s = order[idx];
  double* sx = (double*)((char*)ks_smem + (u64)gl * 328);
  u32* si = (u32*)(sx + 20);
  const u32 gm = 511u << (gw * 9);
  u32 yo = kk * 3 + c * 1;
  double c0_0 = 0.0;
  double c1_0 = 0.0;
  double c2_0 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 9) {
    u32 cnt = q1 - q0 < 9 ? q1 - q0 : 9;
    if (r < cnt) { si[r] = rx[q0 + r]; si[9 + r] = ry[q0 + r]; }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double y0_0 = 0.0;
      {
        const double* xs_g = (const double*)(xv + (u64)si[t + 0] * 9);
        double* xs_s = (double*)(sx + 0);
        const double* yb = yv + (u64)si[9 + t + 0] * 9 + yo;
        xs_s[0 + r] = xs_g[0 + r];
        y0_0 = yb[0];
      }
      double y1_0 = 0.0;
      if (t + 1 < cnt) {
        const double* xs_g = (const double*)(xv + (u64)si[t + 1] * 9);
        double* xs_s = (double*)(sx + 10);
        const double* yb = yv + (u64)si[9 + t + 1] * 9 + yo;
        xs_s[0 + r] = xs_g[0 + r];
        y1_0 = yb[0];
      }
      __syncwarp(gm);
      { double x = sx[0 + kk * 3 + 0];
        c0_0 = c0_0 + x * y0_0;
      }
      { double x = sx[0 + kk * 3 + 1];
        c1_0 = c1_0 + x * y0_0;
      }
      { double x = sx[0 + kk * 3 + 2];
        c2_0 = c2_0 + x * y0_0;
      }
      if (t + 1 < cnt) {
      { double x = sx[10 + kk * 3 + 0];
        c0_0 = c0_0 + x * y1_0;
      }
      { double x = sx[10 + kk * 3 + 1];
        c1_0 = c1_0 + x * y1_0;
      }
      { double x = sx[10 + kk * 3 + 2];
        c2_0 = c2_0 + x * y1_0;
      }
      }
      __syncwarp(gm);
    }
  }
  double* part = sx;
  part[(kk * 3 + 0) * 3 + c * 1 + 0] = c0_0;
  part[(kk * 3 + 1) * 3 + c * 1 + 0] = c1_0;
  part[(kk * 3 + 2) * 3 + c * 1 + 0] = c2_0;
  __syncwarp(gm);
  double* cb = cv + (u64)s * 9;
  for (u32 e = r; e < 9; e += 9) {
    double v = part[e];
    v = v + part[9 + e];
    v = v + part[18 + e];
    cb[e] = v;
  }
}

// tensor-core stage (3x3 by 3x3), one warp per slot, 1 FP64 m8n8k4 MMA per contribution, 4 contributions per step
extern "C" __global__ void ptap_mma_3x3x3t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (w >= nslots) return;
  u32 s = order[w];
  u32 r = lane >> 2, t = lane & 3;
  const double* xl0 = xv + (r < 3 && (0 + t) < 3 ? (0 + t) * 3 + r : 0);
  const double* yl0 = yv + (r < 3 && (0 + t) < 3 ? (0 + t) * 3 + r : 0);
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 3 ? 1.0 : 0.0;
  double d0 = 0.0, d1 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 16) {
    u32 cnt = q1 - q0 < 16 ? q1 - q0 : 16;
    u32 e = lane & 15;
    u32 idx = 0;
    if (e < cnt) idx = lane < 16 ? rx[q0 + e] : ry[q0 + e];
    u32 u = 0;
    for (; u + 4 <= cnt; u += 4) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = __ldg(xl0 + (u64)xi0 * 9), b0_0 = __ldg(yl0 + (u64)yi0 * 9) * ym0;
      u32 xi1 = __shfl_sync(0xffffffffu, idx, u + 1), yi1 = __shfl_sync(0xffffffffu, idx, 16 + u + 1);
      double a1_0 = __ldg(xl0 + (u64)xi1 * 9), b1_0 = __ldg(yl0 + (u64)yi1 * 9) * ym0;
      u32 xi2 = __shfl_sync(0xffffffffu, idx, u + 2), yi2 = __shfl_sync(0xffffffffu, idx, 16 + u + 2);
      double a2_0 = __ldg(xl0 + (u64)xi2 * 9), b2_0 = __ldg(yl0 + (u64)yi2 * 9) * ym0;
      u32 xi3 = __shfl_sync(0xffffffffu, idx, u + 3), yi3 = __shfl_sync(0xffffffffu, idx, 16 + u + 3);
      double a3_0 = __ldg(xl0 + (u64)xi3 * 9), b3_0 = __ldg(yl0 + (u64)yi3 * 9) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a3_0), "d"(b3_0));
    }
    for (; u < cnt; ++u) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = __ldg(xl0 + (u64)xi0 * 9), b0_0 = __ldg(yl0 + (u64)yi0 * 9) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    }
  }
  u32 c0 = 2 * t;
  double* cb = cv + (u64)s * 9;
  if (r < 3) { if (c0 < 3) cb[r * 3 + c0] = d0; if (c0 + 1 < 3) cb[r * 3 + c0 + 1] = d1; }
#else
  __trap();
#endif
}

// tensor-pair stage (3x3 by 3x3, Single), one warp per unit of 1 slot(s), 1 FP64 m8n8k4 MMA per entry and side, 4 entries per step, the last ones as one guarded step
extern "C" __global__ void ptap_mma2_3x3x3t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ uptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (w >= nunits) return;
  u32 r = lane >> 2, t = lane & 3;
  const bool av0 = r < 3 && (0 + t) < 3, bv0 = r < 3 && (0 + t) < 3;
  const double* xl0 = xv + (av0 ? (0 + t) * 3 + r : (r < 3 ? r : 2));
  const double* yl0 = yv + (bv0 ? (0 + t) * 3 + r : (r < 3 ? r : 2));
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 3 ? 1.0 : 0.0;
  const uint2* ep = (const uint2*)ent;
  double d0 = 0.0, d1 = 0.0;
  u32 q = uptr[w], q1 = uptr[w + 1];
  for (; q + 4 <= q1; q += 4) {
    uint2 e0 = __ldg(ep + q + 0);
    uint2 e1 = __ldg(ep + q + 1);
    uint2 e2 = __ldg(ep + q + 2);
    uint2 e3 = __ldg(ep + q + 3);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 9) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 9);
    double b1_0 = 0.0, a1_0 = 0.0;
    b1_0 = __ldg(yl0 + (u64)e1.y * 9) * ym0;
    a1_0 = __ldg(xl0 + (u64)e1.x * 9);
    double b2_0 = 0.0, a2_0 = 0.0;
    b2_0 = __ldg(yl0 + (u64)e2.y * 9) * ym0;
    a2_0 = __ldg(xl0 + (u64)e2.x * 9);
    double b3_0 = 0.0, a3_0 = 0.0;
    b3_0 = __ldg(yl0 + (u64)e3.y * 9) * ym0;
    a3_0 = __ldg(xl0 + (u64)e3.x * 9);
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a3_0), "d"(b3_0));
  }
  if (q < q1) {
    u32 rem = q1 - q;
    uint2 e0 = __ldg(ep + q + 0);
    uint2 e1 = make_uint2(0, 0);
    if (1 < rem) e1 = __ldg(ep + q + 1);
    uint2 e2 = make_uint2(0, 0);
    if (2 < rem) e2 = __ldg(ep + q + 2);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 9) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 9);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 9) * ym0; a1_0 = __ldg(xl0 + (u64)e1.x * 9); }
    double b2_0 = 0.0, a2_0 = 0.0;
    if (2 < rem) { b2_0 = __ldg(yl0 + (u64)e2.y * 9) * ym0; a2_0 = __ldg(xl0 + (u64)e2.x * 9); }
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    if (1 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    if (2 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
  }
  u32 c0 = 2 * t;
  {
  u32 s = uslot[1 * w + 0];
  double* cb = cv + (u64)s * 9;
  if (s != 0xffffffffu && r < 3) {
    if (c0 < 3) cb[r * 3 + c0] = d0; if (c0 + 1 < 3) cb[r * 3 + c0 + 1] = d1;
  }
  }
#else
  __trap();
#endif
}

// row-Gustavson stage (3x3 by 3x3), one warp per chunk of 32 output slots, 4 warps per block
extern "C" __global__ void ptap_row_gustavson_3x3x3t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ chunk_slot, const unsigned int* __restrict__ chunk_seg, const unsigned int* __restrict__ chunk_pos, const unsigned int* __restrict__ seg_x, const unsigned int* __restrict__ seg_y, const unsigned int* __restrict__ seg_n, const unsigned int* __restrict__ pos, double* __restrict__ cv, unsigned int nchunks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double rg_acc[4][32 * 9];
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u32 c = blockIdx.x * 4 + wl;
  if (c >= nchunks) return;
  double* acc = rg_acc[wl];
  u32 s0 = chunk_slot[c], ne = (chunk_slot[c + 1] - s0) * 9;
  for (u32 e = lane; e < ne; e += 32) acc[e] = 0.0;
  __syncwarp();
  const unsigned char* sn = (const unsigned char*)seg_n;
  const unsigned char* ps = (const unsigned char*)pos;
  u32 pb = chunk_pos[c];
  u32 g1 = chunk_seg[c + 1];
  for (u32 g = chunk_seg[c]; g < g1; ++g) {
    u32 cnt = sn[g];
    const double* xb = xv + (u64)seg_x[g] * 9;
    const double* yb0 = yv + (u64)seg_y[g] * 9;
    double x0 = __ldg(xb + 0);
    double x1 = __ldg(xb + 1);
    double x2 = __ldg(xb + 2);
    double x3 = __ldg(xb + 3);
    double x4 = __ldg(xb + 4);
    double x5 = __ldg(xb + 5);
    double x6 = __ldg(xb + 6);
    double x7 = __ldg(xb + 7);
    double x8 = __ldg(xb + 8);
    for (u32 t = lane; t < cnt * 3; t += 32) {
      u32 b = t / 3, j = t - b * 3;
      const double* yb = yb0 + (u64)b * 9;
      double* o = acc + (u32)ps[pb + b] * 9 + j;
      double y0 = __ldg(yb + 0 * 3 + j);
      double y1 = __ldg(yb + 1 * 3 + j);
      double y2 = __ldg(yb + 2 * 3 + j);
      { double a = o[0];
        a = a + x0 * y0;
        a = a + x3 * y1;
        a = a + x6 * y2;
        o[0] = a; }
      { double a = o[3];
        a = a + x1 * y0;
        a = a + x4 * y1;
        a = a + x7 * y2;
        o[3] = a; }
      { double a = o[6];
        a = a + x2 * y0;
        a = a + x5 * y1;
        a = a + x8 * y2;
        o[6] = a; }
    }
    pb += cnt;
    __syncwarp();
  }
  for (u32 e = lane; e < ne; e += 32) cv[(u64)s0 * 9 + e] = acc[e];
}

// outer-product scatter pass (3x3 by 3x3), atomic accumulation
extern "C" __global__ void ptap_scatter_3x3x3t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ rslot, double* __restrict__ cv, unsigned int nrecords) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nrecords * 9) return;
  u32 q = (u32)(t / 9); u32 e = (u32)(t % 9);
  u32 i = e / 3, j = e % 3;
  const double* xb = xv + (u64)rx[q] * 9;
  const double* yb = yv + (u64)ry[q] * 9;
  double v = 0.0;
  v = v + xb[(0)*3+(i)] * yb[0 * 3 + j];
  v = v + xb[(1)*3+(i)] * yb[1 * 3 + j];
  v = v + xb[(2)*3+(i)] * yb[2 * 3 + j];
  atomicAdd(cv + (u64)rslot[q] * 9 + e, v);
}

// merge-path block SpMV y = A x, 2x2 blocks, 4 warps per block, the next 32 blocks loaded while the current ones are multiplied; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_spmv_merge_2x2(const double* __restrict__ av, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double2 stage2[4][64];
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u64 w = (u64)blockIdx.x * 4 + wl;
  u64 b0 = w * per_warp;
  if (b0 >= nblocks) return;
  u64 b1 = b0 + per_warp < nblocks ? b0 + per_warp : nblocks;
  u32 head_row = b0 > 0 && brow[b0 - 1] == brow[b0] ? brow[b0] : 0xffffffffu;
  u32 tail_row = b1 < nblocks && brow[b1] == brow[b1 - 1] ? brow[b1 - 1] : 0xffffffffu;
  u32 carry_row = 0xffffffffu;
  double* stage = (double*)stage2[wl];
  double2 pf0;
  double2 pf1;
  double pf_odd = 0.0;
  double k0 = 0.0;
  double k1 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  {
    u32 nd = pcnt * 4;
    const double2* src2 = (const double2*)(av + b0 * 4);
    if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
    if (lane + 32 < nd / 2) pf1 = src2[lane + 32];
    if ((nd & 1) && lane == 0) pf_odd = av[b0 * 4 + nd - 1];
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    {
      u32 nd = cnt * 4;
      if (lane + 0 < nd / 2) stage2[wl][lane + 0] = pf0;
      if (lane + 32 < nd / 2) stage2[wl][lane + 32] = pf1;
      if ((nd & 1) && lane == 0) stage[nd - 1] = pf_odd;
    }
    __syncwarp();
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        u32 nd = pcnt * 4;
        const double2* src2 = (const double2*)(av + nbase * 4);
        if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
        if (lane + 32 < nd / 2) pf1 = src2[lane + 32];
        if ((nd & 1) && lane == 0) pf_odd = av[nbase * 4 + nd - 1];
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    double v1 = 0.0;
    if (valid) {
      const double* a = stage + lane * 4;
      double x0 = x[(u64)col * 2 + 0];
      double x1 = x[(u64)col * 2 + 1];
      v0 = a[0] * x0 + a[1] * x1;
      v1 = a[2] * x0 + a[3] * x1;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 2;
      if (row != head_row && row != tail_row) {
        yr[0] = v0;
        yr[1] = v1;
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 2;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 2;
        mine[0] = v0;
        mine[1] = v1;
        __threadfence();
        if (atomicAdd(ticket + bw, 1u) == 1u) {
          __threadfence();
          ticket[bw] = 0u;
          double t0 = is_tail ? v0 : __ldcg(other + 0);
          double h0 = is_tail ? __ldcg(other + 0) : v0;
          double t1 = is_tail ? v1 : __ldcg(other + 1);
          double h1 = is_tail ? __ldcg(other + 1) : v1;
          yr[0] = t0 + h0;
          yr[1] = t1 + h1;
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = b - A x, 2x2 blocks, 4 warps per block, the next 32 blocks loaded while the current ones are multiplied; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_residual_merge_2x2(const double* __restrict__ av, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, const double* __restrict__ bv, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double2 stage2[4][64];
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u64 w = (u64)blockIdx.x * 4 + wl;
  u64 b0 = w * per_warp;
  if (b0 >= nblocks) return;
  u64 b1 = b0 + per_warp < nblocks ? b0 + per_warp : nblocks;
  u32 head_row = b0 > 0 && brow[b0 - 1] == brow[b0] ? brow[b0] : 0xffffffffu;
  u32 tail_row = b1 < nblocks && brow[b1] == brow[b1 - 1] ? brow[b1 - 1] : 0xffffffffu;
  u32 carry_row = 0xffffffffu;
  double* stage = (double*)stage2[wl];
  double2 pf0;
  double2 pf1;
  double pf_odd = 0.0;
  double k0 = 0.0;
  double k1 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  {
    u32 nd = pcnt * 4;
    const double2* src2 = (const double2*)(av + b0 * 4);
    if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
    if (lane + 32 < nd / 2) pf1 = src2[lane + 32];
    if ((nd & 1) && lane == 0) pf_odd = av[b0 * 4 + nd - 1];
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    {
      u32 nd = cnt * 4;
      if (lane + 0 < nd / 2) stage2[wl][lane + 0] = pf0;
      if (lane + 32 < nd / 2) stage2[wl][lane + 32] = pf1;
      if ((nd & 1) && lane == 0) stage[nd - 1] = pf_odd;
    }
    __syncwarp();
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        u32 nd = pcnt * 4;
        const double2* src2 = (const double2*)(av + nbase * 4);
        if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
        if (lane + 32 < nd / 2) pf1 = src2[lane + 32];
        if ((nd & 1) && lane == 0) pf_odd = av[nbase * 4 + nd - 1];
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    double v1 = 0.0;
    if (valid) {
      const double* a = stage + lane * 4;
      double x0 = x[(u64)col * 2 + 0];
      double x1 = x[(u64)col * 2 + 1];
      v0 = a[0] * x0 + a[1] * x1;
      v1 = a[2] * x0 + a[3] * x1;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 2;
      const double* br_ = bv + (u64)row * 2;
      if (row != head_row && row != tail_row) {
        yr[0] = 1.0 * br_[0] - 1.0 * (v0);
        yr[1] = 1.0 * br_[1] - 1.0 * (v1);
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 2;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 2;
        mine[0] = v0;
        mine[1] = v1;
        __threadfence();
        if (atomicAdd(ticket + bw, 1u) == 1u) {
          __threadfence();
          ticket[bw] = 0u;
          double t0 = is_tail ? v0 : __ldcg(other + 0);
          double h0 = is_tail ? __ldcg(other + 0) : v0;
          double t1 = is_tail ? v1 : __ldcg(other + 1);
          double h1 = is_tail ? __ldcg(other + 1) : v1;
          yr[0] = 1.0 * br_[0] - 1.0 * (t0 + h0);
          yr[1] = 1.0 * br_[1] - 1.0 * (t1 + h1);
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = A x, 2x3 blocks, 4 warps per block, the next 32 blocks loaded while the current ones are multiplied; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_spmv_merge_2x3(const double* __restrict__ av, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double2 stage2[4][96];
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u64 w = (u64)blockIdx.x * 4 + wl;
  u64 b0 = w * per_warp;
  if (b0 >= nblocks) return;
  u64 b1 = b0 + per_warp < nblocks ? b0 + per_warp : nblocks;
  u32 head_row = b0 > 0 && brow[b0 - 1] == brow[b0] ? brow[b0] : 0xffffffffu;
  u32 tail_row = b1 < nblocks && brow[b1] == brow[b1 - 1] ? brow[b1 - 1] : 0xffffffffu;
  u32 carry_row = 0xffffffffu;
  double* stage = (double*)stage2[wl];
  double2 pf0;
  double2 pf1;
  double2 pf2;
  double pf_odd = 0.0;
  double k0 = 0.0;
  double k1 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  {
    u32 nd = pcnt * 6;
    const double2* src2 = (const double2*)(av + b0 * 6);
    if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
    if (lane + 32 < nd / 2) pf1 = src2[lane + 32];
    if (lane + 64 < nd / 2) pf2 = src2[lane + 64];
    if ((nd & 1) && lane == 0) pf_odd = av[b0 * 6 + nd - 1];
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    {
      u32 nd = cnt * 6;
      if (lane + 0 < nd / 2) stage2[wl][lane + 0] = pf0;
      if (lane + 32 < nd / 2) stage2[wl][lane + 32] = pf1;
      if (lane + 64 < nd / 2) stage2[wl][lane + 64] = pf2;
      if ((nd & 1) && lane == 0) stage[nd - 1] = pf_odd;
    }
    __syncwarp();
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        u32 nd = pcnt * 6;
        const double2* src2 = (const double2*)(av + nbase * 6);
        if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
        if (lane + 32 < nd / 2) pf1 = src2[lane + 32];
        if (lane + 64 < nd / 2) pf2 = src2[lane + 64];
        if ((nd & 1) && lane == 0) pf_odd = av[nbase * 6 + nd - 1];
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    double v1 = 0.0;
    if (valid) {
      const double* a = stage + lane * 6;
      double x0 = x[(u64)col * 3 + 0];
      double x1 = x[(u64)col * 3 + 1];
      double x2 = x[(u64)col * 3 + 2];
      v0 = a[0] * x0 + a[1] * x1 + a[2] * x2;
      v1 = a[3] * x0 + a[4] * x1 + a[5] * x2;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 2;
      if (row != head_row && row != tail_row) {
        yr[0] = v0;
        yr[1] = v1;
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 2;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 2;
        mine[0] = v0;
        mine[1] = v1;
        __threadfence();
        if (atomicAdd(ticket + bw, 1u) == 1u) {
          __threadfence();
          ticket[bw] = 0u;
          double t0 = is_tail ? v0 : __ldcg(other + 0);
          double h0 = is_tail ? __ldcg(other + 0) : v0;
          double t1 = is_tail ? v1 : __ldcg(other + 1);
          double h1 = is_tail ? __ldcg(other + 1) : v1;
          yr[0] = t0 + h0;
          yr[1] = t1 + h1;
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = A x, 3x2 blocks, 4 warps per block, the next 32 blocks loaded while the current ones are multiplied; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_spmv_merge_3x2(const double* __restrict__ av, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double2 stage2[4][96];
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u64 w = (u64)blockIdx.x * 4 + wl;
  u64 b0 = w * per_warp;
  if (b0 >= nblocks) return;
  u64 b1 = b0 + per_warp < nblocks ? b0 + per_warp : nblocks;
  u32 head_row = b0 > 0 && brow[b0 - 1] == brow[b0] ? brow[b0] : 0xffffffffu;
  u32 tail_row = b1 < nblocks && brow[b1] == brow[b1 - 1] ? brow[b1 - 1] : 0xffffffffu;
  u32 carry_row = 0xffffffffu;
  double* stage = (double*)stage2[wl];
  double2 pf0;
  double2 pf1;
  double2 pf2;
  double pf_odd = 0.0;
  double k0 = 0.0;
  double k1 = 0.0;
  double k2 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  {
    u32 nd = pcnt * 6;
    const double2* src2 = (const double2*)(av + b0 * 6);
    if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
    if (lane + 32 < nd / 2) pf1 = src2[lane + 32];
    if (lane + 64 < nd / 2) pf2 = src2[lane + 64];
    if ((nd & 1) && lane == 0) pf_odd = av[b0 * 6 + nd - 1];
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    {
      u32 nd = cnt * 6;
      if (lane + 0 < nd / 2) stage2[wl][lane + 0] = pf0;
      if (lane + 32 < nd / 2) stage2[wl][lane + 32] = pf1;
      if (lane + 64 < nd / 2) stage2[wl][lane + 64] = pf2;
      if ((nd & 1) && lane == 0) stage[nd - 1] = pf_odd;
    }
    __syncwarp();
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        u32 nd = pcnt * 6;
        const double2* src2 = (const double2*)(av + nbase * 6);
        if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
        if (lane + 32 < nd / 2) pf1 = src2[lane + 32];
        if (lane + 64 < nd / 2) pf2 = src2[lane + 64];
        if ((nd & 1) && lane == 0) pf_odd = av[nbase * 6 + nd - 1];
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    double v1 = 0.0;
    double v2 = 0.0;
    if (valid) {
      const double* a = stage + lane * 6;
      double x0 = x[(u64)col * 2 + 0];
      double x1 = x[(u64)col * 2 + 1];
      v0 = a[0] * x0 + a[1] * x1;
      v1 = a[2] * x0 + a[3] * x1;
      v2 = a[4] * x0 + a[5] * x1;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      double o2 = __shfl_up_sync(0xffffffffu, v2, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
        v2 = o2 + v2;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
      v2 = k2 + v2;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    k2 = __shfl_sync(0xffffffffu, v2, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 3;
      if (row != head_row && row != tail_row) {
        yr[0] = v0;
        yr[1] = v1;
        yr[2] = v2;
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 3;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 3;
        mine[0] = v0;
        mine[1] = v1;
        mine[2] = v2;
        __threadfence();
        if (atomicAdd(ticket + bw, 1u) == 1u) {
          __threadfence();
          ticket[bw] = 0u;
          double t0 = is_tail ? v0 : __ldcg(other + 0);
          double h0 = is_tail ? __ldcg(other + 0) : v0;
          double t1 = is_tail ? v1 : __ldcg(other + 1);
          double h1 = is_tail ? __ldcg(other + 1) : v1;
          double t2 = is_tail ? v2 : __ldcg(other + 2);
          double h2 = is_tail ? __ldcg(other + 2) : v2;
          yr[0] = t0 + h0;
          yr[1] = t1 + h1;
          yr[2] = t2 + h2;
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = A x, 3x3 blocks, 4 warps per block, the next 32 blocks loaded while the current ones are multiplied; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_spmv_merge_3x3(const double* __restrict__ av, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double2 stage2[4][144];
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u64 w = (u64)blockIdx.x * 4 + wl;
  u64 b0 = w * per_warp;
  if (b0 >= nblocks) return;
  u64 b1 = b0 + per_warp < nblocks ? b0 + per_warp : nblocks;
  u32 head_row = b0 > 0 && brow[b0 - 1] == brow[b0] ? brow[b0] : 0xffffffffu;
  u32 tail_row = b1 < nblocks && brow[b1] == brow[b1 - 1] ? brow[b1 - 1] : 0xffffffffu;
  u32 carry_row = 0xffffffffu;
  double* stage = (double*)stage2[wl];
  double2 pf0;
  double2 pf1;
  double2 pf2;
  double2 pf3;
  double2 pf4;
  double pf_odd = 0.0;
  double k0 = 0.0;
  double k1 = 0.0;
  double k2 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  {
    u32 nd = pcnt * 9;
    const double2* src2 = (const double2*)(av + b0 * 9);
    if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
    if (lane + 32 < nd / 2) pf1 = src2[lane + 32];
    if (lane + 64 < nd / 2) pf2 = src2[lane + 64];
    if (lane + 96 < nd / 2) pf3 = src2[lane + 96];
    if (lane + 128 < nd / 2) pf4 = src2[lane + 128];
    if ((nd & 1) && lane == 0) pf_odd = av[b0 * 9 + nd - 1];
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    {
      u32 nd = cnt * 9;
      if (lane + 0 < nd / 2) stage2[wl][lane + 0] = pf0;
      if (lane + 32 < nd / 2) stage2[wl][lane + 32] = pf1;
      if (lane + 64 < nd / 2) stage2[wl][lane + 64] = pf2;
      if (lane + 96 < nd / 2) stage2[wl][lane + 96] = pf3;
      if (lane + 128 < nd / 2) stage2[wl][lane + 128] = pf4;
      if ((nd & 1) && lane == 0) stage[nd - 1] = pf_odd;
    }
    __syncwarp();
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        u32 nd = pcnt * 9;
        const double2* src2 = (const double2*)(av + nbase * 9);
        if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
        if (lane + 32 < nd / 2) pf1 = src2[lane + 32];
        if (lane + 64 < nd / 2) pf2 = src2[lane + 64];
        if (lane + 96 < nd / 2) pf3 = src2[lane + 96];
        if (lane + 128 < nd / 2) pf4 = src2[lane + 128];
        if ((nd & 1) && lane == 0) pf_odd = av[nbase * 9 + nd - 1];
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    double v1 = 0.0;
    double v2 = 0.0;
    if (valid) {
      const double* a = stage + lane * 9;
      double x0 = x[(u64)col * 3 + 0];
      double x1 = x[(u64)col * 3 + 1];
      double x2 = x[(u64)col * 3 + 2];
      v0 = a[0] * x0 + a[1] * x1 + a[2] * x2;
      v1 = a[3] * x0 + a[4] * x1 + a[5] * x2;
      v2 = a[6] * x0 + a[7] * x1 + a[8] * x2;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      double o2 = __shfl_up_sync(0xffffffffu, v2, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
        v2 = o2 + v2;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
      v2 = k2 + v2;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    k2 = __shfl_sync(0xffffffffu, v2, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 3;
      if (row != head_row && row != tail_row) {
        yr[0] = v0;
        yr[1] = v1;
        yr[2] = v2;
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 3;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 3;
        mine[0] = v0;
        mine[1] = v1;
        mine[2] = v2;
        __threadfence();
        if (atomicAdd(ticket + bw, 1u) == 1u) {
          __threadfence();
          ticket[bw] = 0u;
          double t0 = is_tail ? v0 : __ldcg(other + 0);
          double h0 = is_tail ? __ldcg(other + 0) : v0;
          double t1 = is_tail ? v1 : __ldcg(other + 1);
          double h1 = is_tail ? __ldcg(other + 1) : v1;
          double t2 = is_tail ? v2 : __ldcg(other + 2);
          double h2 = is_tail ? __ldcg(other + 2) : v2;
          yr[0] = t0 + h0;
          yr[1] = t1 + h1;
          yr[2] = t2 + h2;
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = b - A x, 3x3 blocks, 4 warps per block, the next 32 blocks loaded while the current ones are multiplied; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_residual_merge_3x3(const double* __restrict__ av, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, const double* __restrict__ bv, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double2 stage2[4][144];
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u64 w = (u64)blockIdx.x * 4 + wl;
  u64 b0 = w * per_warp;
  if (b0 >= nblocks) return;
  u64 b1 = b0 + per_warp < nblocks ? b0 + per_warp : nblocks;
  u32 head_row = b0 > 0 && brow[b0 - 1] == brow[b0] ? brow[b0] : 0xffffffffu;
  u32 tail_row = b1 < nblocks && brow[b1] == brow[b1 - 1] ? brow[b1 - 1] : 0xffffffffu;
  u32 carry_row = 0xffffffffu;
  double* stage = (double*)stage2[wl];
  double2 pf0;
  double2 pf1;
  double2 pf2;
  double2 pf3;
  double2 pf4;
  double pf_odd = 0.0;
  double k0 = 0.0;
  double k1 = 0.0;
  double k2 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  {
    u32 nd = pcnt * 9;
    const double2* src2 = (const double2*)(av + b0 * 9);
    if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
    if (lane + 32 < nd / 2) pf1 = src2[lane + 32];
    if (lane + 64 < nd / 2) pf2 = src2[lane + 64];
    if (lane + 96 < nd / 2) pf3 = src2[lane + 96];
    if (lane + 128 < nd / 2) pf4 = src2[lane + 128];
    if ((nd & 1) && lane == 0) pf_odd = av[b0 * 9 + nd - 1];
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    {
      u32 nd = cnt * 9;
      if (lane + 0 < nd / 2) stage2[wl][lane + 0] = pf0;
      if (lane + 32 < nd / 2) stage2[wl][lane + 32] = pf1;
      if (lane + 64 < nd / 2) stage2[wl][lane + 64] = pf2;
      if (lane + 96 < nd / 2) stage2[wl][lane + 96] = pf3;
      if (lane + 128 < nd / 2) stage2[wl][lane + 128] = pf4;
      if ((nd & 1) && lane == 0) stage[nd - 1] = pf_odd;
    }
    __syncwarp();
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        u32 nd = pcnt * 9;
        const double2* src2 = (const double2*)(av + nbase * 9);
        if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
        if (lane + 32 < nd / 2) pf1 = src2[lane + 32];
        if (lane + 64 < nd / 2) pf2 = src2[lane + 64];
        if (lane + 96 < nd / 2) pf3 = src2[lane + 96];
        if (lane + 128 < nd / 2) pf4 = src2[lane + 128];
        if ((nd & 1) && lane == 0) pf_odd = av[nbase * 9 + nd - 1];
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    double v1 = 0.0;
    double v2 = 0.0;
    if (valid) {
      const double* a = stage + lane * 9;
      double x0 = x[(u64)col * 3 + 0];
      double x1 = x[(u64)col * 3 + 1];
      double x2 = x[(u64)col * 3 + 2];
      v0 = a[0] * x0 + a[1] * x1 + a[2] * x2;
      v1 = a[3] * x0 + a[4] * x1 + a[5] * x2;
      v2 = a[6] * x0 + a[7] * x1 + a[8] * x2;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      double o2 = __shfl_up_sync(0xffffffffu, v2, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
        v2 = o2 + v2;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
      v2 = k2 + v2;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    k2 = __shfl_sync(0xffffffffu, v2, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 3;
      const double* br_ = bv + (u64)row * 3;
      if (row != head_row && row != tail_row) {
        yr[0] = 1.0 * br_[0] - 1.0 * (v0);
        yr[1] = 1.0 * br_[1] - 1.0 * (v1);
        yr[2] = 1.0 * br_[2] - 1.0 * (v2);
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 3;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 3;
        mine[0] = v0;
        mine[1] = v1;
        mine[2] = v2;
        __threadfence();
        if (atomicAdd(ticket + bw, 1u) == 1u) {
          __threadfence();
          ticket[bw] = 0u;
          double t0 = is_tail ? v0 : __ldcg(other + 0);
          double h0 = is_tail ? __ldcg(other + 0) : v0;
          double t1 = is_tail ? v1 : __ldcg(other + 1);
          double h1 = is_tail ? __ldcg(other + 1) : v1;
          double t2 = is_tail ? v2 : __ldcg(other + 2);
          double h2 = is_tail ? __ldcg(other + 2) : v2;
          yr[0] = 1.0 * br_[0] - 1.0 * (t0 + h0);
          yr[1] = 1.0 * br_[1] - 1.0 * (t1 + h1);
          yr[2] = 1.0 * br_[2] - 1.0 * (t2 + h2);
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = A x, 2x2 blocks (values stored as f32, widened to f64; x, y and the sums f64), 4 warps per block, the next 32 blocks loaded while the current ones are multiplied; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ __launch_bounds__(128, 8) void ptap_spmv_merge_f32_2x2(const float* __restrict__ av, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ float4 stage2[4][32];
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u64 w = (u64)blockIdx.x * 4 + wl;
  u64 b0 = w * per_warp;
  if (b0 >= nblocks) return;
  u64 b1 = b0 + per_warp < nblocks ? b0 + per_warp : nblocks;
  u32 head_row = b0 > 0 && brow[b0 - 1] == brow[b0] ? brow[b0] : 0xffffffffu;
  u32 tail_row = b1 < nblocks && brow[b1] == brow[b1 - 1] ? brow[b1 - 1] : 0xffffffffu;
  u32 carry_row = 0xffffffffu;
  float* stage = (float*)stage2[wl];
  float4 pf0;
  float pf_odd = 0.0f;
  double k0 = 0.0;
  double k1 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  {
    u32 nd = pcnt * 4;
    const float4* src2 = (const float4*)(av + b0 * 4);
    if (lane + 0 < nd / 4) pf0 = src2[lane + 0];
    if (lane < (nd & 3u)) pf_odd = av[b0 * 4 + (nd & ~3u) + lane];
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    {
      u32 nd = cnt * 4;
      if (lane + 0 < nd / 4) stage2[wl][lane + 0] = pf0;
      if (lane < (nd & 3u)) stage[(nd & ~3u) + lane] = pf_odd;
    }
    __syncwarp();
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        u32 nd = pcnt * 4;
        const float4* src2 = (const float4*)(av + nbase * 4);
        if (lane + 0 < nd / 4) pf0 = src2[lane + 0];
        if (lane < (nd & 3u)) pf_odd = av[nbase * 4 + (nd & ~3u) + lane];
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    double v1 = 0.0;
    if (valid) {
      const float* a = stage + lane * 4;
      const double2* xc2 = (const double2*)(x + (u64)col * 2);
      double2 xv0 = xc2[0];
      double x0 = xv0.x;
      double x1 = xv0.y;
      v0 = (double)a[0] * x0 + (double)a[1] * x1;
      v1 = (double)a[2] * x0 + (double)a[3] * x1;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 2;
      if (row != head_row && row != tail_row) {
        yr[0] = v0;
        yr[1] = v1;
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 2;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 2;
        mine[0] = v0;
        mine[1] = v1;
        __threadfence();
        if (atomicAdd(ticket + bw, 1u) == 1u) {
          __threadfence();
          ticket[bw] = 0u;
          double t0 = is_tail ? v0 : __ldcg(other + 0);
          double h0 = is_tail ? __ldcg(other + 0) : v0;
          double t1 = is_tail ? v1 : __ldcg(other + 1);
          double h1 = is_tail ? __ldcg(other + 1) : v1;
          yr[0] = t0 + h0;
          yr[1] = t1 + h1;
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = b - A x, 2x2 blocks (values stored as f32, widened to f64; x, y and the sums f64), 4 warps per block, the next 32 blocks loaded while the current ones are multiplied; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ __launch_bounds__(128, 8) void ptap_residual_merge_f32_2x2(const float* __restrict__ av, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, const double* __restrict__ bv, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ float4 stage2[4][32];
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u64 w = (u64)blockIdx.x * 4 + wl;
  u64 b0 = w * per_warp;
  if (b0 >= nblocks) return;
  u64 b1 = b0 + per_warp < nblocks ? b0 + per_warp : nblocks;
  u32 head_row = b0 > 0 && brow[b0 - 1] == brow[b0] ? brow[b0] : 0xffffffffu;
  u32 tail_row = b1 < nblocks && brow[b1] == brow[b1 - 1] ? brow[b1 - 1] : 0xffffffffu;
  u32 carry_row = 0xffffffffu;
  float* stage = (float*)stage2[wl];
  float4 pf0;
  float pf_odd = 0.0f;
  double k0 = 0.0;
  double k1 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  {
    u32 nd = pcnt * 4;
    const float4* src2 = (const float4*)(av + b0 * 4);
    if (lane + 0 < nd / 4) pf0 = src2[lane + 0];
    if (lane < (nd & 3u)) pf_odd = av[b0 * 4 + (nd & ~3u) + lane];
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    {
      u32 nd = cnt * 4;
      if (lane + 0 < nd / 4) stage2[wl][lane + 0] = pf0;
      if (lane < (nd & 3u)) stage[(nd & ~3u) + lane] = pf_odd;
    }
    __syncwarp();
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        u32 nd = pcnt * 4;
        const float4* src2 = (const float4*)(av + nbase * 4);
        if (lane + 0 < nd / 4) pf0 = src2[lane + 0];
        if (lane < (nd & 3u)) pf_odd = av[nbase * 4 + (nd & ~3u) + lane];
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    double v1 = 0.0;
    if (valid) {
      const float* a = stage + lane * 4;
      const double2* xc2 = (const double2*)(x + (u64)col * 2);
      double2 xv0 = xc2[0];
      double x0 = xv0.x;
      double x1 = xv0.y;
      v0 = (double)a[0] * x0 + (double)a[1] * x1;
      v1 = (double)a[2] * x0 + (double)a[3] * x1;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 2;
      const double* br_ = bv + (u64)row * 2;
      if (row != head_row && row != tail_row) {
        yr[0] = 1.0 * br_[0] - 1.0 * (v0);
        yr[1] = 1.0 * br_[1] - 1.0 * (v1);
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 2;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 2;
        mine[0] = v0;
        mine[1] = v1;
        __threadfence();
        if (atomicAdd(ticket + bw, 1u) == 1u) {
          __threadfence();
          ticket[bw] = 0u;
          double t0 = is_tail ? v0 : __ldcg(other + 0);
          double h0 = is_tail ? __ldcg(other + 0) : v0;
          double t1 = is_tail ? v1 : __ldcg(other + 1);
          double h1 = is_tail ? __ldcg(other + 1) : v1;
          yr[0] = 1.0 * br_[0] - 1.0 * (t0 + h0);
          yr[1] = 1.0 * br_[1] - 1.0 * (t1 + h1);
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = A x, 3x3 blocks (values stored as f32, widened to f64; x, y and the sums f64), 4 warps per block, the next 32 blocks loaded while the current ones are multiplied; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ __launch_bounds__(128, 8) void ptap_spmv_merge_f32_3x3(const float* __restrict__ av, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ float4 stage2[4][72];
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u64 w = (u64)blockIdx.x * 4 + wl;
  u64 b0 = w * per_warp;
  if (b0 >= nblocks) return;
  u64 b1 = b0 + per_warp < nblocks ? b0 + per_warp : nblocks;
  u32 head_row = b0 > 0 && brow[b0 - 1] == brow[b0] ? brow[b0] : 0xffffffffu;
  u32 tail_row = b1 < nblocks && brow[b1] == brow[b1 - 1] ? brow[b1 - 1] : 0xffffffffu;
  u32 carry_row = 0xffffffffu;
  float* stage = (float*)stage2[wl];
  float4 pf0;
  float4 pf1;
  float4 pf2;
  float pf_odd = 0.0f;
  double k0 = 0.0;
  double k1 = 0.0;
  double k2 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  {
    u32 nd = pcnt * 9;
    const float4* src2 = (const float4*)(av + b0 * 9);
    if (lane + 0 < nd / 4) pf0 = src2[lane + 0];
    if (lane + 32 < nd / 4) pf1 = src2[lane + 32];
    if (lane + 64 < nd / 4) pf2 = src2[lane + 64];
    if (lane < (nd & 3u)) pf_odd = av[b0 * 9 + (nd & ~3u) + lane];
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    {
      u32 nd = cnt * 9;
      if (lane + 0 < nd / 4) stage2[wl][lane + 0] = pf0;
      if (lane + 32 < nd / 4) stage2[wl][lane + 32] = pf1;
      if (lane + 64 < nd / 4) stage2[wl][lane + 64] = pf2;
      if (lane < (nd & 3u)) stage[(nd & ~3u) + lane] = pf_odd;
    }
    __syncwarp();
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        u32 nd = pcnt * 9;
        const float4* src2 = (const float4*)(av + nbase * 9);
        if (lane + 0 < nd / 4) pf0 = src2[lane + 0];
        if (lane + 32 < nd / 4) pf1 = src2[lane + 32];
        if (lane + 64 < nd / 4) pf2 = src2[lane + 64];
        if (lane < (nd & 3u)) pf_odd = av[nbase * 9 + (nd & ~3u) + lane];
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    double v1 = 0.0;
    double v2 = 0.0;
    if (valid) {
      const float* a = stage + lane * 9;
      const double* xc = x + (u64)col * 3;
      bool xodd = (col & 1u) != 0u;
      double xs = xc[xodd ? 0 : 2];
      double2 xv = *(const double2*)(xc + (xodd ? 1 : 0));
      double x0 = xodd ? xs : xv.x;
      double x1 = xodd ? xv.x : xv.y;
      double x2 = xodd ? xv.y : xs;
      v0 = (double)a[0] * x0 + (double)a[1] * x1 + (double)a[2] * x2;
      v1 = (double)a[3] * x0 + (double)a[4] * x1 + (double)a[5] * x2;
      v2 = (double)a[6] * x0 + (double)a[7] * x1 + (double)a[8] * x2;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      double o2 = __shfl_up_sync(0xffffffffu, v2, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
        v2 = o2 + v2;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
      v2 = k2 + v2;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    k2 = __shfl_sync(0xffffffffu, v2, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 3;
      if (row != head_row && row != tail_row) {
        yr[0] = v0;
        yr[1] = v1;
        yr[2] = v2;
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 3;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 3;
        mine[0] = v0;
        mine[1] = v1;
        mine[2] = v2;
        __threadfence();
        if (atomicAdd(ticket + bw, 1u) == 1u) {
          __threadfence();
          ticket[bw] = 0u;
          double t0 = is_tail ? v0 : __ldcg(other + 0);
          double h0 = is_tail ? __ldcg(other + 0) : v0;
          double t1 = is_tail ? v1 : __ldcg(other + 1);
          double h1 = is_tail ? __ldcg(other + 1) : v1;
          double t2 = is_tail ? v2 : __ldcg(other + 2);
          double h2 = is_tail ? __ldcg(other + 2) : v2;
          yr[0] = t0 + h0;
          yr[1] = t1 + h1;
          yr[2] = t2 + h2;
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = b - A x, 3x3 blocks (values stored as f32, widened to f64; x, y and the sums f64), 4 warps per block, the next 32 blocks loaded while the current ones are multiplied; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ __launch_bounds__(128, 8) void ptap_residual_merge_f32_3x3(const float* __restrict__ av, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, const double* __restrict__ bv, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ float4 stage2[4][72];
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u64 w = (u64)blockIdx.x * 4 + wl;
  u64 b0 = w * per_warp;
  if (b0 >= nblocks) return;
  u64 b1 = b0 + per_warp < nblocks ? b0 + per_warp : nblocks;
  u32 head_row = b0 > 0 && brow[b0 - 1] == brow[b0] ? brow[b0] : 0xffffffffu;
  u32 tail_row = b1 < nblocks && brow[b1] == brow[b1 - 1] ? brow[b1 - 1] : 0xffffffffu;
  u32 carry_row = 0xffffffffu;
  float* stage = (float*)stage2[wl];
  float4 pf0;
  float4 pf1;
  float4 pf2;
  float pf_odd = 0.0f;
  double k0 = 0.0;
  double k1 = 0.0;
  double k2 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  {
    u32 nd = pcnt * 9;
    const float4* src2 = (const float4*)(av + b0 * 9);
    if (lane + 0 < nd / 4) pf0 = src2[lane + 0];
    if (lane + 32 < nd / 4) pf1 = src2[lane + 32];
    if (lane + 64 < nd / 4) pf2 = src2[lane + 64];
    if (lane < (nd & 3u)) pf_odd = av[b0 * 9 + (nd & ~3u) + lane];
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    {
      u32 nd = cnt * 9;
      if (lane + 0 < nd / 4) stage2[wl][lane + 0] = pf0;
      if (lane + 32 < nd / 4) stage2[wl][lane + 32] = pf1;
      if (lane + 64 < nd / 4) stage2[wl][lane + 64] = pf2;
      if (lane < (nd & 3u)) stage[(nd & ~3u) + lane] = pf_odd;
    }
    __syncwarp();
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        u32 nd = pcnt * 9;
        const float4* src2 = (const float4*)(av + nbase * 9);
        if (lane + 0 < nd / 4) pf0 = src2[lane + 0];
        if (lane + 32 < nd / 4) pf1 = src2[lane + 32];
        if (lane + 64 < nd / 4) pf2 = src2[lane + 64];
        if (lane < (nd & 3u)) pf_odd = av[nbase * 9 + (nd & ~3u) + lane];
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    double v1 = 0.0;
    double v2 = 0.0;
    if (valid) {
      const float* a = stage + lane * 9;
      const double* xc = x + (u64)col * 3;
      bool xodd = (col & 1u) != 0u;
      double xs = xc[xodd ? 0 : 2];
      double2 xv = *(const double2*)(xc + (xodd ? 1 : 0));
      double x0 = xodd ? xs : xv.x;
      double x1 = xodd ? xv.x : xv.y;
      double x2 = xodd ? xv.y : xs;
      v0 = (double)a[0] * x0 + (double)a[1] * x1 + (double)a[2] * x2;
      v1 = (double)a[3] * x0 + (double)a[4] * x1 + (double)a[5] * x2;
      v2 = (double)a[6] * x0 + (double)a[7] * x1 + (double)a[8] * x2;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      double o2 = __shfl_up_sync(0xffffffffu, v2, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
        v2 = o2 + v2;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
      v2 = k2 + v2;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    k2 = __shfl_sync(0xffffffffu, v2, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 3;
      const double* br_ = bv + (u64)row * 3;
      if (row != head_row && row != tail_row) {
        yr[0] = 1.0 * br_[0] - 1.0 * (v0);
        yr[1] = 1.0 * br_[1] - 1.0 * (v1);
        yr[2] = 1.0 * br_[2] - 1.0 * (v2);
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 3;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 3;
        mine[0] = v0;
        mine[1] = v1;
        mine[2] = v2;
        __threadfence();
        if (atomicAdd(ticket + bw, 1u) == 1u) {
          __threadfence();
          ticket[bw] = 0u;
          double t0 = is_tail ? v0 : __ldcg(other + 0);
          double h0 = is_tail ? __ldcg(other + 0) : v0;
          double t1 = is_tail ? v1 : __ldcg(other + 1);
          double h1 = is_tail ? __ldcg(other + 1) : v1;
          double t2 = is_tail ? v2 : __ldcg(other + 2);
          double h2 = is_tail ? __ldcg(other + 2) : v2;
          yr[0] = 1.0 * br_[0] - 1.0 * (t0 + h0);
          yr[1] = 1.0 * br_[1] - 1.0 * (t1 + h1);
          yr[2] = 1.0 * br_[2] - 1.0 * (t2 + h2);
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = A x, 2x2 blocks (each block read at pos[k], transposed where bit 31 is set: a symmetric operator's upper triangle only), 4 warps per block, the next 32 blocks loaded while the current ones are multiplied, blocks gathered from global memory; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_spmv_mirror_2x2(const double* __restrict__ av, const unsigned int* __restrict__ pos, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u64 w = (u64)blockIdx.x * 4 + wl;
  u64 b0 = w * per_warp;
  if (b0 >= nblocks) return;
  u64 b1 = b0 + per_warp < nblocks ? b0 + per_warp : nblocks;
  u32 head_row = b0 > 0 && brow[b0 - 1] == brow[b0] ? brow[b0] : 0xffffffffu;
  u32 tail_row = b1 < nblocks && brow[b1] == brow[b1 - 1] ? brow[b1 - 1] : 0xffffffffu;
  u32 carry_row = 0xffffffffu;
  double k0 = 0.0;
  double k1 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  u32 ppos = 0;
  {
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
    ppos = lane < pcnt ? pos[b0 + lane] : 0;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    u32 mpos = ppos;
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
        ppos = lane < pcnt ? pos[nbase + lane] : 0;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    double v1 = 0.0;
    if (valid) {
      const double* a = av + (u64)(mpos & 0x7fffffffu) * 4;
      bool tr = (mpos >> 31) != 0u;
      double x0 = x[(u64)col * 2 + 0];
      double x1 = x[(u64)col * 2 + 1];
      double e0 = a[0];
      double e1 = a[1];
      double e2 = a[2];
      double e3 = a[3];
      v0 = e0 * x0 + (tr ? e2 : e1) * x1;
      v1 = (tr ? e1 : e2) * x0 + e3 * x1;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 2;
      if (row != head_row && row != tail_row) {
        yr[0] = v0;
        yr[1] = v1;
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 2;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 2;
        mine[0] = v0;
        mine[1] = v1;
        __threadfence();
        if (atomicAdd(ticket + bw, 1u) == 1u) {
          __threadfence();
          ticket[bw] = 0u;
          double t0 = is_tail ? v0 : __ldcg(other + 0);
          double h0 = is_tail ? __ldcg(other + 0) : v0;
          double t1 = is_tail ? v1 : __ldcg(other + 1);
          double h1 = is_tail ? __ldcg(other + 1) : v1;
          yr[0] = t0 + h0;
          yr[1] = t1 + h1;
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = b - A x, 2x2 blocks (each block read at pos[k], transposed where bit 31 is set: a symmetric operator's upper triangle only), 4 warps per block, the next 32 blocks loaded while the current ones are multiplied, blocks gathered from global memory; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_residual_mirror_2x2(const double* __restrict__ av, const unsigned int* __restrict__ pos, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, const double* __restrict__ bv, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u64 w = (u64)blockIdx.x * 4 + wl;
  u64 b0 = w * per_warp;
  if (b0 >= nblocks) return;
  u64 b1 = b0 + per_warp < nblocks ? b0 + per_warp : nblocks;
  u32 head_row = b0 > 0 && brow[b0 - 1] == brow[b0] ? brow[b0] : 0xffffffffu;
  u32 tail_row = b1 < nblocks && brow[b1] == brow[b1 - 1] ? brow[b1 - 1] : 0xffffffffu;
  u32 carry_row = 0xffffffffu;
  double k0 = 0.0;
  double k1 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  u32 ppos = 0;
  {
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
    ppos = lane < pcnt ? pos[b0 + lane] : 0;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    u32 mpos = ppos;
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
        ppos = lane < pcnt ? pos[nbase + lane] : 0;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    double v1 = 0.0;
    if (valid) {
      const double* a = av + (u64)(mpos & 0x7fffffffu) * 4;
      bool tr = (mpos >> 31) != 0u;
      double x0 = x[(u64)col * 2 + 0];
      double x1 = x[(u64)col * 2 + 1];
      double e0 = a[0];
      double e1 = a[1];
      double e2 = a[2];
      double e3 = a[3];
      v0 = e0 * x0 + (tr ? e2 : e1) * x1;
      v1 = (tr ? e1 : e2) * x0 + e3 * x1;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 2;
      const double* br_ = bv + (u64)row * 2;
      if (row != head_row && row != tail_row) {
        yr[0] = 1.0 * br_[0] - 1.0 * (v0);
        yr[1] = 1.0 * br_[1] - 1.0 * (v1);
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 2;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 2;
        mine[0] = v0;
        mine[1] = v1;
        __threadfence();
        if (atomicAdd(ticket + bw, 1u) == 1u) {
          __threadfence();
          ticket[bw] = 0u;
          double t0 = is_tail ? v0 : __ldcg(other + 0);
          double h0 = is_tail ? __ldcg(other + 0) : v0;
          double t1 = is_tail ? v1 : __ldcg(other + 1);
          double h1 = is_tail ? __ldcg(other + 1) : v1;
          yr[0] = 1.0 * br_[0] - 1.0 * (t0 + h0);
          yr[1] = 1.0 * br_[1] - 1.0 * (t1 + h1);
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = A x, 3x3 blocks (each block read at pos[k], transposed where bit 31 is set: a symmetric operator's upper triangle only), 4 warps per block, the next 32 blocks loaded while the current ones are multiplied, blocks gathered from global memory; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_spmv_mirror_3x3(const double* __restrict__ av, const unsigned int* __restrict__ pos, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u64 w = (u64)blockIdx.x * 4 + wl;
  u64 b0 = w * per_warp;
  if (b0 >= nblocks) return;
  u64 b1 = b0 + per_warp < nblocks ? b0 + per_warp : nblocks;
  u32 head_row = b0 > 0 && brow[b0 - 1] == brow[b0] ? brow[b0] : 0xffffffffu;
  u32 tail_row = b1 < nblocks && brow[b1] == brow[b1 - 1] ? brow[b1 - 1] : 0xffffffffu;
  u32 carry_row = 0xffffffffu;
  double k0 = 0.0;
  double k1 = 0.0;
  double k2 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  u32 ppos = 0;
  {
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
    ppos = lane < pcnt ? pos[b0 + lane] : 0;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    u32 mpos = ppos;
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
        ppos = lane < pcnt ? pos[nbase + lane] : 0;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    double v1 = 0.0;
    double v2 = 0.0;
    if (valid) {
      const double* a = av + (u64)(mpos & 0x7fffffffu) * 9;
      bool tr = (mpos >> 31) != 0u;
      double x0 = x[(u64)col * 3 + 0];
      double x1 = x[(u64)col * 3 + 1];
      double x2 = x[(u64)col * 3 + 2];
      double e0 = a[0];
      double e1 = a[1];
      double e2 = a[2];
      double e3 = a[3];
      double e4 = a[4];
      double e5 = a[5];
      double e6 = a[6];
      double e7 = a[7];
      double e8 = a[8];
      v0 = e0 * x0 + (tr ? e3 : e1) * x1 + (tr ? e6 : e2) * x2;
      v1 = (tr ? e1 : e3) * x0 + e4 * x1 + (tr ? e7 : e5) * x2;
      v2 = (tr ? e2 : e6) * x0 + (tr ? e5 : e7) * x1 + e8 * x2;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      double o2 = __shfl_up_sync(0xffffffffu, v2, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
        v2 = o2 + v2;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
      v2 = k2 + v2;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    k2 = __shfl_sync(0xffffffffu, v2, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 3;
      if (row != head_row && row != tail_row) {
        yr[0] = v0;
        yr[1] = v1;
        yr[2] = v2;
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 3;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 3;
        mine[0] = v0;
        mine[1] = v1;
        mine[2] = v2;
        __threadfence();
        if (atomicAdd(ticket + bw, 1u) == 1u) {
          __threadfence();
          ticket[bw] = 0u;
          double t0 = is_tail ? v0 : __ldcg(other + 0);
          double h0 = is_tail ? __ldcg(other + 0) : v0;
          double t1 = is_tail ? v1 : __ldcg(other + 1);
          double h1 = is_tail ? __ldcg(other + 1) : v1;
          double t2 = is_tail ? v2 : __ldcg(other + 2);
          double h2 = is_tail ? __ldcg(other + 2) : v2;
          yr[0] = t0 + h0;
          yr[1] = t1 + h1;
          yr[2] = t2 + h2;
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = b - A x, 3x3 blocks (each block read at pos[k], transposed where bit 31 is set: a symmetric operator's upper triangle only), 4 warps per block, the next 32 blocks loaded while the current ones are multiplied, blocks gathered from global memory; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_residual_mirror_3x3(const double* __restrict__ av, const unsigned int* __restrict__ pos, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, const double* __restrict__ bv, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u64 w = (u64)blockIdx.x * 4 + wl;
  u64 b0 = w * per_warp;
  if (b0 >= nblocks) return;
  u64 b1 = b0 + per_warp < nblocks ? b0 + per_warp : nblocks;
  u32 head_row = b0 > 0 && brow[b0 - 1] == brow[b0] ? brow[b0] : 0xffffffffu;
  u32 tail_row = b1 < nblocks && brow[b1] == brow[b1 - 1] ? brow[b1 - 1] : 0xffffffffu;
  u32 carry_row = 0xffffffffu;
  double k0 = 0.0;
  double k1 = 0.0;
  double k2 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  u32 ppos = 0;
  {
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
    ppos = lane < pcnt ? pos[b0 + lane] : 0;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    u32 mpos = ppos;
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
        ppos = lane < pcnt ? pos[nbase + lane] : 0;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    double v1 = 0.0;
    double v2 = 0.0;
    if (valid) {
      const double* a = av + (u64)(mpos & 0x7fffffffu) * 9;
      bool tr = (mpos >> 31) != 0u;
      double x0 = x[(u64)col * 3 + 0];
      double x1 = x[(u64)col * 3 + 1];
      double x2 = x[(u64)col * 3 + 2];
      double e0 = a[0];
      double e1 = a[1];
      double e2 = a[2];
      double e3 = a[3];
      double e4 = a[4];
      double e5 = a[5];
      double e6 = a[6];
      double e7 = a[7];
      double e8 = a[8];
      v0 = e0 * x0 + (tr ? e3 : e1) * x1 + (tr ? e6 : e2) * x2;
      v1 = (tr ? e1 : e3) * x0 + e4 * x1 + (tr ? e7 : e5) * x2;
      v2 = (tr ? e2 : e6) * x0 + (tr ? e5 : e7) * x1 + e8 * x2;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      double o2 = __shfl_up_sync(0xffffffffu, v2, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
        v2 = o2 + v2;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
      v2 = k2 + v2;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    k2 = __shfl_sync(0xffffffffu, v2, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 3;
      const double* br_ = bv + (u64)row * 3;
      if (row != head_row && row != tail_row) {
        yr[0] = 1.0 * br_[0] - 1.0 * (v0);
        yr[1] = 1.0 * br_[1] - 1.0 * (v1);
        yr[2] = 1.0 * br_[2] - 1.0 * (v2);
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 3;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 3;
        mine[0] = v0;
        mine[1] = v1;
        mine[2] = v2;
        __threadfence();
        if (atomicAdd(ticket + bw, 1u) == 1u) {
          __threadfence();
          ticket[bw] = 0u;
          double t0 = is_tail ? v0 : __ldcg(other + 0);
          double h0 = is_tail ? __ldcg(other + 0) : v0;
          double t1 = is_tail ? v1 : __ldcg(other + 1);
          double h1 = is_tail ? __ldcg(other + 1) : v1;
          double t2 = is_tail ? v2 : __ldcg(other + 2);
          double h2 = is_tail ? __ldcg(other + 2) : v2;
          yr[0] = 1.0 * br_[0] - 1.0 * (t0 + h0);
          yr[1] = 1.0 * br_[1] - 1.0 * (t1 + h1);
          yr[2] = 1.0 * br_[2] - 1.0 * (t2 + h2);
        }
      }
    }
    __syncwarp();
  }
}

// inverse of every 2x2 diagonal block (Gauss-Jordan, partial pivoting, as invert_in_place); a singular or missing block records its row in status[0]
extern "C" __global__ void ptap_jacobi_invert_2(const double* __restrict__ av, const unsigned int* __restrict__ diag_pos, double* __restrict__ dinv, unsigned int* __restrict__ status, unsigned int nrows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nrows) return;
  u32 k = diag_pos[i];
  if (k == 0xffffffffu) { atomicMax(status, 0xffffffffu - i); return; }
  double a[4];
  double scale = 0.0;
  for (int q = 0; q < 4; ++q) { a[q] = av[(u64)k * 4 + q]; scale = fmax(scale, fabs(a[q])); }
  if (!isfinite(scale) || scale == 0.0) { atomicMax(status, 0xffffffffu - i); return; }
  int perm[2];
  for (int q = 0; q < 2; ++q) perm[q] = q;
  for (int col = 0; col < 2; ++col) {
    int piv = col; double best = fabs(a[col * 2 + col]);
    for (int r = col + 1; r < 2; ++r) if (fabs(a[r * 2 + col]) > best) { best = fabs(a[r * 2 + col]); piv = r; }
    if (best <= 1e-14 * scale) { atomicMax(status, 0xffffffffu - i); return; }
    if (piv != col) {
      for (int j = 0; j < 2; ++j) { double t = a[piv * 2 + j]; a[piv * 2 + j] = a[col * 2 + j]; a[col * 2 + j] = t; }
      int t = perm[piv]; perm[piv] = perm[col]; perm[col] = t;
    }
    double inv = 1.0 / a[col * 2 + col];
    a[col * 2 + col] = 1.0;
    for (int j = 0; j < 2; ++j) a[col * 2 + j] *= inv;
    for (int r = 0; r < 2; ++r) {
      if (r != col) {
        double f = a[r * 2 + col];
        if (f != 0.0) {
          a[r * 2 + col] = 0.0;
          for (int j = 0; j < 2; ++j) a[r * 2 + j] -= f * a[col * 2 + j];
        }
      }
    }
  }
  int cols[2];
  for (int q = 0; q < 2; ++q) cols[perm[q]] = q;
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 2; ++j) dinv[(u64)i * 4 + r * 2 + j] = a[r * 2 + cols[j]];
}

// x += alpha D^-1 r + beta t (2x2 blocks; t unread when beta = 0), one thread per scalar
extern "C" __global__ void ptap_jacobi_update_2(const double* __restrict__ dinv, double alpha, const double* __restrict__ r, double beta, const double* __restrict__ t, double* __restrict__ x, unsigned int nrows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= (u64)nrows * 2) return;
  u64 i = s / 2; u32 q = (u32)(s % 2);
  const double* d = dinv + i * 4 + q * 2;
  const double* ri = r + i * 2;
  double y = 0.0;
  y = y + d[0] * ri[0];
  y = y + d[1] * ri[1];
  double v = alpha * y + (beta != 0.0 ? beta * t[s] : 0.0);
  x[s] = x[s] + v;
}

// scatter 2x2 block-CSR values into a zeroed row-major n x n matrix
extern "C" __global__ void ptap_densify_2(const double* __restrict__ av, const unsigned int* __restrict__ brow, const unsigned int* __restrict__ ci, double* __restrict__ dense, unsigned int nblocks, unsigned int n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nblocks * 4) return;
  u32 k = (u32)(t / 4), e = (u32)(t % 4);
  u64 i = (u64)brow[k] * 2 + e / 2;
  u64 j = (u64)ci[k] * 2 + e % 2;
  dense[i * n + j] = av[t];
}

// x += coef[alpha_at] D^-1 r + coef[beta_at] t (2x2 blocks; beta_at = 0xffffffff: no t term), one thread per scalar
extern "C" __global__ void ptap_jacobi_update_at_2(const double* __restrict__ dinv, const double* __restrict__ coef, unsigned int alpha_at, unsigned int beta_at, const double* __restrict__ r, const double* __restrict__ t, double* __restrict__ x, unsigned int nrows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= (u64)nrows * 2) return;
  double alpha = coef[alpha_at], beta = beta_at == 0xffffffffu ? 0.0 : coef[beta_at];
  u64 i = s / 2; u32 q = (u32)(s % 2);
  const double* d = dinv + i * 4 + q * 2;
  const double* ri = r + i * 2;
  double y = 0.0;
  y = y + d[0] * ri[0];
  y = y + d[1] * ri[1];
  double v = alpha * y + (beta != 0.0 ? beta * t[s] : 0.0);
  x[s] = x[s] + v;
}

// t = coef[alpha_at] D^-1 r; x = t (zero != 0) or x += t (2x2 blocks), one thread per scalar
extern "C" __global__ void ptap_jacobi_step_2(const double* __restrict__ dinv, const double* __restrict__ coef, unsigned int alpha_at, const double* __restrict__ r, double* __restrict__ t, double* __restrict__ x, unsigned int zero, unsigned int nrows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= (u64)nrows * 2) return;
  double alpha = coef[alpha_at];
  u64 i = s / 2; u32 q = (u32)(s % 2);
  const double* d = dinv + i * 4 + q * 2;
  const double* ri = r + i * 2;
  double y = 0.0;
  y = y + d[0] * ri[0];
  y = y + d[1] * ri[1];
  double v = 0.0 + (alpha * y + 0.0);
  t[s] = v;
  x[s] = (zero != 0u ? 0.0 : x[s]) + v;
}

// c = s[num_at] / s[den_at]; r = (-c) ap + r; z = D^-1 r; per-block partial sums of r . z (2x2 blocks, one thread per block row, 256 threads, grid-stride, fixed tree)
extern "C" __global__ void ptap_lanczos_step_2(const double* __restrict__ s, unsigned int num_at, unsigned int den_at, const double* __restrict__ dinv, const double* __restrict__ ap, double* __restrict__ r, double* __restrict__ z, double* __restrict__ part, unsigned long long nrows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double sh[256];
  double c = s[num_at] / s[den_at];
  double acc = 0.0;
  u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < nrows; i += stride) {
    double* ri = r + i * 2;
    const double* ai = ap + i * 2;
    const double* d = dinv + i * 4;
    double r0 = -c * ai[0] + 1.0 * ri[0];
    ri[0] = r0;
    double r1 = -c * ai[1] + 1.0 * ri[1];
    ri[1] = r1;
    {
      double y = 0.0;
      y = y + d[0] * r0;
      y = y + d[1] * r1;
      double v = 0.0 + (1.0 * y + 0.0);
      z[i * 2 + 0] = v;
      acc += r0 * v;
    }
    {
      double y = 0.0;
      y = y + d[2] * r0;
      y = y + d[3] * r1;
      double v = 0.0 + (1.0 * y + 0.0);
      z[i * 2 + 1] = v;
      acc += r1 * v;
    }
  }
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (u32 h = 128; h > 0; h >>= 1) { if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h]; __syncthreads(); }
  if (threadIdx.x == 0) part[blockIdx.x] = sh[0];
}

// inverse of every 3x3 diagonal block (Gauss-Jordan, partial pivoting, as invert_in_place); a singular or missing block records its row in status[0]
extern "C" __global__ void ptap_jacobi_invert_3(const double* __restrict__ av, const unsigned int* __restrict__ diag_pos, double* __restrict__ dinv, unsigned int* __restrict__ status, unsigned int nrows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nrows) return;
  u32 k = diag_pos[i];
  if (k == 0xffffffffu) { atomicMax(status, 0xffffffffu - i); return; }
  double a[9];
  double scale = 0.0;
  for (int q = 0; q < 9; ++q) { a[q] = av[(u64)k * 9 + q]; scale = fmax(scale, fabs(a[q])); }
  if (!isfinite(scale) || scale == 0.0) { atomicMax(status, 0xffffffffu - i); return; }
  int perm[3];
  for (int q = 0; q < 3; ++q) perm[q] = q;
  for (int col = 0; col < 3; ++col) {
    int piv = col; double best = fabs(a[col * 3 + col]);
    for (int r = col + 1; r < 3; ++r) if (fabs(a[r * 3 + col]) > best) { best = fabs(a[r * 3 + col]); piv = r; }
    if (best <= 1e-14 * scale) { atomicMax(status, 0xffffffffu - i); return; }
    if (piv != col) {
      for (int j = 0; j < 3; ++j) { double t = a[piv * 3 + j]; a[piv * 3 + j] = a[col * 3 + j]; a[col * 3 + j] = t; }
      int t = perm[piv]; perm[piv] = perm[col]; perm[col] = t;
    }
    double inv = 1.0 / a[col * 3 + col];
    a[col * 3 + col] = 1.0;
    for (int j = 0; j < 3; ++j) a[col * 3 + j] *= inv;
    for (int r = 0; r < 3; ++r) {
      if (r != col) {
        double f = a[r * 3 + col];
        if (f != 0.0) {
          a[r * 3 + col] = 0.0;
          for (int j = 0; j < 3; ++j) a[r * 3 + j] -= f * a[col * 3 + j];
        }
      }
    }
  }
  int cols[3];
  for (int q = 0; q < 3; ++q) cols[perm[q]] = q;
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < 3; ++j) dinv[(u64)i * 9 + r * 3 + j] = a[r * 3 + cols[j]];
}

// x += alpha D^-1 r + beta t (3x3 blocks; t unread when beta = 0), one thread per scalar
extern "C" __global__ void ptap_jacobi_update_3(const double* __restrict__ dinv, double alpha, const double* __restrict__ r, double beta, const double* __restrict__ t, double* __restrict__ x, unsigned int nrows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= (u64)nrows * 3) return;
  u64 i = s / 3; u32 q = (u32)(s % 3);
  const double* d = dinv + i * 9 + q * 3;
  const double* ri = r + i * 3;
  double y = 0.0;
  y = y + d[0] * ri[0];
  y = y + d[1] * ri[1];
  y = y + d[2] * ri[2];
  double v = alpha * y + (beta != 0.0 ? beta * t[s] : 0.0);
  x[s] = x[s] + v;
}

// scatter 3x3 block-CSR values into a zeroed row-major n x n matrix
extern "C" __global__ void ptap_densify_3(const double* __restrict__ av, const unsigned int* __restrict__ brow, const unsigned int* __restrict__ ci, double* __restrict__ dense, unsigned int nblocks, unsigned int n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nblocks * 9) return;
  u32 k = (u32)(t / 9), e = (u32)(t % 9);
  u64 i = (u64)brow[k] * 3 + e / 3;
  u64 j = (u64)ci[k] * 3 + e % 3;
  dense[i * n + j] = av[t];
}

// x += coef[alpha_at] D^-1 r + coef[beta_at] t (3x3 blocks; beta_at = 0xffffffff: no t term), one thread per scalar
extern "C" __global__ void ptap_jacobi_update_at_3(const double* __restrict__ dinv, const double* __restrict__ coef, unsigned int alpha_at, unsigned int beta_at, const double* __restrict__ r, const double* __restrict__ t, double* __restrict__ x, unsigned int nrows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= (u64)nrows * 3) return;
  double alpha = coef[alpha_at], beta = beta_at == 0xffffffffu ? 0.0 : coef[beta_at];
  u64 i = s / 3; u32 q = (u32)(s % 3);
  const double* d = dinv + i * 9 + q * 3;
  const double* ri = r + i * 3;
  double y = 0.0;
  y = y + d[0] * ri[0];
  y = y + d[1] * ri[1];
  y = y + d[2] * ri[2];
  double v = alpha * y + (beta != 0.0 ? beta * t[s] : 0.0);
  x[s] = x[s] + v;
}

// t = coef[alpha_at] D^-1 r; x = t (zero != 0) or x += t (3x3 blocks), one thread per scalar
extern "C" __global__ void ptap_jacobi_step_3(const double* __restrict__ dinv, const double* __restrict__ coef, unsigned int alpha_at, const double* __restrict__ r, double* __restrict__ t, double* __restrict__ x, unsigned int zero, unsigned int nrows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= (u64)nrows * 3) return;
  double alpha = coef[alpha_at];
  u64 i = s / 3; u32 q = (u32)(s % 3);
  const double* d = dinv + i * 9 + q * 3;
  const double* ri = r + i * 3;
  double y = 0.0;
  y = y + d[0] * ri[0];
  y = y + d[1] * ri[1];
  y = y + d[2] * ri[2];
  double v = 0.0 + (alpha * y + 0.0);
  t[s] = v;
  x[s] = (zero != 0u ? 0.0 : x[s]) + v;
}

// c = s[num_at] / s[den_at]; r = (-c) ap + r; z = D^-1 r; per-block partial sums of r . z (3x3 blocks, one thread per block row, 256 threads, grid-stride, fixed tree)
extern "C" __global__ void ptap_lanczos_step_3(const double* __restrict__ s, unsigned int num_at, unsigned int den_at, const double* __restrict__ dinv, const double* __restrict__ ap, double* __restrict__ r, double* __restrict__ z, double* __restrict__ part, unsigned long long nrows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double sh[256];
  double c = s[num_at] / s[den_at];
  double acc = 0.0;
  u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < nrows; i += stride) {
    double* ri = r + i * 3;
    const double* ai = ap + i * 3;
    const double* d = dinv + i * 9;
    double r0 = -c * ai[0] + 1.0 * ri[0];
    ri[0] = r0;
    double r1 = -c * ai[1] + 1.0 * ri[1];
    ri[1] = r1;
    double r2 = -c * ai[2] + 1.0 * ri[2];
    ri[2] = r2;
    {
      double y = 0.0;
      y = y + d[0] * r0;
      y = y + d[1] * r1;
      y = y + d[2] * r2;
      double v = 0.0 + (1.0 * y + 0.0);
      z[i * 3 + 0] = v;
      acc += r0 * v;
    }
    {
      double y = 0.0;
      y = y + d[3] * r0;
      y = y + d[4] * r1;
      y = y + d[5] * r2;
      double v = 0.0 + (1.0 * y + 0.0);
      z[i * 3 + 1] = v;
      acc += r1 * v;
    }
    {
      double y = 0.0;
      y = y + d[6] * r0;
      y = y + d[7] * r1;
      y = y + d[8] * r2;
      double v = 0.0 + (1.0 * y + 0.0);
      z[i * 3 + 2] = v;
      acc += r2 * v;
    }
  }
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (u32 h = 128; h > 0; h >>= 1) { if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h]; __syncthreads(); }
  if (threadIdx.x == 0) part[blockIdx.x] = sh[0];
}

