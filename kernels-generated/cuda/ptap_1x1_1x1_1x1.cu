typedef unsigned int u32;
typedef unsigned long long u64;
// R = P^T, 1x1 blocks gathered from transposed 1x1 blocks of P
extern "C" __global__ void ptap_gather_r_1x1(const double* __restrict__ pv, const unsigned int* __restrict__ src, double* __restrict__ rv, unsigned int nblocks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nblocks * 1) return;
  u32 b = (u32)(t / 1); u32 e = (u32)(t % 1);
  u32 i = e / 1, j = e % 1;
  rv[t] = pv[(u64)src[b] * 1 + j * 1 + i];
}

// two-pass stage C = X Y (1x1 by 1x1), one thread per output scalar
extern "C" __global__ void ptap_row_owner_1x1x1(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ x_rp, const unsigned int* __restrict__ x_ci, const unsigned int* __restrict__ y_rp, const unsigned int* __restrict__ y_ci, const unsigned int* __restrict__ c_row, const unsigned int* __restrict__ c_ci, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nslots * 1) return;
  u32 s = (u32)(t / 1); u32 e = (u32)(t % 1);
  u32 i = e / 1, j = e % 1;
  u32 row = c_row[s], col = c_ci[s];
  double acc = 0.0;
  for (u32 kx = x_rp[row]; kx < x_rp[row + 1]; ++kx) {
    u32 l = x_ci[kx];
    u32 lo = y_rp[l], hi = y_rp[l + 1], end = hi;
    while (lo < hi) { u32 mid = (lo + hi) >> 1; if (y_ci[mid] < col) lo = mid + 1; else hi = mid; }
    if (lo < end && y_ci[lo] == col) {
      const double* xb = xv + (u64)kx * 1;
      const double* yb = yv + (u64)lo * 1;
      acc = acc + xb[(i)*1+(0)] * yb[0 * 1 + j];
    }
  }
  cv[t] = acc;
}

// slot-tiled stage (1x1 by 1x1), 128 slots per block, register accumulators
extern "C" __global__ void ptap_slot_tiled_1x1x1(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double tile[128 * 1];
  u32 s0 = blockIdx.x * 128;
  u32 s = s0 + threadIdx.x;
  double a0 = 0.0;
  if (s < nslots) {
    for (u32 q = ptr[s]; q < ptr[s + 1]; ++q) {
      const double* xb = xv + (u64)rx[q] * 1;
      const double* yb = yv + (u64)ry[q] * 1;
      double y0_0 = yb[0];
      { double x = xb[(0)*1+(0)];
        a0 = a0 + x * y0_0;
      }
    }
  }
  tile[threadIdx.x * 1 + 0] = a0;
  __syncthreads();
  u32 valid = nslots - s0 < 128 ? nslots - s0 : 128;
  for (u32 e = threadIdx.x; e < valid * 1; e += 128) cv[(u64)s0 * 1 + e] = tile[e];
}

// column-split stage (1x1 by 1x1), 1 lanes per slot, 32 slots per warp, one window per block, x staged in shared memory, 2 contributions per step, 1 indices per fetch
extern "C" __global__ void ptap_column_split_1x1x1(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots, unsigned int window) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  extern __shared__ double2 cs_smem[];
  u32 lane = threadIdx.x & 31, gw = lane / 1;
  if (gw >= 32) return;
  u32 j = lane - gw * 1;
  u32 g = (threadIdx.x >> 5) * 32 + gw;
  if (g >= window) return;
  u32 idx = blockIdx.x * window + g;
  if (idx >= nslots) return;
  u32 s = order[idx];
  double* sx = (double*)((char*)cs_smem + (u64)g * 48);
  u32* si = (u32*)(sx + 4);
  const u32 gm = 1u << (gw * 1);
  double c0 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 1) {
    u32 cnt = q1 - q0 < 1 ? q1 - q0 : 1;
    { u32 e = 0 + j; if (e < cnt) { si[e] = rx[q0 + e]; si[1 + e] = ry[q0 + e]; } }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double y0_0 = 0.0;
      {
        const double* xs_g = (const double*)(xv + (u64)si[t + 0] * 1);
        const double* yb = yv + (u64)si[1 + t + 0] * 1;
        double* xs_s = (double*)(sx + 0);
        xs_s[0 + j] = xs_g[0 + j];
        y0_0 = yb[0 * 1 + j];
      }
      double y1_0 = 0.0;
      if (t + 1 < cnt) {
        const double* xs_g = (const double*)(xv + (u64)si[t + 1] * 1);
        const double* yb = yv + (u64)si[1 + t + 1] * 1;
        double* xs_s = (double*)(sx + 2);
        xs_s[0 + j] = xs_g[0 + j];
        y1_0 = yb[0 * 1 + j];
      }
      __syncwarp(gm);
      double2 x0_0 = ((const double2*)(sx + 0))[0];
      c0 = c0 + x0_0.x * y0_0;
      if (t + 1 < cnt) {
      double2 x1_0 = ((const double2*)(sx + 2))[0];
      c0 = c0 + x1_0.x * y1_0;
      }
      __syncwarp(gm);
    }
  }
  cv[(u64)s * 1 + 0 + j] = c0;
}

// flat-stream stage (1x1 by 1x1), one warp per record tile
extern "C" __global__ void ptap_flat_stream_1x1x1(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ rslot, const unsigned int* __restrict__ tile_rows, const unsigned int* __restrict__ tile_records, const unsigned int* __restrict__ c_rp, double* __restrict__ cv, unsigned int ntiles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u32 w = (u32)(((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (w >= ntiles) return;
  u64 e0 = (u64)c_rp[tile_rows[w]] * 1, e1 = (u64)c_rp[tile_rows[w + 1]] * 1;
  for (u64 e = e0 + lane; e < e1; e += 32) cv[e] = 0.0;
  __syncwarp();
  for (u32 q = tile_records[w]; q < tile_records[w + 1]; ++q) {
    const double* xb = xv + (u64)rx[q] * 1;
    const double* yb = yv + (u64)ry[q] * 1;
    double* cb = cv + (u64)rslot[q] * 1;
    for (u32 e = lane; e < 1; e += 32) {
      u32 i = e / 1, j = e % 1;
      double c = cb[e];
      c = c + xb[(i)*1+(0)] * yb[0 * 1 + j];
      cb[e] = c;
    }
  }
}

// lane-tiled stage (1x1 by 1x1), 1 lanes per slot each owning 1x1 outputs, 32 slots per warp, operands read straight into registers, 2 contributions per step
extern "C" __global__ void ptap_lane_tiled_1x1x1(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ u32 lt_idx[256 * 2];
  u32 lane = threadIdx.x & 31, gw = lane / 1;
  if (gw >= 32) return;
  u32 r = lane - gw * 1;
  u32 ti = r / 1, tj = r - ti * 1;
  u32 gl = (threadIdx.x >> 5) * 32 + gw;
  u32 idx = blockIdx.x * 256 + gl;
  if (idx >= nslots) return;
  u32 s = order[idx];
  u32* si = lt_idx + gl * 2;
  const u32 gm = 1u << (gw * 1);
  u32 xo = ti * 1;
  u32 yo = tj * 1;
  double c0_0 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 1) {
    u32 cnt = q1 - q0 < 1 ? q1 - q0 : 1;
    if (r < cnt) { si[r] = rx[q0 + r]; si[1 + r] = ry[q0 + r]; }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double x0_0_0 = 0.0;
      double y0_0_0 = 0.0;
      {
        const double* xb = xv + (u64)si[t + 0] * 1 + xo;
        const double* yb = yv + (u64)si[1 + t + 0] * 1 + yo;
        y0_0_0 = yb[0];
        x0_0_0 = xb[0];
      }
      double x1_0_0 = 0.0;
      double y1_0_0 = 0.0;
      if (t + 1 < cnt) {
        const double* xb = xv + (u64)si[t + 1] * 1 + xo;
        const double* yb = yv + (u64)si[1 + t + 1] * 1 + yo;
        y1_0_0 = yb[0];
        x1_0_0 = xb[0];
      }
      c0_0 = c0_0 + x0_0_0 * y0_0_0;
      if (t + 1 < cnt) {
      c0_0 = c0_0 + x1_0_0 * y1_0_0;
      }
    }
    __syncwarp(gm);
  }
  double* cb = cv + (u64)s * 1;
  cb[(ti * 1 + 0) * 1 + tj * 1 + 0] = c0_0;
}

// k-split stage (1x1 by 1x1), 1 lanes per slot each owning inner index kk and 1 columns, 32 slots per warp, 8 warps per block, 2 contributions per step, partials added in kk order
extern "C" __global__ void ptap_k_split_1x1x1(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  extern __shared__ double2 ks_smem[];
  u32 lane = threadIdx.x & 31, gw = lane / 1;
  if (gw >= 32) return;
  u32 r = lane - gw * 1;
  u32 kk = r / 1, c = r - kk * 1;
  u32 gl = (threadIdx.x >> 5) * 32 + gw;
  u32 idx = blockIdx.x * 256 + gl;
  if (idx >= nslots) return;
  u32 s = order[idx];
  double* sx = (double*)((char*)ks_smem + (u64)gl * 136);
  u32* si = (u32*)(sx + 4);
  const u32 gm = 1u << (gw * 1);
  u32 yo = kk * 1 + c * 1;
  double c0_0 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 1) {
    u32 cnt = q1 - q0 < 1 ? q1 - q0 : 1;
    if (r < cnt) { si[r] = rx[q0 + r]; si[1 + r] = ry[q0 + r]; }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double y0_0 = 0.0;
      {
        const double* xs_g = (const double*)(xv + (u64)si[t + 0] * 1);
        double* xs_s = (double*)(sx + 0);
        const double* yb = yv + (u64)si[1 + t + 0] * 1 + yo;
        xs_s[0 + r] = xs_g[0 + r];
        y0_0 = yb[0];
      }
      double y1_0 = 0.0;
      if (t + 1 < cnt) {
        const double* xs_g = (const double*)(xv + (u64)si[t + 1] * 1);
        double* xs_s = (double*)(sx + 2);
        const double* yb = yv + (u64)si[1 + t + 1] * 1 + yo;
        xs_s[0 + r] = xs_g[0 + r];
        y1_0 = yb[0];
      }
      __syncwarp(gm);
      { double x = sx[0 + 0 + kk];
        c0_0 = c0_0 + x * y0_0;
      }
      if (t + 1 < cnt) {
      { double x = sx[2 + 0 + kk];
        c0_0 = c0_0 + x * y1_0;
      }
      }
      __syncwarp(gm);
    }
  }
  double* part = sx;
  part[(kk * 1 + 0) * 1 + c * 1 + 0] = c0_0;
  __syncwarp(gm);
  double* cb = cv + (u64)s * 1;
  for (u32 e = r; e < 1; e += 1) {
    double v = part[e];
    cb[e] = v;
  }
}

// tensor-core stage (1x1 by 1x1), one warp per slot, 1 FP64 m8n8k4 MMA per contribution, 4 contributions per step
extern "C" __global__ void ptap_mma_1x1x1(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
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
  const double* xl0 = xv + (r < 1 && (0 + t) < 1 ? r * 1 + (0 + t) : 0);
  const double* yl0 = yv + (r < 1 && (0 + t) < 1 ? (0 + t) * 1 + r : 0);
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 1 ? 1.0 : 0.0;
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
      double a0_0 = __ldg(xl0 + (u64)xi0 * 1), b0_0 = __ldg(yl0 + (u64)yi0 * 1) * ym0;
      u32 xi1 = __shfl_sync(0xffffffffu, idx, u + 1), yi1 = __shfl_sync(0xffffffffu, idx, 16 + u + 1);
      double a1_0 = __ldg(xl0 + (u64)xi1 * 1), b1_0 = __ldg(yl0 + (u64)yi1 * 1) * ym0;
      u32 xi2 = __shfl_sync(0xffffffffu, idx, u + 2), yi2 = __shfl_sync(0xffffffffu, idx, 16 + u + 2);
      double a2_0 = __ldg(xl0 + (u64)xi2 * 1), b2_0 = __ldg(yl0 + (u64)yi2 * 1) * ym0;
      u32 xi3 = __shfl_sync(0xffffffffu, idx, u + 3), yi3 = __shfl_sync(0xffffffffu, idx, 16 + u + 3);
      double a3_0 = __ldg(xl0 + (u64)xi3 * 1), b3_0 = __ldg(yl0 + (u64)yi3 * 1) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a3_0), "d"(b3_0));
    }
    for (; u < cnt; ++u) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = __ldg(xl0 + (u64)xi0 * 1), b0_0 = __ldg(yl0 + (u64)yi0 * 1) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    }
  }
  u32 c0 = 2 * t;
  double* cb = cv + (u64)s * 1;
  if (r < 1) { if (c0 < 1) cb[r * 1 + c0] = d0; if (c0 + 1 < 1) cb[r * 1 + c0 + 1] = d1; }
#else
  __trap();
#endif
}

// tensor-pair stage (1x1 by 1x1, Packed), one warp per unit of 2 slot(s), 1 FP64 m8n8k4 MMA per entry and side, 4 entries per step, the last ones as one guarded step
extern "C" __global__ void ptap_mma2_1x1x1(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ uptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (w >= nunits) return;
  u32 r = lane >> 2, t = lane & 3;
  const bool av0 = (r & 3) < 1 && (0 + t) < 1, bv0 = r < 1 && (0 + t) < 1;
  const double* xl0 = xv + (av0 ? (r & 3) * 1 + (0 + t) : 0);
  const double* yl0 = yv + (bv0 ? (0 + t) * 1 + r : (r < 1 ? r : 0));
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 1 ? 1.0 : 0.0;
  const uint2* ep = (const uint2*)ent;
  double d0 = 0.0, d1 = 0.0;
  u32 q = uptr[w], q1 = uptr[w + 1];
  for (; q + 4 <= q1; q += 4) {
    uint2 e0 = __ldg(ep + (2 * q + (r >> 2)) + 0);
    uint2 e1 = __ldg(ep + (2 * q + (r >> 2)) + 2);
    uint2 e2 = __ldg(ep + (2 * q + (r >> 2)) + 4);
    uint2 e3 = __ldg(ep + (2 * q + (r >> 2)) + 6);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 1) * ym0;
    if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)e0.x * 1);
    double b1_0 = 0.0, a1_0 = 0.0;
    b1_0 = __ldg(yl0 + (u64)e1.y * 1) * ym0;
    if (av0 && e1.x != 0xffffffffu) a1_0 = __ldg(xl0 + (u64)e1.x * 1);
    double b2_0 = 0.0, a2_0 = 0.0;
    b2_0 = __ldg(yl0 + (u64)e2.y * 1) * ym0;
    if (av0 && e2.x != 0xffffffffu) a2_0 = __ldg(xl0 + (u64)e2.x * 1);
    double b3_0 = 0.0, a3_0 = 0.0;
    b3_0 = __ldg(yl0 + (u64)e3.y * 1) * ym0;
    if (av0 && e3.x != 0xffffffffu) a3_0 = __ldg(xl0 + (u64)e3.x * 1);
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
    b0_0 = __ldg(yl0 + (u64)e0.y * 1) * ym0;
    if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)e0.x * 1);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 1) * ym0; if (av0 && e1.x != 0xffffffffu) a1_0 = __ldg(xl0 + (u64)e1.x * 1); }
    double b2_0 = 0.0, a2_0 = 0.0;
    if (2 < rem) { b2_0 = __ldg(yl0 + (u64)e2.y * 1) * ym0; if (av0 && e2.x != 0xffffffffu) a2_0 = __ldg(xl0 + (u64)e2.x * 1); }
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    if (1 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    if (2 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
  }
  u32 c0 = 2 * t;
  {
  u32 s = uslot[2 * w + (r >> 2)];
  double* cb = cv + (u64)s * 1;
  if (s != 0xffffffffu && (r & 3) < 1) {
    if (c0 < 1) cb[(r & 3) * 1 + c0] = d0; if (c0 + 1 < 1) cb[(r & 3) * 1 + c0 + 1] = d1;
  }
  }
#else
  __trap();
#endif
}

// tensor-core stage (1x1 by 1x1), a block's warps interleaved over `chunk` consecutive slots, 1 FP64 m8n8k4 MMA per contribution, 4 contributions per step, a run's last x block halved where its end bound has bit 31
extern "C" __global__ void ptap_mmah_1x1x1(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots, unsigned int chunk) {
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
  const double* xl0 = xv + (r < 1 && (0 + t) < 1 ? r * 1 + (0 + t) : 0);
  const double* yl0 = yv + (r < 1 && (0 + t) < 1 ? (0 + t) * 1 + r : 0);
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 1 ? 1.0 : 0.0;
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
      double a0_0 = __ldg(xl0 + (u64)xi0 * 1), b0_0 = __ldg(yl0 + (u64)yi0 * 1) * ym0;
      u32 xi1 = __shfl_sync(0xffffffffu, idx, u + 1), yi1 = __shfl_sync(0xffffffffu, idx, 16 + u + 1);
      double a1_0 = __ldg(xl0 + (u64)xi1 * 1), b1_0 = __ldg(yl0 + (u64)yi1 * 1) * ym0;
      u32 xi2 = __shfl_sync(0xffffffffu, idx, u + 2), yi2 = __shfl_sync(0xffffffffu, idx, 16 + u + 2);
      double a2_0 = __ldg(xl0 + (u64)xi2 * 1), b2_0 = __ldg(yl0 + (u64)yi2 * 1) * ym0;
      u32 xi3 = __shfl_sync(0xffffffffu, idx, u + 3), yi3 = __shfl_sync(0xffffffffu, idx, 16 + u + 3);
      double a3_0 = __ldg(xl0 + (u64)xi3 * 1), b3_0 = __ldg(yl0 + (u64)yi3 * 1) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a3_0), "d"(b3_0));
    }
    for (; u < ce; ++u) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = __ldg(xl0 + (u64)xi0 * 1), b0_0 = __ldg(yl0 + (u64)yi0 * 1) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    }
    if (u < cnt) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      xi0 &= 0x7fffffffu;
      double a0_0 = __ldg(xl0 + (u64)xi0 * 1), b0_0 = __ldg(yl0 + (u64)yi0 * 1) * ym0;
      d0 *= 2.0;
      d1 *= 2.0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      d0 *= 0.5;
      d1 *= 0.5;
    }
  }
  u32 c0 = 2 * t;
  double* cb = cv + (u64)s * 1;
  if (r < 1) { if (c0 < 1) cb[r * 1 + c0] = d0; if (c0 + 1 < 1) cb[r * 1 + c0 + 1] = d1; }
  }
#else
  __trap();
#endif
}

// tensor-pair stage (1x1 by 1x1, Packed), warps walking spans of units of 2 slot(s), 1 FP64 m8n8k4 MMA per entry and side, 4 entries per step, the last ones as one guarded step, x blocks flagged in bit 31 halved
extern "C" __global__ __launch_bounds__(128, 16) void ptap_mma2h_1x1x1(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ uptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits, unsigned int chunk, unsigned int inter) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 r = lane >> 2, t = lane & 3;
  const bool av0 = (r & 3) < 1 && (0 + t) < 1, bv0 = r < 1 && (0 + t) < 1;
  const double* xl0 = xv + (av0 ? (r & 3) * 1 + (0 + t) : 0);
  const double* yl0 = yv + (bv0 ? (0 + t) * 1 + r : (r < 1 ? r : 0));
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 1 ? 1.0 : 0.0;
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
    b0_0 = __ldg(yl0 + (u64)e0.y * 1) * ym0;
    if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)(e0.x & 0x7fffffffu) * 1);
    double b1_0 = 0.0, a1_0 = 0.0;
    b1_0 = __ldg(yl0 + (u64)e1.y * 1) * ym0;
    if (av0 && e1.x != 0xffffffffu) a1_0 = __ldg(xl0 + (u64)(e1.x & 0x7fffffffu) * 1);
    double b2_0 = 0.0, a2_0 = 0.0;
    b2_0 = __ldg(yl0 + (u64)e2.y * 1) * ym0;
    if (av0 && e2.x != 0xffffffffu) a2_0 = __ldg(xl0 + (u64)(e2.x & 0x7fffffffu) * 1);
    double b3_0 = 0.0, a3_0 = 0.0;
    b3_0 = __ldg(yl0 + (u64)e3.y * 1) * ym0;
    if (av0 && e3.x != 0xffffffffu) a3_0 = __ldg(xl0 + (u64)(e3.x & 0x7fffffffu) * 1);
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
    b0_0 = __ldg(yl0 + (u64)e0.y * 1) * ym0;
    if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)(e0.x & 0x7fffffffu) * 1);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 1) * ym0; if (av0 && e1.x != 0xffffffffu) a1_0 = __ldg(xl0 + (u64)(e1.x & 0x7fffffffu) * 1); }
    double b2_0 = 0.0, a2_0 = 0.0;
    if (2 < rem) { b2_0 = __ldg(yl0 + (u64)e2.y * 1) * ym0; if (av0 && e2.x != 0xffffffffu) a2_0 = __ldg(xl0 + (u64)(e2.x & 0x7fffffffu) * 1); }
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
    b0_0 = __ldg(yl0 + (u64)e0.y * 1) * ym0;
    if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)(e0.x & 0x7fffffffu) * 1);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 1) * ym0; if (av0 && e1.x != 0xffffffffu) a1_0 = __ldg(xl0 + (u64)(e1.x & 0x7fffffffu) * 1); }
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
  double* cb = cv + (u64)s * 1;
  if (s != 0xffffffffu && (r & 3) < 1) {
    if (c0 < 1) cb[(r & 3) * 1 + c0] = d0; if (c0 + 1 < 1) cb[(r & 3) * 1 + c0 + 1] = d1;
  }
  }
  }
  }
#else
  __trap();
#endif
}

// C = X + X^T in place over 1x1 blocks, one thread per slot element
extern "C" __global__ void ptap_symmetrize_1x1(double* __restrict__ cv, const unsigned int* __restrict__ tr, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (u64)nslots * 1) return;
  u32 s = (u32)(i / 1), e = (u32)(i % 1), a = e / 1, b = e % 1;
  u32 t = tr[s];
  if (s < t || (s == t && a <= b)) {
    double* x = cv + (u64)s * 1 + a * 1 + b;
    double* y = cv + (u64)t * 1 + b * 1 + a;
    double v = *x + *y;
    *x = v;
    *y = v;
  }
}

// C = X + X^T over 1x1 blocks from X's chunk sums, one thread per slot element
extern "C" __global__ void ptap_symsplit_1x1(double* __restrict__ cv, const double* __restrict__ xs, const unsigned int* __restrict__ first, const unsigned int* __restrict__ tr, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (u64)nslots * 1) return;
  u32 s = (u32)(i / 1), e = (u32)(i % 1), a = e / 1, b = e % 1;
  u32 t = tr[s];
  u32 c = first[s], c1 = first[s + 1];
  double x = __ldg(xs + (u64)c * 1 + a * 1 + b);
  for (++c; c < c1; ++c) x += __ldg(xs + (u64)c * 1 + a * 1 + b);
  c = first[t]; c1 = first[t + 1];
  double y = __ldg(xs + (u64)c * 1 + b * 1 + a);
  for (++c; c < c1; ++c) y += __ldg(xs + (u64)c * 1 + b * 1 + a);
  cv[(u64)s * 1 + e] = x + y;
}

// folded P^T W' stage (1x1 by 1x1), one warp per slot (I, J) of the upper triangle summing X_IJ + X_JI^T, 1 FP64 m8n8k4 MMA per entry, 4 entries per step, each half's last ones as one guarded step; writes (I, J) and (J, I)
extern "C" __global__ void ptap_mma2f_1x1x1t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ hptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (w >= nunits) return;
  u32 r = lane >> 2, t = lane & 3;
  const bool av0 = r < 1 && (0 + t) < 1, bv0 = r < 1 && (0 + t) < 1;
  const double* xl0 = xv + (av0 ? (0 + t) * 1 + r : (r < 1 ? r : 0));
  const double* yl0 = yv + (bv0 ? (0 + t) * 1 + r : (r < 1 ? r : 0));
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 1 ? 1.0 : 0.0;
  const uint2* ep = (const uint2*)ent;
  double d0 = 0.0, d1 = 0.0;
  u32 q = hptr[2 * w], q1 = hptr[2 * w + 1];
  for (; q + 4 <= q1; q += 4) {
    uint2 e0 = __ldg(ep + q + 0);
    uint2 e1 = __ldg(ep + q + 1);
    uint2 e2 = __ldg(ep + q + 2);
    uint2 e3 = __ldg(ep + q + 3);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 1) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 1);
    double b1_0 = 0.0, a1_0 = 0.0;
    b1_0 = __ldg(yl0 + (u64)e1.y * 1) * ym0;
    a1_0 = __ldg(xl0 + (u64)e1.x * 1);
    double b2_0 = 0.0, a2_0 = 0.0;
    b2_0 = __ldg(yl0 + (u64)e2.y * 1) * ym0;
    a2_0 = __ldg(xl0 + (u64)e2.x * 1);
    double b3_0 = 0.0, a3_0 = 0.0;
    b3_0 = __ldg(yl0 + (u64)e3.y * 1) * ym0;
    a3_0 = __ldg(xl0 + (u64)e3.x * 1);
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
    b0_0 = __ldg(yl0 + (u64)e0.y * 1) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 1);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 1) * ym0; a1_0 = __ldg(xl0 + (u64)e1.x * 1); }
    double b2_0 = 0.0, a2_0 = 0.0;
    if (2 < rem) { b2_0 = __ldg(yl0 + (u64)e2.y * 1) * ym0; a2_0 = __ldg(xl0 + (u64)e2.x * 1); }
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
    b0_0 = __ldg(yl0 + (u64)e0.y * 1) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 1);
    double b1_0 = 0.0, a1_0 = 0.0;
    b1_0 = __ldg(yl0 + (u64)e1.y * 1) * ym0;
    a1_0 = __ldg(xl0 + (u64)e1.x * 1);
    double b2_0 = 0.0, a2_0 = 0.0;
    b2_0 = __ldg(yl0 + (u64)e2.y * 1) * ym0;
    a2_0 = __ldg(xl0 + (u64)e2.x * 1);
    double b3_0 = 0.0, a3_0 = 0.0;
    b3_0 = __ldg(yl0 + (u64)e3.y * 1) * ym0;
    a3_0 = __ldg(xl0 + (u64)e3.x * 1);
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
    b0_0 = __ldg(yl0 + (u64)e0.y * 1) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 1);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 1) * ym0; a1_0 = __ldg(xl0 + (u64)e1.x * 1); }
    double b2_0 = 0.0, a2_0 = 0.0;
    if (2 < rem) { b2_0 = __ldg(yl0 + (u64)e2.y * 1) * ym0; a2_0 = __ldg(xl0 + (u64)e2.x * 1); }
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
  if (r < 1) {
    double* cb = cv + (u64)s0 * 1;
    if (c0 < 1) cb[r * 1 + c0] = d0; if (c0 + 1 < 1) cb[r * 1 + c0 + 1] = d1;
    if (s1 != 0xffffffffu) {
      double* ct = cv + (u64)s1 * 1;
      if (c0 < 1) ct[c0 * 1 + r] = d0; if (c0 + 1 < 1) ct[(c0 + 1) * 1 + r] = d1;
    }
  }
#else
  __trap();
#endif
}

// row-Gustavson stage (1x1 by 1x1), one warp per chunk of 32 output slots, 4 warps per block
extern "C" __global__ void ptap_row_gustavson_1x1x1(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ chunk_slot, const unsigned int* __restrict__ chunk_seg, const unsigned int* __restrict__ chunk_pos, const unsigned int* __restrict__ seg_x, const unsigned int* __restrict__ seg_y, const unsigned int* __restrict__ seg_n, const unsigned int* __restrict__ pos, double* __restrict__ cv, unsigned int nchunks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double rg_acc[4][32 * 1];
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u32 c = blockIdx.x * 4 + wl;
  if (c >= nchunks) return;
  double* acc = rg_acc[wl];
  u32 s0 = chunk_slot[c], ne = (chunk_slot[c + 1] - s0) * 1;
  for (u32 e = lane; e < ne; e += 32) acc[e] = 0.0;
  __syncwarp();
  const unsigned char* sn = (const unsigned char*)seg_n;
  const unsigned char* ps = (const unsigned char*)pos;
  u32 pb = chunk_pos[c];
  u32 g1 = chunk_seg[c + 1];
  for (u32 g = chunk_seg[c]; g < g1; ++g) {
    u32 cnt = sn[g];
    const double* xb = xv + (u64)seg_x[g] * 1;
    const double* yb0 = yv + (u64)seg_y[g] * 1;
    double x0 = __ldg(xb + 0);
    for (u32 t = lane; t < cnt * 1; t += 32) {
      u32 b = t / 1, j = t - b * 1;
      const double* yb = yb0 + (u64)b * 1;
      double* o = acc + (u32)ps[pb + b] * 1 + j;
      double y0 = __ldg(yb + 0 * 1 + j);
      { double a = o[0];
        a = a + x0 * y0;
        o[0] = a; }
    }
    pb += cnt;
    __syncwarp();
  }
  for (u32 e = lane; e < ne; e += 32) cv[(u64)s0 * 1 + e] = acc[e];
}

// outer-product scatter pass (1x1 by 1x1), atomic accumulation
extern "C" __global__ void ptap_scatter_1x1x1(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ rslot, double* __restrict__ cv, unsigned int nrecords) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nrecords * 1) return;
  u32 q = (u32)(t / 1); u32 e = (u32)(t % 1);
  u32 i = e / 1, j = e % 1;
  const double* xb = xv + (u64)rx[q] * 1;
  const double* yb = yv + (u64)ry[q] * 1;
  double v = 0.0;
  v = v + xb[(i)*1+(0)] * yb[0 * 1 + j];
  atomicAdd(cv + (u64)rslot[q] * 1 + e, v);
}

// slot-tiled stage (1x1 by 1x1), 128 slots per block, register accumulators
extern "C" __global__ void ptap_slot_tiled_1x1x1t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double tile[128 * 1];
  u32 s0 = blockIdx.x * 128;
  u32 s = s0 + threadIdx.x;
  double a0 = 0.0;
  if (s < nslots) {
    for (u32 q = ptr[s]; q < ptr[s + 1]; ++q) {
      const double* xb = xv + (u64)rx[q] * 1;
      const double* yb = yv + (u64)ry[q] * 1;
      double y0_0 = yb[0];
      { double x = xb[(0)*1+(0)];
        a0 = a0 + x * y0_0;
      }
    }
  }
  tile[threadIdx.x * 1 + 0] = a0;
  __syncthreads();
  u32 valid = nslots - s0 < 128 ? nslots - s0 : 128;
  for (u32 e = threadIdx.x; e < valid * 1; e += 128) cv[(u64)s0 * 1 + e] = tile[e];
}

// column-split stage (1x1 by 1x1), 1 lanes per slot, 32 slots per warp, one window per block, x staged in shared memory, 2 contributions per step, 1 indices per fetch
extern "C" __global__ void ptap_column_split_1x1x1t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots, unsigned int window) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  extern __shared__ double2 cs_smem[];
  u32 lane = threadIdx.x & 31, gw = lane / 1;
  if (gw >= 32) return;
  u32 j = lane - gw * 1;
  u32 g = (threadIdx.x >> 5) * 32 + gw;
  if (g >= window) return;
  u32 idx = blockIdx.x * window + g;
  if (idx >= nslots) return;
  u32 s = order[idx];
  double* sx = (double*)((char*)cs_smem + (u64)g * 48);
  u32* si = (u32*)(sx + 4);
  const u32 gm = 1u << (gw * 1);
  double c0 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 1) {
    u32 cnt = q1 - q0 < 1 ? q1 - q0 : 1;
    { u32 e = 0 + j; if (e < cnt) { si[e] = rx[q0 + e]; si[1 + e] = ry[q0 + e]; } }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double y0_0 = 0.0;
      {
        const double* xs_g = (const double*)(xv + (u64)si[t + 0] * 1);
        const double* yb = yv + (u64)si[1 + t + 0] * 1;
        double* xs_s = (double*)(sx + 0);
        xs_s[0 + j] = xs_g[0 + j];
        y0_0 = yb[0 * 1 + j];
      }
      double y1_0 = 0.0;
      if (t + 1 < cnt) {
        const double* xs_g = (const double*)(xv + (u64)si[t + 1] * 1);
        const double* yb = yv + (u64)si[1 + t + 1] * 1;
        double* xs_s = (double*)(sx + 2);
        xs_s[0 + j] = xs_g[0 + j];
        y1_0 = yb[0 * 1 + j];
      }
      __syncwarp(gm);
      double2 x0_0 = ((const double2*)(sx + 0))[0];
      c0 = c0 + x0_0.x * y0_0;
      if (t + 1 < cnt) {
      double2 x1_0 = ((const double2*)(sx + 2))[0];
      c0 = c0 + x1_0.x * y1_0;
      }
      __syncwarp(gm);
    }
  }
  cv[(u64)s * 1 + 0 + j] = c0;
}

// flat-stream stage (1x1 by 1x1), one warp per record tile
extern "C" __global__ void ptap_flat_stream_1x1x1t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ rslot, const unsigned int* __restrict__ tile_rows, const unsigned int* __restrict__ tile_records, const unsigned int* __restrict__ c_rp, double* __restrict__ cv, unsigned int ntiles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u32 w = (u32)(((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (w >= ntiles) return;
  u64 e0 = (u64)c_rp[tile_rows[w]] * 1, e1 = (u64)c_rp[tile_rows[w + 1]] * 1;
  for (u64 e = e0 + lane; e < e1; e += 32) cv[e] = 0.0;
  __syncwarp();
  for (u32 q = tile_records[w]; q < tile_records[w + 1]; ++q) {
    const double* xb = xv + (u64)rx[q] * 1;
    const double* yb = yv + (u64)ry[q] * 1;
    double* cb = cv + (u64)rslot[q] * 1;
    for (u32 e = lane; e < 1; e += 32) {
      u32 i = e / 1, j = e % 1;
      double c = cb[e];
      c = c + xb[(0)*1+(i)] * yb[0 * 1 + j];
      cb[e] = c;
    }
  }
}

// lane-tiled stage (1x1 by 1x1), 1 lanes per slot each owning 1x1 outputs, 32 slots per warp, operands read straight into registers, 2 contributions per step
extern "C" __global__ void ptap_lane_tiled_1x1x1t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ u32 lt_idx[256 * 2];
  u32 lane = threadIdx.x & 31, gw = lane / 1;
  if (gw >= 32) return;
  u32 r = lane - gw * 1;
  u32 ti = r / 1, tj = r - ti * 1;
  u32 gl = (threadIdx.x >> 5) * 32 + gw;
  u32 idx = blockIdx.x * 256 + gl;
  if (idx >= nslots) return;
  u32 s = order[idx];
  u32* si = lt_idx + gl * 2;
  const u32 gm = 1u << (gw * 1);
  u32 xo = ti * 1;
  u32 yo = tj * 1;
  double c0_0 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 1) {
    u32 cnt = q1 - q0 < 1 ? q1 - q0 : 1;
    if (r < cnt) { si[r] = rx[q0 + r]; si[1 + r] = ry[q0 + r]; }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double x0_0_0 = 0.0;
      double y0_0_0 = 0.0;
      {
        const double* xb = xv + (u64)si[t + 0] * 1 + xo;
        const double* yb = yv + (u64)si[1 + t + 0] * 1 + yo;
        y0_0_0 = yb[0];
        x0_0_0 = xb[0];
      }
      double x1_0_0 = 0.0;
      double y1_0_0 = 0.0;
      if (t + 1 < cnt) {
        const double* xb = xv + (u64)si[t + 1] * 1 + xo;
        const double* yb = yv + (u64)si[1 + t + 1] * 1 + yo;
        y1_0_0 = yb[0];
        x1_0_0 = xb[0];
      }
      c0_0 = c0_0 + x0_0_0 * y0_0_0;
      if (t + 1 < cnt) {
      c0_0 = c0_0 + x1_0_0 * y1_0_0;
      }
    }
    __syncwarp(gm);
  }
  double* cb = cv + (u64)s * 1;
  cb[(ti * 1 + 0) * 1 + tj * 1 + 0] = c0_0;
}

// k-split stage (1x1 by 1x1), 1 lanes per slot each owning inner index kk and 1 columns, 32 slots per warp, 8 warps per block, 2 contributions per step, partials added in kk order
extern "C" __global__ void ptap_k_split_1x1x1t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  extern __shared__ double2 ks_smem[];
  u32 lane = threadIdx.x & 31, gw = lane / 1;
  if (gw >= 32) return;
  u32 r = lane - gw * 1;
  u32 kk = r / 1, c = r - kk * 1;
  u32 gl = (threadIdx.x >> 5) * 32 + gw;
  u32 idx = blockIdx.x * 256 + gl;
  if (idx >= nslots) return;
  u32 s = order[idx];
  double* sx = (double*)((char*)ks_smem + (u64)gl * 136);
  u32* si = (u32*)(sx + 4);
  const u32 gm = 1u << (gw * 1);
  u32 yo = kk * 1 + c * 1;
  double c0_0 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 1) {
    u32 cnt = q1 - q0 < 1 ? q1 - q0 : 1;
    if (r < cnt) { si[r] = rx[q0 + r]; si[1 + r] = ry[q0 + r]; }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double y0_0 = 0.0;
      {
        const double* xs_g = (const double*)(xv + (u64)si[t + 0] * 1);
        double* xs_s = (double*)(sx + 0);
        const double* yb = yv + (u64)si[1 + t + 0] * 1 + yo;
        xs_s[0 + r] = xs_g[0 + r];
        y0_0 = yb[0];
      }
      double y1_0 = 0.0;
      if (t + 1 < cnt) {
        const double* xs_g = (const double*)(xv + (u64)si[t + 1] * 1);
        double* xs_s = (double*)(sx + 2);
        const double* yb = yv + (u64)si[1 + t + 1] * 1 + yo;
        xs_s[0 + r] = xs_g[0 + r];
        y1_0 = yb[0];
      }
      __syncwarp(gm);
      { double x = sx[0 + kk * 1 + 0];
        c0_0 = c0_0 + x * y0_0;
      }
      if (t + 1 < cnt) {
      { double x = sx[2 + kk * 1 + 0];
        c0_0 = c0_0 + x * y1_0;
      }
      }
      __syncwarp(gm);
    }
  }
  double* part = sx;
  part[(kk * 1 + 0) * 1 + c * 1 + 0] = c0_0;
  __syncwarp(gm);
  double* cb = cv + (u64)s * 1;
  for (u32 e = r; e < 1; e += 1) {
    double v = part[e];
    cb[e] = v;
  }
}

// tensor-core stage (1x1 by 1x1), one warp per slot, 1 FP64 m8n8k4 MMA per contribution, 4 contributions per step
extern "C" __global__ void ptap_mma_1x1x1t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
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
  const double* xl0 = xv + (r < 1 && (0 + t) < 1 ? (0 + t) * 1 + r : 0);
  const double* yl0 = yv + (r < 1 && (0 + t) < 1 ? (0 + t) * 1 + r : 0);
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 1 ? 1.0 : 0.0;
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
      double a0_0 = __ldg(xl0 + (u64)xi0 * 1), b0_0 = __ldg(yl0 + (u64)yi0 * 1) * ym0;
      u32 xi1 = __shfl_sync(0xffffffffu, idx, u + 1), yi1 = __shfl_sync(0xffffffffu, idx, 16 + u + 1);
      double a1_0 = __ldg(xl0 + (u64)xi1 * 1), b1_0 = __ldg(yl0 + (u64)yi1 * 1) * ym0;
      u32 xi2 = __shfl_sync(0xffffffffu, idx, u + 2), yi2 = __shfl_sync(0xffffffffu, idx, 16 + u + 2);
      double a2_0 = __ldg(xl0 + (u64)xi2 * 1), b2_0 = __ldg(yl0 + (u64)yi2 * 1) * ym0;
      u32 xi3 = __shfl_sync(0xffffffffu, idx, u + 3), yi3 = __shfl_sync(0xffffffffu, idx, 16 + u + 3);
      double a3_0 = __ldg(xl0 + (u64)xi3 * 1), b3_0 = __ldg(yl0 + (u64)yi3 * 1) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a3_0), "d"(b3_0));
    }
    for (; u < cnt; ++u) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = __ldg(xl0 + (u64)xi0 * 1), b0_0 = __ldg(yl0 + (u64)yi0 * 1) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    }
  }
  u32 c0 = 2 * t;
  double* cb = cv + (u64)s * 1;
  if (r < 1) { if (c0 < 1) cb[r * 1 + c0] = d0; if (c0 + 1 < 1) cb[r * 1 + c0 + 1] = d1; }
#else
  __trap();
#endif
}

// tensor-pair stage (1x1 by 1x1, Single), one warp per unit of 1 slot(s), 1 FP64 m8n8k4 MMA per entry and side, 4 entries per step, the last ones as one guarded step
extern "C" __global__ void ptap_mma2_1x1x1t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ uptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (w >= nunits) return;
  u32 r = lane >> 2, t = lane & 3;
  const bool av0 = r < 1 && (0 + t) < 1, bv0 = r < 1 && (0 + t) < 1;
  const double* xl0 = xv + (av0 ? (0 + t) * 1 + r : (r < 1 ? r : 0));
  const double* yl0 = yv + (bv0 ? (0 + t) * 1 + r : (r < 1 ? r : 0));
  asm("" : "+l"(xl0), "+l"(yl0));
  const double ym0 = (0 + t) < 1 ? 1.0 : 0.0;
  const uint2* ep = (const uint2*)ent;
  double d0 = 0.0, d1 = 0.0;
  u32 q = uptr[w], q1 = uptr[w + 1];
  for (; q + 4 <= q1; q += 4) {
    uint2 e0 = __ldg(ep + q + 0);
    uint2 e1 = __ldg(ep + q + 1);
    uint2 e2 = __ldg(ep + q + 2);
    uint2 e3 = __ldg(ep + q + 3);
    double b0_0 = 0.0, a0_0 = 0.0;
    b0_0 = __ldg(yl0 + (u64)e0.y * 1) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 1);
    double b1_0 = 0.0, a1_0 = 0.0;
    b1_0 = __ldg(yl0 + (u64)e1.y * 1) * ym0;
    a1_0 = __ldg(xl0 + (u64)e1.x * 1);
    double b2_0 = 0.0, a2_0 = 0.0;
    b2_0 = __ldg(yl0 + (u64)e2.y * 1) * ym0;
    a2_0 = __ldg(xl0 + (u64)e2.x * 1);
    double b3_0 = 0.0, a3_0 = 0.0;
    b3_0 = __ldg(yl0 + (u64)e3.y * 1) * ym0;
    a3_0 = __ldg(xl0 + (u64)e3.x * 1);
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
    b0_0 = __ldg(yl0 + (u64)e0.y * 1) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 1);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 1) * ym0; a1_0 = __ldg(xl0 + (u64)e1.x * 1); }
    double b2_0 = 0.0, a2_0 = 0.0;
    if (2 < rem) { b2_0 = __ldg(yl0 + (u64)e2.y * 1) * ym0; a2_0 = __ldg(xl0 + (u64)e2.x * 1); }
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    if (1 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    if (2 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
  }
  u32 c0 = 2 * t;
  {
  u32 s = uslot[1 * w + 0];
  double* cb = cv + (u64)s * 1;
  if (s != 0xffffffffu && r < 1) {
    if (c0 < 1) cb[r * 1 + c0] = d0; if (c0 + 1 < 1) cb[r * 1 + c0 + 1] = d1;
  }
  }
#else
  __trap();
#endif
}

// row-Gustavson stage (1x1 by 1x1), one warp per chunk of 32 output slots, 4 warps per block
extern "C" __global__ void ptap_row_gustavson_1x1x1t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ chunk_slot, const unsigned int* __restrict__ chunk_seg, const unsigned int* __restrict__ chunk_pos, const unsigned int* __restrict__ seg_x, const unsigned int* __restrict__ seg_y, const unsigned int* __restrict__ seg_n, const unsigned int* __restrict__ pos, double* __restrict__ cv, unsigned int nchunks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double rg_acc[4][32 * 1];
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u32 c = blockIdx.x * 4 + wl;
  if (c >= nchunks) return;
  double* acc = rg_acc[wl];
  u32 s0 = chunk_slot[c], ne = (chunk_slot[c + 1] - s0) * 1;
  for (u32 e = lane; e < ne; e += 32) acc[e] = 0.0;
  __syncwarp();
  const unsigned char* sn = (const unsigned char*)seg_n;
  const unsigned char* ps = (const unsigned char*)pos;
  u32 pb = chunk_pos[c];
  u32 g1 = chunk_seg[c + 1];
  for (u32 g = chunk_seg[c]; g < g1; ++g) {
    u32 cnt = sn[g];
    const double* xb = xv + (u64)seg_x[g] * 1;
    const double* yb0 = yv + (u64)seg_y[g] * 1;
    double x0 = __ldg(xb + 0);
    for (u32 t = lane; t < cnt * 1; t += 32) {
      u32 b = t / 1, j = t - b * 1;
      const double* yb = yb0 + (u64)b * 1;
      double* o = acc + (u32)ps[pb + b] * 1 + j;
      double y0 = __ldg(yb + 0 * 1 + j);
      { double a = o[0];
        a = a + x0 * y0;
        o[0] = a; }
    }
    pb += cnt;
    __syncwarp();
  }
  for (u32 e = lane; e < ne; e += 32) cv[(u64)s0 * 1 + e] = acc[e];
}

// outer-product scatter pass (1x1 by 1x1), atomic accumulation
extern "C" __global__ void ptap_scatter_1x1x1t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ rslot, double* __restrict__ cv, unsigned int nrecords) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nrecords * 1) return;
  u32 q = (u32)(t / 1); u32 e = (u32)(t % 1);
  u32 i = e / 1, j = e % 1;
  const double* xb = xv + (u64)rx[q] * 1;
  const double* yb = yv + (u64)ry[q] * 1;
  double v = 0.0;
  v = v + xb[(0)*1+(i)] * yb[0 * 1 + j];
  atomicAdd(cv + (u64)rslot[q] * 1 + e, v);
}

// merge-path block SpMV y = A x, 1x1 blocks, 4 warps per block, the next 32 blocks loaded while the current ones are multiplied; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_spmv_merge_1x1(const double* __restrict__ av, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double2 stage2[4][16];
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
  double pf_odd = 0.0;
  double k0 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  {
    u32 nd = pcnt * 1;
    const double2* src2 = (const double2*)(av + b0 * 1);
    if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
    if ((nd & 1) && lane == 0) pf_odd = av[b0 * 1 + nd - 1];
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    {
      u32 nd = cnt * 1;
      if (lane + 0 < nd / 2) stage2[wl][lane + 0] = pf0;
      if ((nd & 1) && lane == 0) stage[nd - 1] = pf_odd;
    }
    __syncwarp();
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        u32 nd = pcnt * 1;
        const double2* src2 = (const double2*)(av + nbase * 1);
        if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
        if ((nd & 1) && lane == 0) pf_odd = av[nbase * 1 + nd - 1];
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    if (valid) {
      const double* a = stage + lane * 1;
      double x0 = x[(u64)col * 1 + 0];
      v0 = a[0] * x0;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 1;
      if (row != head_row && row != tail_row) {
        yr[0] = v0;
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 1;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 1;
        mine[0] = v0;
        __threadfence();
        if (atomicAdd(ticket + bw, 1u) == 1u) {
          __threadfence();
          ticket[bw] = 0u;
          double t0 = is_tail ? v0 : __ldcg(other + 0);
          double h0 = is_tail ? __ldcg(other + 0) : v0;
          yr[0] = t0 + h0;
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = b - A x, 1x1 blocks, 4 warps per block, the next 32 blocks loaded while the current ones are multiplied; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_residual_merge_1x1(const double* __restrict__ av, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, const double* __restrict__ bv, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double2 stage2[4][16];
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
  double pf_odd = 0.0;
  double k0 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  {
    u32 nd = pcnt * 1;
    const double2* src2 = (const double2*)(av + b0 * 1);
    if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
    if ((nd & 1) && lane == 0) pf_odd = av[b0 * 1 + nd - 1];
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    {
      u32 nd = cnt * 1;
      if (lane + 0 < nd / 2) stage2[wl][lane + 0] = pf0;
      if ((nd & 1) && lane == 0) stage[nd - 1] = pf_odd;
    }
    __syncwarp();
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        u32 nd = pcnt * 1;
        const double2* src2 = (const double2*)(av + nbase * 1);
        if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
        if ((nd & 1) && lane == 0) pf_odd = av[nbase * 1 + nd - 1];
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    if (valid) {
      const double* a = stage + lane * 1;
      double x0 = x[(u64)col * 1 + 0];
      v0 = a[0] * x0;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 1;
      const double* br_ = bv + (u64)row * 1;
      if (row != head_row && row != tail_row) {
        yr[0] = 1.0 * br_[0] - 1.0 * (v0);
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 1;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 1;
        mine[0] = v0;
        __threadfence();
        if (atomicAdd(ticket + bw, 1u) == 1u) {
          __threadfence();
          ticket[bw] = 0u;
          double t0 = is_tail ? v0 : __ldcg(other + 0);
          double h0 = is_tail ? __ldcg(other + 0) : v0;
          yr[0] = 1.0 * br_[0] - 1.0 * (t0 + h0);
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = A x, 1x1 blocks (values stored as f32, widened to f64; x, y and the sums f64), 4 warps per block, the next 32 blocks loaded while the current ones are multiplied; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ __launch_bounds__(128, 8) void ptap_spmv_merge_f32_1x1(const float* __restrict__ av, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ float4 stage2[4][8];
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
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  {
    u32 nd = pcnt * 1;
    const float4* src2 = (const float4*)(av + b0 * 1);
    if (lane + 0 < nd / 4) pf0 = src2[lane + 0];
    if (lane < (nd & 3u)) pf_odd = av[b0 * 1 + (nd & ~3u) + lane];
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    {
      u32 nd = cnt * 1;
      if (lane + 0 < nd / 4) stage2[wl][lane + 0] = pf0;
      if (lane < (nd & 3u)) stage[(nd & ~3u) + lane] = pf_odd;
    }
    __syncwarp();
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        u32 nd = pcnt * 1;
        const float4* src2 = (const float4*)(av + nbase * 1);
        if (lane + 0 < nd / 4) pf0 = src2[lane + 0];
        if (lane < (nd & 3u)) pf_odd = av[nbase * 1 + (nd & ~3u) + lane];
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    if (valid) {
      const float* a = stage + lane * 1;
      double x0 = x[(u64)col * 1 + 0];
      v0 = (double)a[0] * x0;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 1;
      if (row != head_row && row != tail_row) {
        yr[0] = v0;
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 1;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 1;
        mine[0] = v0;
        __threadfence();
        if (atomicAdd(ticket + bw, 1u) == 1u) {
          __threadfence();
          ticket[bw] = 0u;
          double t0 = is_tail ? v0 : __ldcg(other + 0);
          double h0 = is_tail ? __ldcg(other + 0) : v0;
          yr[0] = t0 + h0;
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = b - A x, 1x1 blocks (values stored as f32, widened to f64; x, y and the sums f64), 4 warps per block, the next 32 blocks loaded while the current ones are multiplied; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ __launch_bounds__(128, 8) void ptap_residual_merge_f32_1x1(const float* __restrict__ av, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, const double* __restrict__ bv, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ float4 stage2[4][8];
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
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  {
    u32 nd = pcnt * 1;
    const float4* src2 = (const float4*)(av + b0 * 1);
    if (lane + 0 < nd / 4) pf0 = src2[lane + 0];
    if (lane < (nd & 3u)) pf_odd = av[b0 * 1 + (nd & ~3u) + lane];
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    {
      u32 nd = cnt * 1;
      if (lane + 0 < nd / 4) stage2[wl][lane + 0] = pf0;
      if (lane < (nd & 3u)) stage[(nd & ~3u) + lane] = pf_odd;
    }
    __syncwarp();
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        u32 nd = pcnt * 1;
        const float4* src2 = (const float4*)(av + nbase * 1);
        if (lane + 0 < nd / 4) pf0 = src2[lane + 0];
        if (lane < (nd & 3u)) pf_odd = av[nbase * 1 + (nd & ~3u) + lane];
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    if (valid) {
      const float* a = stage + lane * 1;
      double x0 = x[(u64)col * 1 + 0];
      v0 = (double)a[0] * x0;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 1;
      const double* br_ = bv + (u64)row * 1;
      if (row != head_row && row != tail_row) {
        yr[0] = 1.0 * br_[0] - 1.0 * (v0);
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 1;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 1;
        mine[0] = v0;
        __threadfence();
        if (atomicAdd(ticket + bw, 1u) == 1u) {
          __threadfence();
          ticket[bw] = 0u;
          double t0 = is_tail ? v0 : __ldcg(other + 0);
          double h0 = is_tail ? __ldcg(other + 0) : v0;
          yr[0] = 1.0 * br_[0] - 1.0 * (t0 + h0);
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = A x, 1x1 blocks (each block read at pos[k], transposed where bit 31 is set: a symmetric operator's upper triangle only), 4 warps per block, the next 32 blocks loaded while the current ones are multiplied, blocks gathered from global memory; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_spmv_mirror_1x1(const double* __restrict__ av, const unsigned int* __restrict__ pos, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
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
    if (valid) {
      const double* a = av + (u64)(mpos & 0x7fffffffu) * 1;
      bool tr = (mpos >> 31) != 0u;
      double x0 = x[(u64)col * 1 + 0];
      double e0 = a[0];
      v0 = e0 * x0;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 1;
      if (row != head_row && row != tail_row) {
        yr[0] = v0;
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 1;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 1;
        mine[0] = v0;
        __threadfence();
        if (atomicAdd(ticket + bw, 1u) == 1u) {
          __threadfence();
          ticket[bw] = 0u;
          double t0 = is_tail ? v0 : __ldcg(other + 0);
          double h0 = is_tail ? __ldcg(other + 0) : v0;
          yr[0] = t0 + h0;
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = b - A x, 1x1 blocks (each block read at pos[k], transposed where bit 31 is set: a symmetric operator's upper triangle only), 4 warps per block, the next 32 blocks loaded while the current ones are multiplied, blocks gathered from global memory; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_residual_mirror_1x1(const double* __restrict__ av, const unsigned int* __restrict__ pos, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, const double* __restrict__ bv, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
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
    if (valid) {
      const double* a = av + (u64)(mpos & 0x7fffffffu) * 1;
      bool tr = (mpos >> 31) != 0u;
      double x0 = x[(u64)col * 1 + 0];
      double e0 = a[0];
      v0 = e0 * x0;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 1;
      const double* br_ = bv + (u64)row * 1;
      if (row != head_row && row != tail_row) {
        yr[0] = 1.0 * br_[0] - 1.0 * (v0);
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 1;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 1;
        mine[0] = v0;
        __threadfence();
        if (atomicAdd(ticket + bw, 1u) == 1u) {
          __threadfence();
          ticket[bw] = 0u;
          double t0 = is_tail ? v0 : __ldcg(other + 0);
          double h0 = is_tail ? __ldcg(other + 0) : v0;
          yr[0] = 1.0 * br_[0] - 1.0 * (t0 + h0);
        }
      }
    }
    __syncwarp();
  }
}

// inverse of every 1x1 diagonal block (Gauss-Jordan, partial pivoting, as invert_in_place); a singular or missing block records its row in status[0]
extern "C" __global__ void ptap_jacobi_invert_1(const double* __restrict__ av, const unsigned int* __restrict__ diag_pos, double* __restrict__ dinv, unsigned int* __restrict__ status, unsigned int nrows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nrows) return;
  u32 k = diag_pos[i];
  if (k == 0xffffffffu) { atomicMax(status, 0xffffffffu - i); return; }
  double a[1];
  double scale = 0.0;
  for (int q = 0; q < 1; ++q) { a[q] = av[(u64)k * 1 + q]; scale = fmax(scale, fabs(a[q])); }
  if (!isfinite(scale) || scale == 0.0) { atomicMax(status, 0xffffffffu - i); return; }
  int perm[1];
  for (int q = 0; q < 1; ++q) perm[q] = q;
  for (int col = 0; col < 1; ++col) {
    int piv = col; double best = fabs(a[col * 1 + col]);
    for (int r = col + 1; r < 1; ++r) if (fabs(a[r * 1 + col]) > best) { best = fabs(a[r * 1 + col]); piv = r; }
    if (best <= 1e-14 * scale) { atomicMax(status, 0xffffffffu - i); return; }
    if (piv != col) {
      for (int j = 0; j < 1; ++j) { double t = a[piv * 1 + j]; a[piv * 1 + j] = a[col * 1 + j]; a[col * 1 + j] = t; }
      int t = perm[piv]; perm[piv] = perm[col]; perm[col] = t;
    }
    double inv = 1.0 / a[col * 1 + col];
    a[col * 1 + col] = 1.0;
    for (int j = 0; j < 1; ++j) a[col * 1 + j] *= inv;
    for (int r = 0; r < 1; ++r) {
      if (r != col) {
        double f = a[r * 1 + col];
        if (f != 0.0) {
          a[r * 1 + col] = 0.0;
          for (int j = 0; j < 1; ++j) a[r * 1 + j] -= f * a[col * 1 + j];
        }
      }
    }
  }
  int cols[1];
  for (int q = 0; q < 1; ++q) cols[perm[q]] = q;
  for (int r = 0; r < 1; ++r)
    for (int j = 0; j < 1; ++j) dinv[(u64)i * 1 + r * 1 + j] = a[r * 1 + cols[j]];
}

// x += alpha D^-1 r + beta t (1x1 blocks; t unread when beta = 0), one thread per scalar
extern "C" __global__ void ptap_jacobi_update_1(const double* __restrict__ dinv, double alpha, const double* __restrict__ r, double beta, const double* __restrict__ t, double* __restrict__ x, unsigned int nrows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= (u64)nrows * 1) return;
  u64 i = s / 1; u32 q = (u32)(s % 1);
  const double* d = dinv + i * 1 + q * 1;
  const double* ri = r + i * 1;
  double y = 0.0;
  y = y + d[0] * ri[0];
  double v = alpha * y + (beta != 0.0 ? beta * t[s] : 0.0);
  x[s] = x[s] + v;
}

// scatter 1x1 block-CSR values into a zeroed row-major n x n matrix
extern "C" __global__ void ptap_densify_1(const double* __restrict__ av, const unsigned int* __restrict__ brow, const unsigned int* __restrict__ ci, double* __restrict__ dense, unsigned int nblocks, unsigned int n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nblocks * 1) return;
  u32 k = (u32)(t / 1), e = (u32)(t % 1);
  u64 i = (u64)brow[k] * 1 + e / 1;
  u64 j = (u64)ci[k] * 1 + e % 1;
  dense[i * n + j] = av[t];
}

// x += coef[alpha_at] D^-1 r + coef[beta_at] t (1x1 blocks; beta_at = 0xffffffff: no t term), one thread per scalar
extern "C" __global__ void ptap_jacobi_update_at_1(const double* __restrict__ dinv, const double* __restrict__ coef, unsigned int alpha_at, unsigned int beta_at, const double* __restrict__ r, const double* __restrict__ t, double* __restrict__ x, unsigned int nrows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= (u64)nrows * 1) return;
  double alpha = coef[alpha_at], beta = beta_at == 0xffffffffu ? 0.0 : coef[beta_at];
  u64 i = s / 1; u32 q = (u32)(s % 1);
  const double* d = dinv + i * 1 + q * 1;
  const double* ri = r + i * 1;
  double y = 0.0;
  y = y + d[0] * ri[0];
  double v = alpha * y + (beta != 0.0 ? beta * t[s] : 0.0);
  x[s] = x[s] + v;
}

// t = coef[alpha_at] D^-1 r; x = t (zero != 0) or x += t (1x1 blocks), one thread per scalar
extern "C" __global__ void ptap_jacobi_step_1(const double* __restrict__ dinv, const double* __restrict__ coef, unsigned int alpha_at, const double* __restrict__ r, double* __restrict__ t, double* __restrict__ x, unsigned int zero, unsigned int nrows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= (u64)nrows * 1) return;
  double alpha = coef[alpha_at];
  u64 i = s / 1; u32 q = (u32)(s % 1);
  const double* d = dinv + i * 1 + q * 1;
  const double* ri = r + i * 1;
  double y = 0.0;
  y = y + d[0] * ri[0];
  double v = 0.0 + (alpha * y + 0.0);
  t[s] = v;
  x[s] = (zero != 0u ? 0.0 : x[s]) + v;
}

// c = s[num_at] / s[den_at]; r = (-c) ap + r; z = D^-1 r; per-block partial sums of r . z (1x1 blocks, one thread per block row, 256 threads, grid-stride, fixed tree)
extern "C" __global__ void ptap_lanczos_step_1(const double* __restrict__ s, unsigned int num_at, unsigned int den_at, const double* __restrict__ dinv, const double* __restrict__ ap, double* __restrict__ r, double* __restrict__ z, double* __restrict__ part, unsigned long long nrows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double sh[256];
  double c = s[num_at] / s[den_at];
  double acc = 0.0;
  u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < nrows; i += stride) {
    double* ri = r + i * 1;
    const double* ai = ap + i * 1;
    const double* d = dinv + i * 1;
    double r0 = -c * ai[0] + 1.0 * ri[0];
    ri[0] = r0;
    {
      double y = 0.0;
      y = y + d[0] * r0;
      double v = 0.0 + (1.0 * y + 0.0);
      z[i * 1 + 0] = v;
      acc += r0 * v;
    }
  }
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (u32 h = 128; h > 0; h >>= 1) { if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h]; __syncthreads(); }
  if (threadIdx.x == 0) part[blockIdx.x] = sh[0];
}

