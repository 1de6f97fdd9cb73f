typedef unsigned int u32;
typedef unsigned long long u64;
// R = P^T, 6x3 blocks gathered from transposed 3x6 blocks of P
extern "C" __global__ void ptap_gather_r_3x6(const double* __restrict__ pv, const unsigned int* __restrict__ src, double* __restrict__ rv, unsigned int nblocks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nblocks * 18) return;
  u32 b = (u32)(t / 18); u32 e = (u32)(t % 18);
  u32 i = e / 3, j = e % 3;
  rv[t] = pv[(u64)src[b] * 18 + j * 6 + i];
}

// two-pass stage C = X Y (3x3 by 3x6), one thread per output scalar
extern "C" __global__ void ptap_row_owner_3x3x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ x_rp, const unsigned int* __restrict__ x_ci, const unsigned int* __restrict__ y_rp, const unsigned int* __restrict__ y_ci, const unsigned int* __restrict__ c_row, const unsigned int* __restrict__ c_ci, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nslots * 18) return;
  u32 s = (u32)(t / 18); u32 e = (u32)(t % 18);
  u32 i = e / 6, j = e % 6;
  u32 row = c_row[s], col = c_ci[s];
  double acc = 0.0;
  for (u32 kx = x_rp[row]; kx < x_rp[row + 1]; ++kx) {
    u32 l = x_ci[kx];
    u32 lo = y_rp[l], hi = y_rp[l + 1], end = hi;
    while (lo < hi) { u32 mid = (lo + hi) >> 1; if (y_ci[mid] < col) lo = mid + 1; else hi = mid; }
    if (lo < end && y_ci[lo] == col) {
      const double* xb = xv + (u64)kx * 9;
      const double* yb = yv + (u64)lo * 18;
      acc = acc + xb[(i)*3+(0)] * yb[0 * 6 + j];
      acc = acc + xb[(i)*3+(1)] * yb[1 * 6 + j];
      acc = acc + xb[(i)*3+(2)] * yb[2 * 6 + j];
    }
  }
  cv[t] = acc;
}

// two-pass stage C = X Y (6x3 by 3x6), one thread per output scalar
extern "C" __global__ void ptap_row_owner_6x3x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ x_rp, const unsigned int* __restrict__ x_ci, const unsigned int* __restrict__ y_rp, const unsigned int* __restrict__ y_ci, const unsigned int* __restrict__ c_row, const unsigned int* __restrict__ c_ci, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nslots * 36) return;
  u32 s = (u32)(t / 36); u32 e = (u32)(t % 36);
  u32 i = e / 6, j = e % 6;
  u32 row = c_row[s], col = c_ci[s];
  double acc = 0.0;
  for (u32 kx = x_rp[row]; kx < x_rp[row + 1]; ++kx) {
    u32 l = x_ci[kx];
    u32 lo = y_rp[l], hi = y_rp[l + 1], end = hi;
    while (lo < hi) { u32 mid = (lo + hi) >> 1; if (y_ci[mid] < col) lo = mid + 1; else hi = mid; }
    if (lo < end && y_ci[lo] == col) {
      const double* xb = xv + (u64)kx * 18;
      const double* yb = yv + (u64)lo * 18;
      acc = acc + xb[(i)*3+(0)] * yb[0 * 6 + j];
      acc = acc + xb[(i)*3+(1)] * yb[1 * 6 + j];
      acc = acc + xb[(i)*3+(2)] * yb[2 * 6 + j];
    }
  }
  cv[t] = acc;
}

// slot-tiled stage (3x3 by 3x6), 128 slots per block, register accumulators
extern "C" __global__ void ptap_slot_tiled_3x3x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double tile[128 * 18];
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
  double a9 = 0.0;
  double a10 = 0.0;
  double a11 = 0.0;
  double a12 = 0.0;
  double a13 = 0.0;
  double a14 = 0.0;
  double a15 = 0.0;
  double a16 = 0.0;
  double a17 = 0.0;
  if (s < nslots) {
    for (u32 q = ptr[s]; q < ptr[s + 1]; ++q) {
      const double* xb = xv + (u64)rx[q] * 9;
      const double* yb = yv + (u64)ry[q] * 18;
      double y0_0 = yb[0];
      double y0_1 = yb[1];
      double y0_2 = yb[2];
      double y0_3 = yb[3];
      double y0_4 = yb[4];
      double y0_5 = yb[5];
      double y1_0 = yb[6];
      double y1_1 = yb[7];
      double y1_2 = yb[8];
      double y1_3 = yb[9];
      double y1_4 = yb[10];
      double y1_5 = yb[11];
      double y2_0 = yb[12];
      double y2_1 = yb[13];
      double y2_2 = yb[14];
      double y2_3 = yb[15];
      double y2_4 = yb[16];
      double y2_5 = yb[17];
      { double x = xb[(0)*3+(0)];
        a0 = a0 + x * y0_0;
        a1 = a1 + x * y0_1;
        a2 = a2 + x * y0_2;
        a3 = a3 + x * y0_3;
        a4 = a4 + x * y0_4;
        a5 = a5 + x * y0_5;
      }
      { double x = xb[(1)*3+(0)];
        a6 = a6 + x * y0_0;
        a7 = a7 + x * y0_1;
        a8 = a8 + x * y0_2;
        a9 = a9 + x * y0_3;
        a10 = a10 + x * y0_4;
        a11 = a11 + x * y0_5;
      }
      { double x = xb[(2)*3+(0)];
        a12 = a12 + x * y0_0;
        a13 = a13 + x * y0_1;
        a14 = a14 + x * y0_2;
        a15 = a15 + x * y0_3;
        a16 = a16 + x * y0_4;
        a17 = a17 + x * y0_5;
      }
      { double x = xb[(0)*3+(1)];
        a0 = a0 + x * y1_0;
        a1 = a1 + x * y1_1;
        a2 = a2 + x * y1_2;
        a3 = a3 + x * y1_3;
        a4 = a4 + x * y1_4;
        a5 = a5 + x * y1_5;
      }
      { double x = xb[(1)*3+(1)];
        a6 = a6 + x * y1_0;
        a7 = a7 + x * y1_1;
        a8 = a8 + x * y1_2;
        a9 = a9 + x * y1_3;
        a10 = a10 + x * y1_4;
        a11 = a11 + x * y1_5;
      }
      { double x = xb[(2)*3+(1)];
        a12 = a12 + x * y1_0;
        a13 = a13 + x * y1_1;
        a14 = a14 + x * y1_2;
        a15 = a15 + x * y1_3;
        a16 = a16 + x * y1_4;
        a17 = a17 + x * y1_5;
      }
      { double x = xb[(0)*3+(2)];
        a0 = a0 + x * y2_0;
        a1 = a1 + x * y2_1;
        a2 = a2 + x * y2_2;
        a3 = a3 + x * y2_3;
        a4 = a4 + x * y2_4;
        a5 = a5 + x * y2_5;
      }
      { double x = xb[(1)*3+(2)];
        a6 = a6 + x * y2_0;
        a7 = a7 + x * y2_1;
        a8 = a8 + x * y2_2;
        a9 = a9 + x * y2_3;
        a10 = a10 + x * y2_4;
        a11 = a11 + x * y2_5;
      }
      { double x = xb[(2)*3+(2)];
        a12 = a12 + x * y2_0;
        a13 = a13 + x * y2_1;
        a14 = a14 + x * y2_2;
        a15 = a15 + x * y2_3;
        a16 = a16 + x * y2_4;
        a17 = a17 + x * y2_5;
      }
    }
  }
  tile[threadIdx.x * 18 + 0] = a0;
  tile[threadIdx.x * 18 + 1] = a1;
  tile[threadIdx.x * 18 + 2] = a2;
  tile[threadIdx.x * 18 + 3] = a3;
  tile[threadIdx.x * 18 + 4] = a4;
  tile[threadIdx.x * 18 + 5] = a5;
  tile[threadIdx.x * 18 + 6] = a6;
  tile[threadIdx.x * 18 + 7] = a7;
  tile[threadIdx.x * 18 + 8] = a8;
  tile[threadIdx.x * 18 + 9] = a9;
  tile[threadIdx.x * 18 + 10] = a10;
  tile[threadIdx.x * 18 + 11] = a11;
  tile[threadIdx.x * 18 + 12] = a12;
  tile[threadIdx.x * 18 + 13] = a13;
  tile[threadIdx.x * 18 + 14] = a14;
  tile[threadIdx.x * 18 + 15] = a15;
  tile[threadIdx.x * 18 + 16] = a16;
  tile[threadIdx.x * 18 + 17] = a17;
  __syncthreads();
  u32 valid = nslots - s0 < 128 ? nslots - s0 : 128;
  for (u32 e = threadIdx.x; e < valid * 18; e += 128) cv[(u64)s0 * 18 + e] = tile[e];
}

// column-split stage (3x3 by 3x6), 6 lanes per slot, 5 slots per warp, one window per block, x staged in shared memory, 2 contributions per step, 6 indices per fetch
extern "C" __global__ void ptap_column_split_3x3x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots, unsigned int window) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  extern __shared__ double2 cs_smem[];
  u32 lane = threadIdx.x & 31, gw = lane / 6;
  if (gw >= 5) return;
  u32 j = lane - gw * 6;
  u32 g = (threadIdx.x >> 5) * 5 + gw;
  if (g >= window) return;
  u32 idx = blockIdx.x * window + g;
  if (idx >= nslots) return;
  u32 s = order[idx];
  double* sx = (double*)((char*)cs_smem + (u64)g * 208);
  u32* si = (u32*)(sx + 20);
  const u32 gm = 63u << (gw * 6);
  double c0 = 0.0;
  double c1 = 0.0;
  double c2 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 6) {
    u32 cnt = q1 - q0 < 6 ? q1 - q0 : 6;
    { u32 e = 0 + j; if (e < cnt) { si[e] = rx[q0 + e]; si[6 + e] = ry[q0 + e]; } }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double y0_0 = 0.0, y0_1 = 0.0, y0_2 = 0.0;
      {
        const double* xs_g = (const double*)(xv + (u64)si[t + 0] * 9);
        const double* yb = yv + (u64)si[6 + t + 0] * 18;
        double* xs_s = (double*)(sx + 0);
        xs_s[0 + j] = xs_g[0 + j];
        if (6 + j < 9) xs_s[6 + j] = xs_g[6 + j];
        y0_0 = yb[0 * 6 + j];
        y0_1 = yb[1 * 6 + j];
        y0_2 = yb[2 * 6 + j];
      }
      double y1_0 = 0.0, y1_1 = 0.0, y1_2 = 0.0;
      if (t + 1 < cnt) {
        const double* xs_g = (const double*)(xv + (u64)si[t + 1] * 9);
        const double* yb = yv + (u64)si[6 + t + 1] * 18;
        double* xs_s = (double*)(sx + 10);
        xs_s[0 + j] = xs_g[0 + j];
        if (6 + j < 9) xs_s[6 + j] = xs_g[6 + j];
        y1_0 = yb[0 * 6 + j];
        y1_1 = yb[1 * 6 + j];
        y1_2 = yb[2 * 6 + j];
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
  cv[(u64)s * 18 + 0 + j] = c0;
  cv[(u64)s * 18 + 6 + j] = c1;
  cv[(u64)s * 18 + 12 + j] = c2;
}

// flat-stream stage (3x3 by 3x6), one warp per record tile
extern "C" __global__ void ptap_flat_stream_3x3x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ rslot, const unsigned int* __restrict__ tile_rows, const unsigned int* __restrict__ tile_records, const unsigned int* __restrict__ c_rp, double* __restrict__ cv, unsigned int ntiles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u32 w = (u32)(((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (w >= ntiles) return;
  u64 e0 = (u64)c_rp[tile_rows[w]] * 18, e1 = (u64)c_rp[tile_rows[w + 1]] * 18;
  for (u64 e = e0 + lane; e < e1; e += 32) cv[e] = 0.0;
  __syncwarp();
  for (u32 q = tile_records[w]; q < tile_records[w + 1]; ++q) {
    const double* xb = xv + (u64)rx[q] * 9;
    const double* yb = yv + (u64)ry[q] * 18;
    double* cb = cv + (u64)rslot[q] * 18;
    for (u32 e = lane; e < 18; e += 32) {
      u32 i = e / 6, j = e % 6;
      double c = cb[e];
      c = c + xb[(i)*3+(0)] * yb[0 * 6 + j];
      c = c + xb[(i)*3+(1)] * yb[1 * 6 + j];
      c = c + xb[(i)*3+(2)] * yb[2 * 6 + j];
      cb[e] = c;
    }
  }
}

// lane-tiled stage (3x3 by 3x6), 9 lanes per slot each owning 1x2 outputs, 3 slots per warp, operands read straight into registers, 2 contributions per step
extern "C" __global__ void ptap_lane_tiled_3x3x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
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
  u32 yo = tj * 2;
  double c0_0 = 0.0;
  double c0_1 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 9) {
    u32 cnt = q1 - q0 < 9 ? q1 - q0 : 9;
    if (r < cnt) { si[r] = rx[q0 + r]; si[9 + r] = ry[q0 + r]; }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double x0_0_0 = 0.0, x0_0_1 = 0.0, x0_0_2 = 0.0;
      double y0_0_0 = 0.0, y0_0_1 = 0.0, y0_1_0 = 0.0, y0_1_1 = 0.0, y0_2_0 = 0.0, y0_2_1 = 0.0;
      {
        const double* xb = xv + (u64)si[t + 0] * 9 + xo;
        const double* yb = yv + (u64)si[9 + t + 0] * 18 + yo;
        { double2 v = ((const double2*)(yb + 0))[0]; y0_0_0 = v.x; y0_0_1 = v.y; }
        { double2 v = ((const double2*)(yb + 6))[0]; y0_1_0 = v.x; y0_1_1 = v.y; }
        { double2 v = ((const double2*)(yb + 12))[0]; y0_2_0 = v.x; y0_2_1 = v.y; }
        x0_0_0 = xb[0];
        x0_0_1 = xb[1];
        x0_0_2 = xb[2];
      }
      double x1_0_0 = 0.0, x1_0_1 = 0.0, x1_0_2 = 0.0;
      double y1_0_0 = 0.0, y1_0_1 = 0.0, y1_1_0 = 0.0, y1_1_1 = 0.0, y1_2_0 = 0.0, y1_2_1 = 0.0;
      if (t + 1 < cnt) {
        const double* xb = xv + (u64)si[t + 1] * 9 + xo;
        const double* yb = yv + (u64)si[9 + t + 1] * 18 + yo;
        { double2 v = ((const double2*)(yb + 0))[0]; y1_0_0 = v.x; y1_0_1 = v.y; }
        { double2 v = ((const double2*)(yb + 6))[0]; y1_1_0 = v.x; y1_1_1 = v.y; }
        { double2 v = ((const double2*)(yb + 12))[0]; y1_2_0 = v.x; y1_2_1 = v.y; }
        x1_0_0 = xb[0];
        x1_0_1 = xb[1];
        x1_0_2 = xb[2];
      }
      c0_0 = c0_0 + x0_0_0 * y0_0_0;
      c0_0 = c0_0 + x0_0_1 * y0_1_0;
      c0_0 = c0_0 + x0_0_2 * y0_2_0;
      c0_1 = c0_1 + x0_0_0 * y0_0_1;
      c0_1 = c0_1 + x0_0_1 * y0_1_1;
      c0_1 = c0_1 + x0_0_2 * y0_2_1;
      if (t + 1 < cnt) {
      c0_0 = c0_0 + x1_0_0 * y1_0_0;
      c0_0 = c0_0 + x1_0_1 * y1_1_0;
      c0_0 = c0_0 + x1_0_2 * y1_2_0;
      c0_1 = c0_1 + x1_0_0 * y1_0_1;
      c0_1 = c0_1 + x1_0_1 * y1_1_1;
      c0_1 = c0_1 + x1_0_2 * y1_2_1;
      }
    }
    __syncwarp(gm);
  }
  double* cb = cv + (u64)s * 18;
  cb[(ti * 1 + 0) * 6 + tj * 2 + 0] = c0_0;
  cb[(ti * 1 + 0) * 6 + tj * 2 + 1] = c0_1;
}

// k-split stage (3x3 by 3x6), 9 lanes per slot each owning inner index kk and 2 columns, 3 slots per warp, 8 warps per block, 2 contributions per step, partials added in kk order
extern "C" __global__ void ptap_k_split_3x3x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
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
  double* sx = (double*)((char*)ks_smem + (u64)gl * 584);
  u32* si = (u32*)(sx + 20);
  const u32 gm = 511u << (gw * 9);
  u32 yo = kk * 6 + c * 2;
  double c0_0 = 0.0;
  double c0_1 = 0.0;
  double c1_0 = 0.0;
  double c1_1 = 0.0;
  double c2_0 = 0.0;
  double c2_1 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 9) {
    u32 cnt = q1 - q0 < 9 ? q1 - q0 : 9;
    if (r < cnt) { si[r] = rx[q0 + r]; si[9 + r] = ry[q0 + r]; }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double y0_0 = 0.0, y0_1 = 0.0;
      {
        const double* xs_g = (const double*)(xv + (u64)si[t + 0] * 9);
        double* xs_s = (double*)(sx + 0);
        const double* yb = yv + (u64)si[9 + t + 0] * 18 + yo;
        xs_s[0 + r] = xs_g[0 + r];
        { double2 v = ((const double2*)(yb + 0))[0]; y0_0 = v.x; y0_1 = v.y; }
      }
      double y1_0 = 0.0, y1_1 = 0.0;
      if (t + 1 < cnt) {
        const double* xs_g = (const double*)(xv + (u64)si[t + 1] * 9);
        double* xs_s = (double*)(sx + 10);
        const double* yb = yv + (u64)si[9 + t + 1] * 18 + yo;
        xs_s[0 + r] = xs_g[0 + r];
        { double2 v = ((const double2*)(yb + 0))[0]; y1_0 = v.x; y1_1 = v.y; }
      }
      __syncwarp(gm);
      { double x = sx[0 + 0 + kk];
        c0_0 = c0_0 + x * y0_0;
        c0_1 = c0_1 + x * y0_1;
      }
      { double x = sx[0 + 3 + kk];
        c1_0 = c1_0 + x * y0_0;
        c1_1 = c1_1 + x * y0_1;
      }
      { double x = sx[0 + 6 + kk];
        c2_0 = c2_0 + x * y0_0;
        c2_1 = c2_1 + x * y0_1;
      }
      if (t + 1 < cnt) {
      { double x = sx[10 + 0 + kk];
        c0_0 = c0_0 + x * y1_0;
        c0_1 = c0_1 + x * y1_1;
      }
      { double x = sx[10 + 3 + kk];
        c1_0 = c1_0 + x * y1_0;
        c1_1 = c1_1 + x * y1_1;
      }
      { double x = sx[10 + 6 + kk];
        c2_0 = c2_0 + x * y1_0;
        c2_1 = c2_1 + x * y1_1;
      }
      }
      __syncwarp(gm);
    }
  }
  double* part = sx;
  part[(kk * 3 + 0) * 6 + c * 2 + 0] = c0_0;
  part[(kk * 3 + 0) * 6 + c * 2 + 1] = c0_1;
  part[(kk * 3 + 1) * 6 + c * 2 + 0] = c1_0;
  part[(kk * 3 + 1) * 6 + c * 2 + 1] = c1_1;
  part[(kk * 3 + 2) * 6 + c * 2 + 0] = c2_0;
  part[(kk * 3 + 2) * 6 + c * 2 + 1] = c2_1;
  __syncwarp(gm);
  double* cb = cv + (u64)s * 18;
  for (u32 e = r; e < 18; e += 9) {
    double v = part[e];
    v = v + part[18 + e];
    v = v + part[36 + e];
    cb[e] = v;
  }
}

// tensor-core stage (3x3 by 3x6), one warp per slot, 1 FP64 m8n8k4 MMA per contribution, 4 contributions per step
extern "C" __global__ void ptap_mma_3x3x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
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
  const double* yl0 = yv + (r < 6 && (0 + t) < 3 ? (0 + t) * 6 + r : 0);
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
      double a0_0 = __ldg(xl0 + (u64)xi0 * 9), b0_0 = __ldg(yl0 + (u64)yi0 * 18) * ym0;
      u32 xi1 = __shfl_sync(0xffffffffu, idx, u + 1), yi1 = __shfl_sync(0xffffffffu, idx, 16 + u + 1);
      double a1_0 = __ldg(xl0 + (u64)xi1 * 9), b1_0 = __ldg(yl0 + (u64)yi1 * 18) * ym0;
      u32 xi2 = __shfl_sync(0xffffffffu, idx, u + 2), yi2 = __shfl_sync(0xffffffffu, idx, 16 + u + 2);
      double a2_0 = __ldg(xl0 + (u64)xi2 * 9), b2_0 = __ldg(yl0 + (u64)yi2 * 18) * ym0;
      u32 xi3 = __shfl_sync(0xffffffffu, idx, u + 3), yi3 = __shfl_sync(0xffffffffu, idx, 16 + u + 3);
      double a3_0 = __ldg(xl0 + (u64)xi3 * 9), b3_0 = __ldg(yl0 + (u64)yi3 * 18) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a3_0), "d"(b3_0));
    }
    for (; u < cnt; ++u) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = __ldg(xl0 + (u64)xi0 * 9), b0_0 = __ldg(yl0 + (u64)yi0 * 18) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    }
  }
  u32 c0 = 2 * t;
  double* cb = cv + (u64)s * 18;
  if (r < 3 && c0 < 6) *(double2*)(cb + r * 6 + c0) = make_double2(d0, d1);
#else
  __trap();
#endif
}

// tensor-pair stage (3x3 by 3x6, Packed), one warp per unit of 2 slot(s), 1 FP64 m8n8k4 MMA per entry and side, 4 entries per step, the last ones as one guarded step
extern "C" __global__ void ptap_mma2_3x3x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ uptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (w >= nunits) return;
  u32 r = lane >> 2, t = lane & 3;
  const bool av0 = (r & 3) < 3 && (0 + t) < 3, bv0 = r < 6 && (0 + t) < 3;
  const double* xl0 = xv + (av0 ? (r & 3) * 3 + (0 + t) : 0);
  const double* yl0 = yv + (bv0 ? (0 + t) * 6 + r : (r < 6 ? r : 5));
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
    b0_0 = __ldg(yl0 + (u64)e0.y * 18) * ym0;
    if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)e0.x * 9);
    double b1_0 = 0.0, a1_0 = 0.0;
    b1_0 = __ldg(yl0 + (u64)e1.y * 18) * ym0;
    if (av0 && e1.x != 0xffffffffu) a1_0 = __ldg(xl0 + (u64)e1.x * 9);
    double b2_0 = 0.0, a2_0 = 0.0;
    b2_0 = __ldg(yl0 + (u64)e2.y * 18) * ym0;
    if (av0 && e2.x != 0xffffffffu) a2_0 = __ldg(xl0 + (u64)e2.x * 9);
    double b3_0 = 0.0, a3_0 = 0.0;
    b3_0 = __ldg(yl0 + (u64)e3.y * 18) * ym0;
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
    b0_0 = __ldg(yl0 + (u64)e0.y * 18) * ym0;
    if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)e0.x * 9);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 18) * ym0; if (av0 && e1.x != 0xffffffffu) a1_0 = __ldg(xl0 + (u64)e1.x * 9); }
    double b2_0 = 0.0, a2_0 = 0.0;
    if (2 < rem) { b2_0 = __ldg(yl0 + (u64)e2.y * 18) * ym0; if (av0 && e2.x != 0xffffffffu) a2_0 = __ldg(xl0 + (u64)e2.x * 9); }
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    if (1 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    if (2 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
  }
  u32 c0 = 2 * t;
  {
  u32 s = uslot[2 * w + (r >> 2)];
  double* cb = cv + (u64)s * 18;
  if (s != 0xffffffffu && (r & 3) < 3) {
    if (c0 < 6) *(double2*)(cb + (r & 3) * 6 + c0) = make_double2(d0, d1);
  }
  }
#else
  __trap();
#endif
}

// tensor-core stage (3x3 by 3x6), a block's warps interleaved over `chunk` consecutive slots, 1 FP64 m8n8k4 MMA per contribution, 4 contributions per step, a run's last x block halved where its end bound has bit 31
extern "C" __global__ void ptap_mmah_3x3x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots, unsigned int chunk) {
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
  const double* yl0 = yv + (r < 6 && (0 + t) < 3 ? (0 + t) * 6 + r : 0);
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
      double a0_0 = __ldg(xl0 + (u64)xi0 * 9), b0_0 = __ldg(yl0 + (u64)yi0 * 18) * ym0;
      u32 xi1 = __shfl_sync(0xffffffffu, idx, u + 1), yi1 = __shfl_sync(0xffffffffu, idx, 16 + u + 1);
      double a1_0 = __ldg(xl0 + (u64)xi1 * 9), b1_0 = __ldg(yl0 + (u64)yi1 * 18) * ym0;
      u32 xi2 = __shfl_sync(0xffffffffu, idx, u + 2), yi2 = __shfl_sync(0xffffffffu, idx, 16 + u + 2);
      double a2_0 = __ldg(xl0 + (u64)xi2 * 9), b2_0 = __ldg(yl0 + (u64)yi2 * 18) * ym0;
      u32 xi3 = __shfl_sync(0xffffffffu, idx, u + 3), yi3 = __shfl_sync(0xffffffffu, idx, 16 + u + 3);
      double a3_0 = __ldg(xl0 + (u64)xi3 * 9), b3_0 = __ldg(yl0 + (u64)yi3 * 18) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a3_0), "d"(b3_0));
    }
    for (; u < ce; ++u) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = __ldg(xl0 + (u64)xi0 * 9), b0_0 = __ldg(yl0 + (u64)yi0 * 18) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    }
    if (u < cnt) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      xi0 &= 0x7fffffffu;
      double a0_0 = __ldg(xl0 + (u64)xi0 * 9), b0_0 = __ldg(yl0 + (u64)yi0 * 18) * ym0;
      d0 *= 2.0;
      d1 *= 2.0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      d0 *= 0.5;
      d1 *= 0.5;
    }
  }
  u32 c0 = 2 * t;
  double* cb = cv + (u64)s * 18;
  if (r < 3 && c0 < 6) *(double2*)(cb + r * 6 + c0) = make_double2(d0, d1);
  }
#else
  __trap();
#endif
}

// tensor-pair stage (3x3 by 3x6, Packed), warps walking spans of units of 2 slot(s), 1 FP64 m8n8k4 MMA per entry and side, 4 entries per step, the last ones as one guarded step, x blocks flagged in bit 31 halved
extern "C" __global__ __launch_bounds__(128, 16) void ptap_mma2h_3x3x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ uptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits, unsigned int chunk, unsigned int inter) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 r = lane >> 2, t = lane & 3;
  const bool av0 = (r & 3) < 3 && (0 + t) < 3, bv0 = r < 6 && (0 + t) < 3;
  const double* xl0 = xv + (av0 ? (r & 3) * 3 + (0 + t) : 0);
  const double* yl0 = yv + (bv0 ? (0 + t) * 6 + r : (r < 6 ? r : 5));
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
    b0_0 = __ldg(yl0 + (u64)e0.y * 18) * ym0;
    if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)(e0.x & 0x7fffffffu) * 9);
    double b1_0 = 0.0, a1_0 = 0.0;
    b1_0 = __ldg(yl0 + (u64)e1.y * 18) * ym0;
    if (av0 && e1.x != 0xffffffffu) a1_0 = __ldg(xl0 + (u64)(e1.x & 0x7fffffffu) * 9);
    double b2_0 = 0.0, a2_0 = 0.0;
    b2_0 = __ldg(yl0 + (u64)e2.y * 18) * ym0;
    if (av0 && e2.x != 0xffffffffu) a2_0 = __ldg(xl0 + (u64)(e2.x & 0x7fffffffu) * 9);
    double b3_0 = 0.0, a3_0 = 0.0;
    b3_0 = __ldg(yl0 + (u64)e3.y * 18) * ym0;
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
    b0_0 = __ldg(yl0 + (u64)e0.y * 18) * ym0;
    if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)(e0.x & 0x7fffffffu) * 9);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 18) * ym0; if (av0 && e1.x != 0xffffffffu) a1_0 = __ldg(xl0 + (u64)(e1.x & 0x7fffffffu) * 9); }
    double b2_0 = 0.0, a2_0 = 0.0;
    if (2 < rem) { b2_0 = __ldg(yl0 + (u64)e2.y * 18) * ym0; if (av0 && e2.x != 0xffffffffu) a2_0 = __ldg(xl0 + (u64)(e2.x & 0x7fffffffu) * 9); }
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
    b0_0 = __ldg(yl0 + (u64)e0.y * 18) * ym0;
    if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)(e0.x & 0x7fffffffu) * 9);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 18) * ym0; if (av0 && e1.x != 0xffffffffu) a1_0 = __ldg(xl0 + (u64)(e1.x & 0x7fffffffu) * 9); }
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
  double* cb = cv + (u64)s * 18;
  if (s != 0xffffffffu && (r & 3) < 3) {
    if (c0 < 6) *(double2*)(cb + (r & 3) * 6 + c0) = make_double2(d0, d1);
  }
  }
  }
  }
#else
  __trap();
#endif
}

// C = X + X^T in place over 6x6 blocks, one thread per slot element
extern "C" __global__ void ptap_symmetrize_6x6(double* __restrict__ cv, const unsigned int* __restrict__ tr, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (u64)nslots * 36) return;
  u32 s = (u32)(i / 36), e = (u32)(i % 36), a = e / 6, b = e % 6;
  u32 t = tr[s];
  if (s < t || (s == t && a <= b)) {
    double* x = cv + (u64)s * 36 + a * 6 + b;
    double* y = cv + (u64)t * 36 + b * 6 + a;
    double v = *x + *y;
    *x = v;
    *y = v;
  }
}

// C = X + X^T over 6x6 blocks from X's chunk sums, one thread per slot element
extern "C" __global__ void ptap_symsplit_6x6(double* __restrict__ cv, const double* __restrict__ xs, const unsigned int* __restrict__ first, const unsigned int* __restrict__ tr, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (u64)nslots * 36) return;
  u32 s = (u32)(i / 36), e = (u32)(i % 36), a = e / 6, b = e % 6;
  u32 t = tr[s];
  u32 c = first[s], c1 = first[s + 1];
  double x = __ldg(xs + (u64)c * 36 + a * 6 + b);
  for (++c; c < c1; ++c) x += __ldg(xs + (u64)c * 36 + a * 6 + b);
  c = first[t]; c1 = first[t + 1];
  double y = __ldg(xs + (u64)c * 36 + b * 6 + a);
  for (++c; c < c1; ++c) y += __ldg(xs + (u64)c * 36 + b * 6 + a);
  cv[(u64)s * 36 + e] = x + y;
}

// folded P^T W' stage (6x3 by 3x6), one warp per slot (I, J) of the upper triangle summing X_IJ + X_JI^T, 1 FP64 m8n8k4 MMA per entry, 4 entries per step, each half's last ones as one guarded step; writes (I, J) and (J, I)
extern "C" __global__ void ptap_mma2f_6x3x6t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ hptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (w >= nunits) return;
  u32 r = lane >> 2, t = lane & 3;
  const bool av0 = r < 6 && (0 + t) < 3, bv0 = r < 6 && (0 + t) < 3;
  const double* xl0 = xv + (av0 ? (0 + t) * 6 + r : (r < 6 ? r : 5));
  const double* yl0 = yv + (bv0 ? (0 + t) * 6 + r : (r < 6 ? r : 5));
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
    b0_0 = __ldg(yl0 + (u64)e0.y * 18) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 18);
    double b1_0 = 0.0, a1_0 = 0.0;
    b1_0 = __ldg(yl0 + (u64)e1.y * 18) * ym0;
    a1_0 = __ldg(xl0 + (u64)e1.x * 18);
    double b2_0 = 0.0, a2_0 = 0.0;
    b2_0 = __ldg(yl0 + (u64)e2.y * 18) * ym0;
    a2_0 = __ldg(xl0 + (u64)e2.x * 18);
    double b3_0 = 0.0, a3_0 = 0.0;
    b3_0 = __ldg(yl0 + (u64)e3.y * 18) * ym0;
    a3_0 = __ldg(xl0 + (u64)e3.x * 18);
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
    b0_0 = __ldg(yl0 + (u64)e0.y * 18) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 18);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 18) * ym0; a1_0 = __ldg(xl0 + (u64)e1.x * 18); }
    double b2_0 = 0.0, a2_0 = 0.0;
    if (2 < rem) { b2_0 = __ldg(yl0 + (u64)e2.y * 18) * ym0; a2_0 = __ldg(xl0 + (u64)e2.x * 18); }
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
    b0_0 = __ldg(yl0 + (u64)e0.y * 18) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 18);
    double b1_0 = 0.0, a1_0 = 0.0;
    b1_0 = __ldg(yl0 + (u64)e1.y * 18) * ym0;
    a1_0 = __ldg(xl0 + (u64)e1.x * 18);
    double b2_0 = 0.0, a2_0 = 0.0;
    b2_0 = __ldg(yl0 + (u64)e2.y * 18) * ym0;
    a2_0 = __ldg(xl0 + (u64)e2.x * 18);
    double b3_0 = 0.0, a3_0 = 0.0;
    b3_0 = __ldg(yl0 + (u64)e3.y * 18) * ym0;
    a3_0 = __ldg(xl0 + (u64)e3.x * 18);
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
    b0_0 = __ldg(yl0 + (u64)e0.y * 18) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 18);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 18) * ym0; a1_0 = __ldg(xl0 + (u64)e1.x * 18); }
    double b2_0 = 0.0, a2_0 = 0.0;
    if (2 < rem) { b2_0 = __ldg(yl0 + (u64)e2.y * 18) * ym0; a2_0 = __ldg(xl0 + (u64)e2.x * 18); }
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
  if (r < 6) {
    double* cb = cv + (u64)s0 * 36;
    if (c0 < 6) *(double2*)(cb + r * 6 + c0) = make_double2(d0, d1);
    if (s1 != 0xffffffffu) {
      double* ct = cv + (u64)s1 * 36;
      if (c0 < 6) ct[c0 * 6 + r] = d0; if (c0 + 1 < 6) ct[(c0 + 1) * 6 + r] = d1;
    }
  }
#else
  __trap();
#endif
}

// row-Gustavson stage (3x3 by 3x6), one warp per chunk of 32 output slots, 4 warps per block
extern "C" __global__ void ptap_row_gustavson_3x3x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ chunk_slot, const unsigned int* __restrict__ chunk_seg, const unsigned int* __restrict__ chunk_pos, const unsigned int* __restrict__ seg_x, const unsigned int* __restrict__ seg_y, const unsigned int* __restrict__ seg_n, const unsigned int* __restrict__ pos, double* __restrict__ cv, unsigned int nchunks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double rg_acc[4][32 * 18];
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u32 c = blockIdx.x * 4 + wl;
  if (c >= nchunks) return;
  double* acc = rg_acc[wl];
  u32 s0 = chunk_slot[c], ne = (chunk_slot[c + 1] - s0) * 18;
  for (u32 e = lane; e < ne; e += 32) acc[e] = 0.0;
  __syncwarp();
  const unsigned char* sn = (const unsigned char*)seg_n;
  const unsigned char* ps = (const unsigned char*)pos;
  u32 pb = chunk_pos[c];
  u32 g1 = chunk_seg[c + 1];
  for (u32 g = chunk_seg[c]; g < g1; ++g) {
    u32 cnt = sn[g];
    const double* xb = xv + (u64)seg_x[g] * 9;
    const double* yb0 = yv + (u64)seg_y[g] * 18;
    double x0 = __ldg(xb + 0);
    double x1 = __ldg(xb + 1);
    double x2 = __ldg(xb + 2);
    double x3 = __ldg(xb + 3);
    double x4 = __ldg(xb + 4);
    double x5 = __ldg(xb + 5);
    double x6 = __ldg(xb + 6);
    double x7 = __ldg(xb + 7);
    double x8 = __ldg(xb + 8);
    for (u32 t = lane; t < cnt * 6; t += 32) {
      u32 b = t / 6, j = t - b * 6;
      const double* yb = yb0 + (u64)b * 18;
      double* o = acc + (u32)ps[pb + b] * 18 + j;
      double y0 = __ldg(yb + 0 * 6 + j);
      double y1 = __ldg(yb + 1 * 6 + j);
      double y2 = __ldg(yb + 2 * 6 + j);
      { double a = o[0];
        a = a + x0 * y0;
        a = a + x1 * y1;
        a = a + x2 * y2;
        o[0] = a; }
      { double a = o[6];
        a = a + x3 * y0;
        a = a + x4 * y1;
        a = a + x5 * y2;
        o[6] = a; }
      { double a = o[12];
        a = a + x6 * y0;
        a = a + x7 * y1;
        a = a + x8 * y2;
        o[12] = a; }
    }
    pb += cnt;
    __syncwarp();
  }
  for (u32 e = lane; e < ne; e += 32) cv[(u64)s0 * 18 + e] = acc[e];
}

// outer-product scatter pass (3x3 by 3x6), atomic accumulation
extern "C" __global__ void ptap_scatter_3x3x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ rslot, double* __restrict__ cv, unsigned int nrecords) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nrecords * 18) return;
  u32 q = (u32)(t / 18); u32 e = (u32)(t % 18);
  u32 i = e / 6, j = e % 6;
  const double* xb = xv + (u64)rx[q] * 9;
  const double* yb = yv + (u64)ry[q] * 18;
  double v = 0.0;
  v = v + xb[(i)*3+(0)] * yb[0 * 6 + j];
  v = v + xb[(i)*3+(1)] * yb[1 * 6 + j];
  v = v + xb[(i)*3+(2)] * yb[2 * 6 + j];
  atomicAdd(cv + (u64)rslot[q] * 18 + e, v);
}

// slot-tiled stage (6x3 by 3x6), 128 slots per block, register accumulators
extern "C" __global__ void ptap_slot_tiled_6x3x6t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double tile[128 * 36];
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
  double a9 = 0.0;
  double a10 = 0.0;
  double a11 = 0.0;
  double a12 = 0.0;
  double a13 = 0.0;
  double a14 = 0.0;
  double a15 = 0.0;
  double a16 = 0.0;
  double a17 = 0.0;
  double a18 = 0.0;
  double a19 = 0.0;
  double a20 = 0.0;
  double a21 = 0.0;
  double a22 = 0.0;
  double a23 = 0.0;
  double a24 = 0.0;
  double a25 = 0.0;
  double a26 = 0.0;
  double a27 = 0.0;
  double a28 = 0.0;
  double a29 = 0.0;
  double a30 = 0.0;
  double a31 = 0.0;
  double a32 = 0.0;
  double a33 = 0.0;
  double a34 = 0.0;
  double a35 = 0.0;
  if (s < nslots) {
    for (u32 q = ptr[s]; q < ptr[s + 1]; ++q) {
      const double* xb = xv + (u64)rx[q] * 18;
      const double* yb = yv + (u64)ry[q] * 18;
      double y0_0 = yb[0];
      double y0_1 = yb[1];
      double y0_2 = yb[2];
      double y0_3 = yb[3];
      double y0_4 = yb[4];
      double y0_5 = yb[5];
      double y1_0 = yb[6];
      double y1_1 = yb[7];
      double y1_2 = yb[8];
      double y1_3 = yb[9];
      double y1_4 = yb[10];
      double y1_5 = yb[11];
      double y2_0 = yb[12];
      double y2_1 = yb[13];
      double y2_2 = yb[14];
      double y2_3 = yb[15];
      double y2_4 = yb[16];
      double y2_5 = yb[17];
      { double x = xb[(0)*6+(0)];
        a0 = a0 + x * y0_0;
        a1 = a1 + x * y0_1;
        a2 = a2 + x * y0_2;
        a3 = a3 + x * y0_3;
        a4 = a4 + x * y0_4;
        a5 = a5 + x * y0_5;
      }
      { double x = xb[(0)*6+(1)];
        a6 = a6 + x * y0_0;
        a7 = a7 + x * y0_1;
        a8 = a8 + x * y0_2;
        a9 = a9 + x * y0_3;
        a10 = a10 + x * y0_4;
        a11 = a11 + x * y0_5;
      }
      { double x = xb[(0)*6+(2)];
        a12 = a12 + x * y0_0;
        a13 = a13 + x * y0_1;
        a14 = a14 + x * y0_2;
        a15 = a15 + x * y0_3;
        a16 = a16 + x * y0_4;
        a17 = a17 + x * y0_5;
      }
      { double x = xb[(0)*6+(3)];
        a18 = a18 + x * y0_0;
        a19 = a19 + x * y0_1;
        a20 = a20 + x * y0_2;
        a21 = a21 + x * y0_3;
        a22 = a22 + x * y0_4;
        a23 = a23 + x * y0_5;
      }
      { double x = xb[(0)*6+(4)];
        a24 = a24 + x * y0_0;
        a25 = a25 + x * y0_1;
        a26 = a26 + x * y0_2;
        a27 = a27 + x * y0_3;
        a28 = a28 + x * y0_4;
        a29 = a29 + x * y0_5;
      }
      { double x = xb[(0)*6+(5)];
        a30 = a30 + x * y0_0;
        a31 = a31 + x * y0_1;
        a32 = a32 + x * y0_2;
        a33 = a33 + x * y0_3;
        a34 = a34 + x * y0_4;
        a35 = a35 + x * y0_5;
      }
      { double x = xb[(1)*6+(0)];
        a0 = a0 + x * y1_0;
        a1 = a1 + x * y1_1;
        a2 = a2 + x * y1_2;
        a3 = a3 + x * y1_3;
        a4 = a4 + x * y1_4;
        a5 = a5 + x * y1_5;
      }
      { double x = xb[(1)*6+(1)];
        a6 = a6 + x * y1_0;
        a7 = a7 + x * y1_1;
        a8 = a8 + x * y1_2;
        a9 = a9 + x * y1_3;
        a10 = a10 + x * y1_4;
        a11 = a11 + x * y1_5;
      }
      { double x = xb[(1)*6+(2)];
        a12 = a12 + x * y1_0;
        a13 = a13 + x * y1_1;
        a14 = a14 + x * y1_2;
        a15 = a15 + x * y1_3;
        a16 = a16 + x * y1_4;
        a17 = a17 + x * y1_5;
      }
      { double x = xb[(1)*6+(3)];
        a18 = a18 + x * y1_0;
        a19 = a19 + x * y1_1;
        a20 = a20 + x * y1_2;
        a21 = a21 + x * y1_3;
        a22 = a22 + x * y1_4;
        a23 = a23 + x * y1_5;
      }
      { double x = xb[(1)*6+(4)];
        a24 = a24 + x * y1_0;
        a25 = a25 + x * y1_1;
        a26 = a26 + x * y1_2;
        a27 = a27 + x * y1_3;
        a28 = a28 + x * y1_4;
        a29 = a29 + x * y1_5;
      }
      { double x = xb[(1)*6+(5)];
        a30 = a30 + x * y1_0;
        a31 = a31 + x * y1_1;
        a32 = a32 + x * y1_2;
        a33 = a33 + x * y1_3;
        a34 = a34 + x * y1_4;
        a35 = a35 + x * y1_5;
      }
      { double x = xb[(2)*6+(0)];
        a0 = a0 + x * y2_0;
        a1 = a1 + x * y2_1;
        a2 = a2 + x * y2_2;
        a3 = a3 + x * y2_3;
        a4 = a4 + x * y2_4;
        a5 = a5 + x * y2_5;
      }
      { double x = xb[(2)*6+(1)];
        a6 = a6 + x * y2_0;
        a7 = a7 + x * y2_1;
        a8 = a8 + x * y2_2;
        a9 = a9 + x * y2_3;
        a10 = a10 + x * y2_4;
        a11 = a11 + x * y2_5;
      }
      { double x = xb[(2)*6+(2)];
        a12 = a12 + x * y2_0;
        a13 = a13 + x * y2_1;
        a14 = a14 + x * y2_2;
        a15 = a15 + x * y2_3;
        a16 = a16 + x * y2_4;
        a17 = a17 + x * y2_5;
      }
      { double x = xb[(2)*6+(3)];
        a18 = a18 + x * y2_0;
        a19 = a19 + x * y2_1;
        a20 = a20 + x * y2_2;
        a21 = a21 + x * y2_3;
        a22 = a22 + x * y2_4;
        a23 = a23 + x * y2_5;
      }
      { double x = xb[(2)*6+(4)];
        a24 = a24 + x * y2_0;
        a25 = a25 + x * y2_1;
        a26 = a26 + x * y2_2;
        a27 = a27 + x * y2_3;
        a28 = a28 + x * y2_4;
        a29 = a29 + x * y2_5;
      }
      { double x = xb[(2)*6+(5)];
        a30 = a30 + x * y2_0;
        a31 = a31 + x * y2_1;
        a32 = a32 + x * y2_2;
        a33 = a33 + x * y2_3;
        a34 = a34 + x * y2_4;
        a35 = a35 + x * y2_5;
      }
    }
  }
  tile[threadIdx.x * 36 + 0] = a0;
  tile[threadIdx.x * 36 + 1] = a1;
  tile[threadIdx.x * 36 + 2] = a2;
  tile[threadIdx.x * 36 + 3] = a3;
  tile[threadIdx.x * 36 + 4] = a4;
  tile[threadIdx.x * 36 + 5] = a5;
  tile[threadIdx.x * 36 + 6] = a6;
  tile[threadIdx.x * 36 + 7] = a7;
  tile[threadIdx.x * 36 + 8] = a8;
  tile[threadIdx.x * 36 + 9] = a9;
  tile[threadIdx.x * 36 + 10] = a10;
  tile[threadIdx.x * 36 + 11] = a11;
  tile[threadIdx.x * 36 + 12] = a12;
  tile[threadIdx.x * 36 + 13] = a13;
  tile[threadIdx.x * 36 + 14] = a14;
  tile[threadIdx.x * 36 + 15] = a15;
  tile[threadIdx.x * 36 + 16] = a16;
  tile[threadIdx.x * 36 + 17] = a17;
  tile[threadIdx.x * 36 + 18] = a18;
  tile[threadIdx.x * 36 + 19] = a19;
  tile[threadIdx.x * 36 + 20] = a20;
  tile[threadIdx.x * 36 + 21] = a21;
  tile[threadIdx.x * 36 + 22] = a22;
  tile[threadIdx.x * 36 + 23] = a23;
  tile[threadIdx.x * 36 + 24] = a24;
  tile[threadIdx.x * 36 + 25] = a25;
  tile[threadIdx.x * 36 + 26] = a26;
  tile[threadIdx.x * 36 + 27] = a27;
  tile[threadIdx.x * 36 + 28] = a28;
  tile[threadIdx.x * 36 + 29] = a29;
  tile[threadIdx.x * 36 + 30] = a30;
  tile[threadIdx.x * 36 + 31] = a31;
  tile[threadIdx.x * 36 + 32] = a32;
  tile[threadIdx.x * 36 + 33] = a33;
  tile[threadIdx.x * 36 + 34] = a34;
  tile[threadIdx.x * 36 + 35] = a35;
  __syncthreads();
  u32 valid = nslots - s0 < 128 ? nslots - s0 : 128;
  for (u32 e = threadIdx.x; e < valid * 36; e += 128) cv[(u64)s0 * 36 + e] = tile[e];
}

// column-split stage (6x3 by 3x6), 6 lanes per slot, 5 slots per warp, one window per block, x staged in shared memory, 2 contributions per step, 6 indices per fetch
extern "C" __global__ void ptap_column_split_6x3x6t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots, unsigned int window) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  extern __shared__ double2 cs_smem[];
  u32 lane = threadIdx.x & 31, gw = lane / 6;
  if (gw >= 5) return;
  u32 j = lane - gw * 6;
  u32 g = (threadIdx.x >> 5) * 5 + gw;
  if (g >= window) return;
  u32 idx = blockIdx.x * window + g;
  if (idx >= nslots) return;
  u32 s = order[idx];
  double* sx = (double*)((char*)cs_smem + (u64)g * 336);
  u32* si = (u32*)(sx + 36);
  const u32 gm = 63u << (gw * 6);
  double c0 = 0.0;
  double c1 = 0.0;
  double c2 = 0.0;
  double c3 = 0.0;
  double c4 = 0.0;
  double c5 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 6) {
    u32 cnt = q1 - q0 < 6 ? q1 - q0 : 6;
    { u32 e = 0 + j; if (e < cnt) { si[e] = rx[q0 + e]; si[6 + e] = ry[q0 + e]; } }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double y0_0 = 0.0, y0_1 = 0.0, y0_2 = 0.0;
      {
        const double2* xs_g = (const double2*)(xv + (u64)si[t + 0] * 18);
        const double* yb = yv + (u64)si[6 + t + 0] * 18;
        double2* xs_s = (double2*)(sx + 0);
        xs_s[0 + j] = xs_g[0 + j];
        if (6 + j < 9) xs_s[6 + j] = xs_g[6 + j];
        y0_0 = yb[0 * 6 + j];
        y0_1 = yb[1 * 6 + j];
        y0_2 = yb[2 * 6 + j];
      }
      double y1_0 = 0.0, y1_1 = 0.0, y1_2 = 0.0;
      if (t + 1 < cnt) {
        const double2* xs_g = (const double2*)(xv + (u64)si[t + 1] * 18);
        const double* yb = yv + (u64)si[6 + t + 1] * 18;
        double2* xs_s = (double2*)(sx + 18);
        xs_s[0 + j] = xs_g[0 + j];
        if (6 + j < 9) xs_s[6 + j] = xs_g[6 + j];
        y1_0 = yb[0 * 6 + j];
        y1_1 = yb[1 * 6 + j];
        y1_2 = yb[2 * 6 + j];
      }
      __syncwarp(gm);
      double2 x0_0 = ((const double2*)(sx + 0))[0];
      double2 x0_1 = ((const double2*)(sx + 0))[1];
      double2 x0_2 = ((const double2*)(sx + 0))[2];
      double2 x0_3 = ((const double2*)(sx + 0))[3];
      double2 x0_4 = ((const double2*)(sx + 0))[4];
      double2 x0_5 = ((const double2*)(sx + 0))[5];
      double2 x0_6 = ((const double2*)(sx + 0))[6];
      double2 x0_7 = ((const double2*)(sx + 0))[7];
      double2 x0_8 = ((const double2*)(sx + 0))[8];
      c0 = c0 + x0_0.x * y0_0;
      c1 = c1 + x0_0.y * y0_0;
      c2 = c2 + x0_1.x * y0_0;
      c3 = c3 + x0_1.y * y0_0;
      c4 = c4 + x0_2.x * y0_0;
      c5 = c5 + x0_2.y * y0_0;
      c0 = c0 + x0_3.x * y0_1;
      c1 = c1 + x0_3.y * y0_1;
      c2 = c2 + x0_4.x * y0_1;
      c3 = c3 + x0_4.y * y0_1;
      c4 = c4 + x0_5.x * y0_1;
      c5 = c5 + x0_5.y * y0_1;
      c0 = c0 + x0_6.x * y0_2;
      c1 = c1 + x0_6.y * y0_2;
      c2 = c2 + x0_7.x * y0_2;
      c3 = c3 + x0_7.y * y0_2;
      c4 = c4 + x0_8.x * y0_2;
      c5 = c5 + x0_8.y * y0_2;
      if (t + 1 < cnt) {
      double2 x1_0 = ((const double2*)(sx + 18))[0];
      double2 x1_1 = ((const double2*)(sx + 18))[1];
      double2 x1_2 = ((const double2*)(sx + 18))[2];
      double2 x1_3 = ((const double2*)(sx + 18))[3];
      double2 x1_4 = ((const double2*)(sx + 18))[4];
      double2 x1_5 = ((const double2*)(sx + 18))[5];
      double2 x1_6 = ((const double2*)(sx + 18))[6];
      double2 x1_7 = ((const double2*)(sx + 18))[7];
      double2 x1_8 = ((const double2*)(sx + 18))[8];
      c0 = c0 + x1_0.x * y1_0;
      c1 = c1 + x1_0.y * y1_0;
      c2 = c2 + x1_1.x * y1_0;
      c3 = c3 + x1_1.y * y1_0;
      c4 = c4 + x1_2.x * y1_0;
      c5 = c5 + x1_2.y * y1_0;
      c0 = c0 + x1_3.x * y1_1;
      c1 = c1 + x1_3.y * y1_1;
      c2 = c2 + x1_4.x * y1_1;
      c3 = c3 + x1_4.y * y1_1;
      c4 = c4 + x1_5.x * y1_1;
      c5 = c5 + x1_5.y * y1_1;
      c0 = c0 + x1_6.x * y1_2;
      c1 = c1 + x1_6.y * y1_2;
      c2 = c2 + x1_7.x * y1_2;
      c3 = c3 + x1_7.y * y1_2;
      c4 = c4 + x1_8.x * y1_2;
      c5 = c5 + x1_8.y * y1_2;
      }
      __syncwarp(gm);
    }
  }
  cv[(u64)s * 36 + 0 + j] = c0;
  cv[(u64)s * 36 + 6 + j] = c1;
  cv[(u64)s * 36 + 12 + j] = c2;
  cv[(u64)s * 36 + 18 + j] = c3;
  cv[(u64)s * 36 + 24 + j] = c4;
  cv[(u64)s * 36 + 30 + j] = c5;
}

// flat-stream stage (6x3 by 3x6), one warp per record tile
extern "C" __global__ void ptap_flat_stream_6x3x6t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ rslot, const unsigned int* __restrict__ tile_rows, const unsigned int* __restrict__ tile_records, const unsigned int* __restrict__ c_rp, double* __restrict__ cv, unsigned int ntiles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u32 w = (u32)(((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (w >= ntiles) return;
  u64 e0 = (u64)c_rp[tile_rows[w]] * 36, e1 = (u64)c_rp[tile_rows[w + 1]] * 36;
  for (u64 e = e0 + lane; e < e1; e += 32) cv[e] = 0.0;
  __syncwarp();
  for (u32 q = tile_records[w]; q < tile_records[w + 1]; ++q) {
    const double* xb = xv + (u64)rx[q] * 18;
    const double* yb = yv + (u64)ry[q] * 18;
    double* cb = cv + (u64)rslot[q] * 36;
    for (u32 e = lane; e < 36; e += 32) {
      u32 i = e / 6, j = e % 6;
      double c = cb[e];
      c = c + xb[(0)*6+(i)] * yb[0 * 6 + j];
      c = c + xb[(1)*6+(i)] * yb[1 * 6 + j];
      c = c + xb[(2)*6+(i)] * yb[2 * 6 + j];
      cb[e] = c;
    }
  }
}

// lane-tiled stage (6x3 by 3x6), 9 lanes per slot each owning 2x2 outputs, 3 slots per warp, operands read straight into registers, 2 contributions per step
extern "C" __global__ void ptap_lane_tiled_6x3x6t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
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
  u32 xo = ti * 2;
  u32 yo = tj * 2;
  double c0_0 = 0.0;
  double c0_1 = 0.0;
  double c1_0 = 0.0;
  double c1_1 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 9) {
    u32 cnt = q1 - q0 < 9 ? q1 - q0 : 9;
    if (r < cnt) { si[r] = rx[q0 + r]; si[9 + r] = ry[q0 + r]; }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double x0_0_0 = 0.0, x0_0_1 = 0.0, x0_0_2 = 0.0, x0_1_0 = 0.0, x0_1_1 = 0.0, x0_1_2 = 0.0;
      double y0_0_0 = 0.0, y0_0_1 = 0.0, y0_1_0 = 0.0, y0_1_1 = 0.0, y0_2_0 = 0.0, y0_2_1 = 0.0;
      {
        const double* xb = xv + (u64)si[t + 0] * 18 + xo;
        const double* yb = yv + (u64)si[9 + t + 0] * 18 + yo;
        { double2 v = ((const double2*)(yb + 0))[0]; y0_0_0 = v.x; y0_0_1 = v.y; }
        { double2 v = ((const double2*)(yb + 6))[0]; y0_1_0 = v.x; y0_1_1 = v.y; }
        { double2 v = ((const double2*)(yb + 12))[0]; y0_2_0 = v.x; y0_2_1 = v.y; }
        { double2 v = ((const double2*)(xb + 0))[0]; x0_0_0 = v.x; x0_1_0 = v.y; }
        { double2 v = ((const double2*)(xb + 6))[0]; x0_0_1 = v.x; x0_1_1 = v.y; }
        { double2 v = ((const double2*)(xb + 12))[0]; x0_0_2 = v.x; x0_1_2 = v.y; }
      }
      double x1_0_0 = 0.0, x1_0_1 = 0.0, x1_0_2 = 0.0, x1_1_0 = 0.0, x1_1_1 = 0.0, x1_1_2 = 0.0;
      double y1_0_0 = 0.0, y1_0_1 = 0.0, y1_1_0 = 0.0, y1_1_1 = 0.0, y1_2_0 = 0.0, y1_2_1 = 0.0;
      if (t + 1 < cnt) {
        const double* xb = xv + (u64)si[t + 1] * 18 + xo;
        const double* yb = yv + (u64)si[9 + t + 1] * 18 + yo;
        { double2 v = ((const double2*)(yb + 0))[0]; y1_0_0 = v.x; y1_0_1 = v.y; }
        { double2 v = ((const double2*)(yb + 6))[0]; y1_1_0 = v.x; y1_1_1 = v.y; }
        { double2 v = ((const double2*)(yb + 12))[0]; y1_2_0 = v.x; y1_2_1 = v.y; }
        { double2 v = ((const double2*)(xb + 0))[0]; x1_0_0 = v.x; x1_1_0 = v.y; }
        { double2 v = ((const double2*)(xb + 6))[0]; x1_0_1 = v.x; x1_1_1 = v.y; }
        { double2 v = ((const double2*)(xb + 12))[0]; x1_0_2 = v.x; x1_1_2 = v.y; }
      }
      c0_0 = c0_0 + x0_0_0 * y0_0_0;
      c0_0 = c0_0 + x0_0_1 * y0_1_0;
      c0_0 = c0_0 + x0_0_2 * y0_2_0;
      c0_1 = c0_1 + x0_0_0 * y0_0_1;
      c0_1 = c0_1 + x0_0_1 * y0_1_1;
      c0_1 = c0_1 + x0_0_2 * y0_2_1;
      c1_0 = c1_0 + x0_1_0 * y0_0_0;
      c1_0 = c1_0 + x0_1_1 * y0_1_0;
      c1_0 = c1_0 + x0_1_2 * y0_2_0;
      c1_1 = c1_1 + x0_1_0 * y0_0_1;
      c1_1 = c1_1 + x0_1_1 * y0_1_1;
      c1_1 = c1_1 + x0_1_2 * y0_2_1;
      if (t + 1 < cnt) {
      c0_0 = c0_0 + x1_0_0 * y1_0_0;
      c0_0 = c0_0 + x1_0_1 * y1_1_0;
      c0_0 = c0_0 + x1_0_2 * y1_2_0;
      c0_1 = c0_1 + x1_0_0 * y1_0_1;
      c0_1 = c0_1 + x1_0_1 * y1_1_1;
      c0_1 = c0_1 + x1_0_2 * y1_2_1;
      c1_0 = c1_0 + x1_1_0 * y1_0_0;
      c1_0 = c1_0 + x1_1_1 * y1_1_0;
      c1_0 = c1_0 + x1_1_2 * y1_2_0;
      c1_1 = c1_1 + x1_1_0 * y1_0_1;
      c1_1 = c1_1 + x1_1_1 * y1_1_1;
      c1_1 = c1_1 + x1_1_2 * y1_2_1;
      }
    }
    __syncwarp(gm);
  }
  double* cb = cv + (u64)s * 36;
  cb[(ti * 2 + 0) * 6 + tj * 2 + 0] = c0_0;
  cb[(ti * 2 + 0) * 6 + tj * 2 + 1] = c0_1;
  cb[(ti * 2 + 1) * 6 + tj * 2 + 0] = c1_0;
  cb[(ti * 2 + 1) * 6 + tj * 2 + 1] = c1_1;
}

// k-split stage (6x3 by 3x6), 9 lanes per slot each owning inner index kk and 2 columns, 3 slots per warp, 8 warps per block, 2 contributions per step, partials added in kk order
extern "C" __global__ void ptap_k_split_6x3x6t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
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
  double* sx = (double*)((char*)ks_smem + (u64)gl * 912);
  u32* si = (u32*)(sx + 36);
  const u32 gm = 511u << (gw * 9);
  u32 yo = kk * 6 + c * 2;
  double c0_0 = 0.0;
  double c0_1 = 0.0;
  double c1_0 = 0.0;
  double c1_1 = 0.0;
  double c2_0 = 0.0;
  double c2_1 = 0.0;
  double c3_0 = 0.0;
  double c3_1 = 0.0;
  double c4_0 = 0.0;
  double c4_1 = 0.0;
  double c5_0 = 0.0;
  double c5_1 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 9) {
    u32 cnt = q1 - q0 < 9 ? q1 - q0 : 9;
    if (r < cnt) { si[r] = rx[q0 + r]; si[9 + r] = ry[q0 + r]; }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double y0_0 = 0.0, y0_1 = 0.0;
      {
        const double2* xs_g = (const double2*)(xv + (u64)si[t + 0] * 18);
        double2* xs_s = (double2*)(sx + 0);
        const double* yb = yv + (u64)si[9 + t + 0] * 18 + yo;
        xs_s[0 + r] = xs_g[0 + r];
        { double2 v = ((const double2*)(yb + 0))[0]; y0_0 = v.x; y0_1 = v.y; }
      }
      double y1_0 = 0.0, y1_1 = 0.0;
      if (t + 1 < cnt) {
        const double2* xs_g = (const double2*)(xv + (u64)si[t + 1] * 18);
        double2* xs_s = (double2*)(sx + 18);
        const double* yb = yv + (u64)si[9 + t + 1] * 18 + yo;
        xs_s[0 + r] = xs_g[0 + r];
        { double2 v = ((const double2*)(yb + 0))[0]; y1_0 = v.x; y1_1 = v.y; }
      }
      __syncwarp(gm);
      double2 x0_0 = ((const double2*)(sx + 0 + kk * 6))[0];
      double2 x0_1 = ((const double2*)(sx + 0 + kk * 6))[1];
      double2 x0_2 = ((const double2*)(sx + 0 + kk * 6))[2];
      { double x = x0_0.x;
        c0_0 = c0_0 + x * y0_0;
        c0_1 = c0_1 + x * y0_1;
      }
      { double x = x0_0.y;
        c1_0 = c1_0 + x * y0_0;
        c1_1 = c1_1 + x * y0_1;
      }
      { double x = x0_1.x;
        c2_0 = c2_0 + x * y0_0;
        c2_1 = c2_1 + x * y0_1;
      }
      { double x = x0_1.y;
        c3_0 = c3_0 + x * y0_0;
        c3_1 = c3_1 + x * y0_1;
      }
      { double x = x0_2.x;
        c4_0 = c4_0 + x * y0_0;
        c4_1 = c4_1 + x * y0_1;
      }
      { double x = x0_2.y;
        c5_0 = c5_0 + x * y0_0;
        c5_1 = c5_1 + x * y0_1;
      }
      if (t + 1 < cnt) {
      double2 x1_0 = ((const double2*)(sx + 18 + kk * 6))[0];
      double2 x1_1 = ((const double2*)(sx + 18 + kk * 6))[1];
      double2 x1_2 = ((const double2*)(sx + 18 + kk * 6))[2];
      { double x = x1_0.x;
        c0_0 = c0_0 + x * y1_0;
        c0_1 = c0_1 + x * y1_1;
      }
      { double x = x1_0.y;
        c1_0 = c1_0 + x * y1_0;
        c1_1 = c1_1 + x * y1_1;
      }
      { double x = x1_1.x;
        c2_0 = c2_0 + x * y1_0;
        c2_1 = c2_1 + x * y1_1;
      }
      { double x = x1_1.y;
        c3_0 = c3_0 + x * y1_0;
        c3_1 = c3_1 + x * y1_1;
      }
      { double x = x1_2.x;
        c4_0 = c4_0 + x * y1_0;
        c4_1 = c4_1 + x * y1_1;
      }
      { double x = x1_2.y;
        c5_0 = c5_0 + x * y1_0;
        c5_1 = c5_1 + x * y1_1;
      }
      }
      __syncwarp(gm);
    }
  }
  double* part = sx;
  part[(kk * 6 + 0) * 6 + c * 2 + 0] = c0_0;
  part[(kk * 6 + 0) * 6 + c * 2 + 1] = c0_1;
  part[(kk * 6 + 1) * 6 + c * 2 + 0] = c1_0;
  part[(kk * 6 + 1) * 6 + c * 2 + 1] = c1_1;
  part[(kk * 6 + 2) * 6 + c * 2 + 0] = c2_0;
  part[(kk * 6 + 2) * 6 + c * 2 + 1] = c2_1;
  part[(kk * 6 + 3) * 6 + c * 2 + 0] = c3_0;
  part[(kk * 6 + 3) * 6 + c * 2 + 1] = c3_1;
  part[(kk * 6 + 4) * 6 + c * 2 + 0] = c4_0;
  part[(kk * 6 + 4) * 6 + c * 2 + 1] = c4_1;
  part[(kk * 6 + 5) * 6 + c * 2 + 0] = c5_0;
  part[(kk * 6 + 5) * 6 + c * 2 + 1] = c5_1;
  __syncwarp(gm);
  double* cb = cv + (u64)s * 36;
  for (u32 e = r; e < 36; e += 9) {
    double v = part[e];
    v = v + part[36 + e];
    v = v + part[72 + e];
    cb[e] = v;
  }
}

// tensor-core stage (6x3 by 3x6), one warp per slot, 1 FP64 m8n8k4 MMA per contribution, 4 contributions per step
extern "C" __global__ void ptap_mma_6x3x6t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
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
  const double* xl0 = xv + (r < 6 && (0 + t) < 3 ? (0 + t) * 6 + r : 0);
  const double* yl0 = yv + (r < 6 && (0 + t) < 3 ? (0 + t) * 6 + r : 0);
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
      double a0_0 = __ldg(xl0 + (u64)xi0 * 18), b0_0 = __ldg(yl0 + (u64)yi0 * 18) * ym0;
      u32 xi1 = __shfl_sync(0xffffffffu, idx, u + 1), yi1 = __shfl_sync(0xffffffffu, idx, 16 + u + 1);
      double a1_0 = __ldg(xl0 + (u64)xi1 * 18), b1_0 = __ldg(yl0 + (u64)yi1 * 18) * ym0;
      u32 xi2 = __shfl_sync(0xffffffffu, idx, u + 2), yi2 = __shfl_sync(0xffffffffu, idx, 16 + u + 2);
      double a2_0 = __ldg(xl0 + (u64)xi2 * 18), b2_0 = __ldg(yl0 + (u64)yi2 * 18) * ym0;
      u32 xi3 = __shfl_sync(0xffffffffu, idx, u + 3), yi3 = __shfl_sync(0xffffffffu, idx, 16 + u + 3);
      double a3_0 = __ldg(xl0 + (u64)xi3 * 18), b3_0 = __ldg(yl0 + (u64)yi3 * 18) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a3_0), "d"(b3_0));
    }
    for (; u < cnt; ++u) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = __ldg(xl0 + (u64)xi0 * 18), b0_0 = __ldg(yl0 + (u64)yi0 * 18) * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    }
  }
  u32 c0 = 2 * t;
  double* cb = cv + (u64)s * 36;
  if (r < 6 && c0 < 6) *(double2*)(cb + r * 6 + c0) = make_double2(d0, d1);
#else
  __trap();
#endif
}

// tensor-pair stage (6x3 by 3x6, Single), one warp per unit of 1 slot(s), 1 FP64 m8n8k4 MMA per entry and side, 4 entries per step, the last ones as one guarded step
extern "C" __global__ void ptap_mma2_6x3x6t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ uptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (w >= nunits) return;
  u32 r = lane >> 2, t = lane & 3;
  const bool av0 = r < 6 && (0 + t) < 3, bv0 = r < 6 && (0 + t) < 3;
  const double* xl0 = xv + (av0 ? (0 + t) * 6 + r : (r < 6 ? r : 5));
  const double* yl0 = yv + (bv0 ? (0 + t) * 6 + r : (r < 6 ? r : 5));
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
    b0_0 = __ldg(yl0 + (u64)e0.y * 18) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 18);
    double b1_0 = 0.0, a1_0 = 0.0;
    b1_0 = __ldg(yl0 + (u64)e1.y * 18) * ym0;
    a1_0 = __ldg(xl0 + (u64)e1.x * 18);
    double b2_0 = 0.0, a2_0 = 0.0;
    b2_0 = __ldg(yl0 + (u64)e2.y * 18) * ym0;
    a2_0 = __ldg(xl0 + (u64)e2.x * 18);
    double b3_0 = 0.0, a3_0 = 0.0;
    b3_0 = __ldg(yl0 + (u64)e3.y * 18) * ym0;
    a3_0 = __ldg(xl0 + (u64)e3.x * 18);
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
    b0_0 = __ldg(yl0 + (u64)e0.y * 18) * ym0;
    a0_0 = __ldg(xl0 + (u64)e0.x * 18);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (1 < rem) { b1_0 = __ldg(yl0 + (u64)e1.y * 18) * ym0; a1_0 = __ldg(xl0 + (u64)e1.x * 18); }
    double b2_0 = 0.0, a2_0 = 0.0;
    if (2 < rem) { b2_0 = __ldg(yl0 + (u64)e2.y * 18) * ym0; a2_0 = __ldg(xl0 + (u64)e2.x * 18); }
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    if (1 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    if (2 < rem) asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a2_0), "d"(b2_0));
  }
  u32 c0 = 2 * t;
  {
  u32 s = uslot[1 * w + 0];
  double* cb = cv + (u64)s * 36;
  if (s != 0xffffffffu && r < 6) {
    if (c0 < 6) *(double2*)(cb + r * 6 + c0) = make_double2(d0, d1);
  }
  }
#else
  __trap();
#endif
}

// row-Gustavson stage (6x3 by 3x6), one warp per chunk of 32 output slots, 4 warps per block
extern "C" __global__ void ptap_row_gustavson_6x3x6t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ chunk_slot, const unsigned int* __restrict__ chunk_seg, const unsigned int* __restrict__ chunk_pos, const unsigned int* __restrict__ seg_x, const unsigned int* __restrict__ seg_y, const unsigned int* __restrict__ seg_n, const unsigned int* __restrict__ pos, double* __restrict__ cv, unsigned int nchunks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double rg_acc[4][32 * 36];
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u32 c = blockIdx.x * 4 + wl;
  if (c >= nchunks) return;
  double* acc = rg_acc[wl];
  u32 s0 = chunk_slot[c], ne = (chunk_slot[c + 1] - s0) * 36;
  for (u32 e = lane; e < ne; e += 32) acc[e] = 0.0;
  __syncwarp();
  const unsigned char* sn = (const unsigned char*)seg_n;
  const unsigned char* ps = (const unsigned char*)pos;
  u32 pb = chunk_pos[c];
  u32 g1 = chunk_seg[c + 1];
  for (u32 g = chunk_seg[c]; g < g1; ++g) {
    u32 cnt = sn[g];
    const double* xb = xv + (u64)seg_x[g] * 18;
    const double* yb0 = yv + (u64)seg_y[g] * 18;
    double x0 = __ldg(xb + 0);
    double x1 = __ldg(xb + 1);
    double x2 = __ldg(xb + 2);
    double x3 = __ldg(xb + 3);
    double x4 = __ldg(xb + 4);
    double x5 = __ldg(xb + 5);
    double x6 = __ldg(xb + 6);
    double x7 = __ldg(xb + 7);
    double x8 = __ldg(xb + 8);
    double x9 = __ldg(xb + 9);
    double x10 = __ldg(xb + 10);
    double x11 = __ldg(xb + 11);
    double x12 = __ldg(xb + 12);
    double x13 = __ldg(xb + 13);
    double x14 = __ldg(xb + 14);
    double x15 = __ldg(xb + 15);
    double x16 = __ldg(xb + 16);
    double x17 = __ldg(xb + 17);
    for (u32 t = lane; t < cnt * 6; t += 32) {
      u32 b = t / 6, j = t - b * 6;
      const double* yb = yb0 + (u64)b * 18;
      double* o = acc + (u32)ps[pb + b] * 36 + j;
      double y0 = __ldg(yb + 0 * 6 + j);
      double y1 = __ldg(yb + 1 * 6 + j);
      double y2 = __ldg(yb + 2 * 6 + j);
      { double a = o[0];
        a = a + x0 * y0;
        a = a + x6 * y1;
        a = a + x12 * y2;
        o[0] = a; }
      { double a = o[6];
        a = a + x1 * y0;
        a = a + x7 * y1;
        a = a + x13 * y2;
        o[6] = a; }
      { double a = o[12];
        a = a + x2 * y0;
        a = a + x8 * y1;
        a = a + x14 * y2;
        o[12] = a; }
      { double a = o[18];
        a = a + x3 * y0;
        a = a + x9 * y1;
        a = a + x15 * y2;
        o[18] = a; }
      { double a = o[24];
        a = a + x4 * y0;
        a = a + x10 * y1;
        a = a + x16 * y2;
        o[24] = a; }
      { double a = o[30];
        a = a + x5 * y0;
        a = a + x11 * y1;
        a = a + x17 * y2;
        o[30] = a; }
    }
    pb += cnt;
    __syncwarp();
  }
  for (u32 e = lane; e < ne; e += 32) cv[(u64)s0 * 36 + e] = acc[e];
}

// outer-product scatter pass (6x3 by 3x6), atomic accumulation
extern "C" __global__ void ptap_scatter_6x3x6t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ rslot, double* __restrict__ cv, unsigned int nrecords) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nrecords * 36) return;
  u32 q = (u32)(t / 36); u32 e = (u32)(t % 36);
  u32 i = e / 6, j = e % 6;
  const double* xb = xv + (u64)rx[q] * 18;
  const double* yb = yv + (u64)ry[q] * 18;
  double v = 0.0;
  v = v + xb[(0)*6+(i)] * yb[0 * 6 + j];
  v = v + xb[(1)*6+(i)] * yb[1 * 6 + j];
  v = v + xb[(2)*6+(i)] * yb[2 * 6 + j];
  atomicAdd(cv + (u64)rslot[q] * 36 + e, v);
}

// R = P^T, 6x6 blocks gathered from transposed 6x6 blocks of P
extern "C" __global__ void ptap_gather_r_6x6(const double* __restrict__ pv, const unsigned int* __restrict__ src, double* __restrict__ rv, unsigned int nblocks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nblocks * 36) return;
  u32 b = (u32)(t / 36); u32 e = (u32)(t % 36);
  u32 i = e / 6, j = e % 6;
  rv[t] = pv[(u64)src[b] * 36 + j * 6 + i];
}

// two-pass stage C = X Y (6x6 by 6x6), one thread per output scalar
extern "C" __global__ void ptap_row_owner_6x6x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ x_rp, const unsigned int* __restrict__ x_ci, const unsigned int* __restrict__ y_rp, const unsigned int* __restrict__ y_ci, const unsigned int* __restrict__ c_row, const unsigned int* __restrict__ c_ci, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nslots * 36) return;
  u32 s = (u32)(t / 36); u32 e = (u32)(t % 36);
  u32 i = e / 6, j = e % 6;
  u32 row = c_row[s], col = c_ci[s];
  double acc = 0.0;
  for (u32 kx = x_rp[row]; kx < x_rp[row + 1]; ++kx) {
    u32 l = x_ci[kx];
    u32 lo = y_rp[l], hi = y_rp[l + 1], end = hi;
    while (lo < hi) { u32 mid = (lo + hi) >> 1; if (y_ci[mid] < col) lo = mid + 1; else hi = mid; }
    if (lo < end && y_ci[lo] == col) {
      const double* xb = xv + (u64)kx * 36;
      const double* yb = yv + (u64)lo * 36;
      acc = acc + xb[(i)*6+(0)] * yb[0 * 6 + j];
      acc = acc + xb[(i)*6+(1)] * yb[1 * 6 + j];
      acc = acc + xb[(i)*6+(2)] * yb[2 * 6 + j];
      acc = acc + xb[(i)*6+(3)] * yb[3 * 6 + j];
      acc = acc + xb[(i)*6+(4)] * yb[4 * 6 + j];
      acc = acc + xb[(i)*6+(5)] * yb[5 * 6 + j];
    }
  }
  cv[t] = acc;
}

// slot-tiled stage (6x6 by 6x6), 128 slots per block, register accumulators
extern "C" __global__ void ptap_slot_tiled_6x6x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double tile[128 * 36];
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
  double a9 = 0.0;
  double a10 = 0.0;
  double a11 = 0.0;
  double a12 = 0.0;
  double a13 = 0.0;
  double a14 = 0.0;
  double a15 = 0.0;
  double a16 = 0.0;
  double a17 = 0.0;
  double a18 = 0.0;
  double a19 = 0.0;
  double a20 = 0.0;
  double a21 = 0.0;
  double a22 = 0.0;
  double a23 = 0.0;
  double a24 = 0.0;
  double a25 = 0.0;
  double a26 = 0.0;
  double a27 = 0.0;
  double a28 = 0.0;
  double a29 = 0.0;
  double a30 = 0.0;
  double a31 = 0.0;
  double a32 = 0.0;
  double a33 = 0.0;
  double a34 = 0.0;
  double a35 = 0.0;
  if (s < nslots) {
    for (u32 q = ptr[s]; q < ptr[s + 1]; ++q) {
      const double* xb = xv + (u64)rx[q] * 36;
      const double* yb = yv + (u64)ry[q] * 36;
      double y0_0 = yb[0];
      double y0_1 = yb[1];
      double y0_2 = yb[2];
      double y0_3 = yb[3];
      double y0_4 = yb[4];
      double y0_5 = yb[5];
      double y1_0 = yb[6];
      double y1_1 = yb[7];
      double y1_2 = yb[8];
      double y1_3 = yb[9];
      double y1_4 = yb[10];
      double y1_5 = yb[11];
      double y2_0 = yb[12];
      double y2_1 = yb[13];
      double y2_2 = yb[14];
      double y2_3 = yb[15];
      double y2_4 = yb[16];
      double y2_5 = yb[17];
      double y3_0 = yb[18];
      double y3_1 = yb[19];
      double y3_2 = yb[20];
      double y3_3 = yb[21];
      double y3_4 = yb[22];
      double y3_5 = yb[23];
      double y4_0 = yb[24];
      double y4_1 = yb[25];
      double y4_2 = yb[26];
      double y4_3 = yb[27];
      double y4_4 = yb[28];
      double y4_5 = yb[29];
      double y5_0 = yb[30];
      double y5_1 = yb[31];
      double y5_2 = yb[32];
      double y5_3 = yb[33];
      double y5_4 = yb[34];
      double y5_5 = yb[35];
      { double x = xb[(0)*6+(0)];
        a0 = a0 + x * y0_0;
        a1 = a1 + x * y0_1;
        a2 = a2 + x * y0_2;
        a3 = a3 + x * y0_3;
        a4 = a4 + x * y0_4;
        a5 = a5 + x * y0_5;
      }
      { double x = xb[(1)*6+(0)];
        a6 = a6 + x * y0_0;
        a7 = a7 + x * y0_1;
        a8 = a8 + x * y0_2;
        a9 = a9 + x * y0_3;
        a10 = a10 + x * y0_4;
        a11 = a11 + x * y0_5;
      }
      { double x = xb[(2)*6+(0)];
        a12 = a12 + x * y0_0;
        a13 = a13 + x * y0_1;
        a14 = a14 + x * y0_2;
        a15 = a15 + x * y0_3;
        a16 = a16 + x * y0_4;
        a17 = a17 + x * y0_5;
      }
      { double x = xb[(3)*6+(0)];
        a18 = a18 + x * y0_0;
        a19 = a19 + x * y0_1;
        a20 = a20 + x * y0_2;
        a21 = a21 + x * y0_3;
        a22 = a22 + x * y0_4;
        a23 = a23 + x * y0_5;
      }
      { double x = xb[(4)*6+(0)];
        a24 = a24 + x * y0_0;
        a25 = a25 + x * y0_1;
        a26 = a26 + x * y0_2;
        a27 = a27 + x * y0_3;
        a28 = a28 + x * y0_4;
        a29 = a29 + x * y0_5;
      }
      { double x = xb[(5)*6+(0)];
        a30 = a30 + x * y0_0;
        a31 = a31 + x * y0_1;
        a32 = a32 + x * y0_2;
        a33 = a33 + x * y0_3;
        a34 = a34 + x * y0_4;
        a35 = a35 + x * y0_5;
      }
      { double x = xb[(0)*6+(1)];
        a0 = a0 + x * y1_0;
        a1 = a1 + x * y1_1;
        a2 = a2 + x * y1_2;
        a3 = a3 + x * y1_3;
        a4 = a4 + x * y1_4;
        a5 = a5 + x * y1_5;
      }
      { double x = xb[(1)*6+(1)];
        a6 = a6 + x * y1_0;
        a7 = a7 + x * y1_1;
        a8 = a8 + x * y1_2;
        a9 = a9 + x * y1_3;
        a10 = a10 + x * y1_4;
        a11 = a11 + x * y1_5;
      }
      { double x = xb[(2)*6+(1)];
        a12 = a12 + x * y1_0;
        a13 = a13 + x * y1_1;
        a14 = a14 + x * y1_2;
        a15 = a15 + x * y1_3;
        a16 = a16 + x * y1_4;
        a17 = a17 + x * y1_5;
      }
      { double x = xb[(3)*6+(1)];
        a18 = a18 + x * y1_0;
        a19 = a19 + x * y1_1;
        a20 = a20 + x * y1_2;
        a21 = a21 + x * y1_3;
        a22 = a22 + x * y1_4;
        a23 = a23 + x * y1_5;
      }
      { double x = xb[(4)*6+(1)];
        a24 = a24 + x * y1_0;
        a25 = a25 + x * y1_1;
        a26 = a26 + x * y1_2;
        a27 = a27 + x * y1_3;
        a28 = a28 + x * y1_4;
        a29 = a29 + x * y1_5;
      }
      { double x = xb[(5)*6+(1)];
        a30 = a30 + x * y1_0;
        a31 = a31 + x * y1_1;
        a32 = a32 + x * y1_2;
        a33 = a33 + x * y1_3;
        a34 = a34 + x * y1_4;
        a35 = a35 + x * y1_5;
      }
      { double x = xb[(0)*6+(2)];
        a0 = a0 + x * y2_0;
        a1 = a1 + x * y2_1;
        a2 = a2 + x * y2_2;
        a3 = a3 + x * y2_3;
        a4 = a4 + x * y2_4;
        a5 = a5 + x * y2_5;
      }
      { double x = xb[(1)*6+(2)];
        a6 = a6 + x * y2_0;
        a7 = a7 + x * y2_1;
        a8 = a8 + x * y2_2;
        a9 = a9 + x * y2_3;
        a10 = a10 + x * y2_4;
        a11 = a11 + x * y2_5;
      }
      { double x = xb[(2)*6+(2)];
        a12 = a12 + x * y2_0;
        a13 = a13 + x * y2_1;
        a14 = a14 + x * y2_2;
        a15 = a15 + x * y2_3;
        a16 = a16 + x * y2_4;
        a17 = a17 + x * y2_5;
      }
      { double x = xb[(3)*6+(2)];
        a18 = a18 + x * y2_0;
        a19 = a19 + x * y2_1;
        a20 = a20 + x * y2_2;
        a21 = a21 + x * y2_3;
        a22 = a22 + x * y2_4;
        a23 = a23 + x * y2_5;
      }
      { double x = xb[(4)*6+(2)];
        a24 = a24 + x * y2_0;
        a25 = a25 + x * y2_1;
        a26 = a26 + x * y2_2;
        a27 = a27 + x * y2_3;
        a28 = a28 + x * y2_4;
        a29 = a29 + x * y2_5;
      }
      { double x = xb[(5)*6+(2)];
        a30 = a30 + x * y2_0;
        a31 = a31 + x * y2_1;
        a32 = a32 + x * y2_2;
        a33 = a33 + x * y2_3;
        a34 = a34 + x * y2_4;
        a35 = a35 + x * y2_5;
      }
      { double x = xb[(0)*6+(3)];
        a0 = a0 + x * y3_0;
        a1 = a1 + x * y3_1;
        a2 = a2 + x * y3_2;
        a3 = a3 + x * y3_3;
        a4 = a4 + x * y3_4;
        a5 = a5 + x * y3_5;
      }
      { double x = xb[(1)*6+(3)];
        a6 = a6 + x * y3_0;
        a7 = a7 + x * y3_1;
        a8 = a8 + x * y3_2;
        a9 = a9 + x * y3_3;
        a10 = a10 + x * y3_4;
        a11 = a11 + x * y3_5;
      }
      { double x = xb[(2)*6+(3)];
        a12 = a12 + x * y3_0;
        a13 = a13 + x * y3_1;
        a14 = a14 + x * y3_2;
        a15 = a15 + x * y3_3;
        a16 = a16 + x * y3_4;
        a17 = a17 + x * y3_5;
      }
      { double x = xb[(3)*6+(3)];
        a18 = a18 + x * y3_0;
        a19 = a19 + x * y3_1;
        a20 = a20 + x * y3_2;
        a21 = a21 + x * y3_3;
        a22 = a22 + x * y3_4;
        a23 = a23 + x * y3_5;
      }
      { double x = xb[(4)*6+(3)];
        a24 = a24 + x * y3_0;
        a25 = a25 + x * y3_1;
        a26 = a26 + x * y3_2;
        a27 = a27 + x * y3_3;
        a28 = a28 + x * y3_4;
        a29 = a29 + x * y3_5;
      }
      { double x = xb[(5)*6+(3)];
        a30 = a30 + x * y3_0;
        a31 = a31 + x * y3_1;
        a32 = a32 + x * y3_2;
        a33 = a33 + x * y3_3;
        a34 = a34 + x * y3_4;
        a35 = a35 + x * y3_5;
      }
      { double x = xb[(0)*6+(4)];
        a0 = a0 + x * y4_0;
        a1 = a1 + x * y4_1;
        a2 = a2 + x * y4_2;
        a3 = a3 + x * y4_3;
        a4 = a4 + x * y4_4;
        a5 = a5 + x * y4_5;
      }
      { double x = xb[(1)*6+(4)];
        a6 = a6 + x * y4_0;
        a7 = a7 + x * y4_1;
        a8 = a8 + x * y4_2;
        a9 = a9 + x * y4_3;
        a10 = a10 + x * y4_4;
        a11 = a11 + x * y4_5;
      }
      { double x = xb[(2)*6+(4)];
        a12 = a12 + x * y4_0;
        a13 = a13 + x * y4_1;
        a14 = a14 + x * y4_2;
        a15 = a15 + x * y4_3;
        a16 = a16 + x * y4_4;
        a17 = a17 + x * y4_5;
      }
      { double x = xb[(3)*6+(4)];
        a18 = a18 + x * y4_0;
        a19 = a19 + x * y4_1;
        a20 = a20 + x * y4_2;
        a21 = a21 + x * y4_3;
        a22 = a22 + x * y4_4;
        a23 = a23 + x * y4_5;
      }
      { double x = xb[(4)*6+(4)];
        a24 = a24 + x * y4_0;
        a25 = a25 + x * y4_1;
        a26 = a26 + x * y4_2;
        a27 = a27 + x * y4_3;
        a28 = a28 + x * y4_4;
        a29 = a29 + x * y4_5;
      }
      { double x = xb[(5)*6+(4)];
        a30 = a30 + x * y4_0;
        a31 = a31 + x * y4_1;
        a32 = a32 + x * y4_2;
        a33 = a33 + x * y4_3;
        a34 = a34 + x * y4_4;
        a35 = a35 + x * y4_5;
      }
      { double x = xb[(0)*6+(5)];
        a0 = a0 + x * y5_0;
        a1 = a1 + x * y5_1;
        a2 = a2 + x * y5_2;
        a3 = a3 + x * y5_3;
        a4 = a4 + x * y5_4;
        a5 = a5 + x * y5_5;
      }
      { double x = xb[(1)*6+(5)];
        a6 = a6 + x * y5_0;
        a7 = a7 + x * y5_1;
        a8 = a8 + x * y5_2;
        a9 = a9 + x * y5_3;
        a10 = a10 + x * y5_4;
        a11 = a11 + x * y5_5;
      }
      { double x = xb[(2)*6+(5)];
        a12 = a12 + x * y5_0;
        a13 = a13 + x * y5_1;
        a14 = a14 + x * y5_2;
        a15 = a15 + x * y5_3;
        a16 = a16 + x * y5_4;
        a17 = a17 + x * y5_5;
      }
      { double x = xb[(3)*6+(5)];
        a18 = a18 + x * y5_0;
        a19 = a19 + x * y5_1;
        a20 = a20 + x * y5_2;
        a21 = a21 + x * y5_3;
        a22 = a22 + x * y5_4;
        a23 = a23 + x * y5_5;
      }
      { double x = xb[(4)*6+(5)];
        a24 = a24 + x * y5_0;
        a25 = a25 + x * y5_1;
        a26 = a26 + x * y5_2;
        a27 = a27 + x * y5_3;
        a28 = a28 + x * y5_4;
        a29 = a29 + x * y5_5;
      }
      { double x = xb[(5)*6+(5)];
        a30 = a30 + x * y5_0;
        a31 = a31 + x * y5_1;
        a32 = a32 + x * y5_2;
        a33 = a33 + x * y5_3;
        a34 = a34 + x * y5_4;
        a35 = a35 + x * y5_5;
      }
    }
  }
  tile[threadIdx.x * 36 + 0] = a0;
  tile[threadIdx.x * 36 + 1] = a1;
  tile[threadIdx.x * 36 + 2] = a2;
  tile[threadIdx.x * 36 + 3] = a3;
  tile[threadIdx.x * 36 + 4] = a4;
  tile[threadIdx.x * 36 + 5] = a5;
  tile[threadIdx.x * 36 + 6] = a6;
  tile[threadIdx.x * 36 + 7] = a7;
  tile[threadIdx.x * 36 + 8] = a8;
  tile[threadIdx.x * 36 + 9] = a9;
  tile[threadIdx.x * 36 + 10] = a10;
  tile[threadIdx.x * 36 + 11] = a11;
  tile[threadIdx.x * 36 + 12] = a12;
  tile[threadIdx.x * 36 + 13] = a13;
  tile[threadIdx.x * 36 + 14] = a14;
  tile[threadIdx.x * 36 + 15] = a15;
  tile[threadIdx.x * 36 + 16] = a16;
  tile[threadIdx.x * 36 + 17] = a17;
  tile[threadIdx.x * 36 + 18] = a18;
  tile[threadIdx.x * 36 + 19] = a19;
  tile[threadIdx.x * 36 + 20] = a20;
  tile[threadIdx.x * 36 + 21] = a21;
  tile[threadIdx.x * 36 + 22] = a22;
  tile[threadIdx.x * 36 + 23] = a23;
  tile[threadIdx.x * 36 + 24] = a24;
  tile[threadIdx.x * 36 + 25] = a25;
  tile[threadIdx.x * 36 + 26] = a26;
  tile[threadIdx.x * 36 + 27] = a27;
  tile[threadIdx.x * 36 + 28] = a28;
  tile[threadIdx.x * 36 + 29] = a29;
  tile[threadIdx.x * 36 + 30] = a30;
  tile[threadIdx.x * 36 + 31] = a31;
  tile[threadIdx.x * 36 + 32] = a32;
  tile[threadIdx.x * 36 + 33] = a33;
  tile[threadIdx.x * 36 + 34] = a34;
  tile[threadIdx.x * 36 + 35] = a35;
  __syncthreads();
  u32 valid = nslots - s0 < 128 ? nslots - s0 : 128;
  for (u32 e = threadIdx.x; e < valid * 36; e += 128) cv[(u64)s0 * 36 + e] = tile[e];
}

// column-split stage (6x6 by 6x6), 6 lanes per slot, 5 slots per warp, one window per block, x staged in shared memory, 1 contributions per step, 6 indices per fetch
extern "C" __global__ void ptap_column_split_6x6x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots, unsigned int window) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  extern __shared__ double2 cs_smem[];
  u32 lane = threadIdx.x & 31, gw = lane / 6;
  if (gw >= 5) return;
  u32 j = lane - gw * 6;
  u32 g = (threadIdx.x >> 5) * 5 + gw;
  if (g >= window) return;
  u32 idx = blockIdx.x * window + g;
  if (idx >= nslots) return;
  u32 s = order[idx];
  double* sx = (double*)((char*)cs_smem + (u64)g * 336);
  u32* si = (u32*)(sx + 36);
  const u32 gm = 63u << (gw * 6);
  double c0 = 0.0;
  double c1 = 0.0;
  double c2 = 0.0;
  double c3 = 0.0;
  double c4 = 0.0;
  double c5 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 6) {
    u32 cnt = q1 - q0 < 6 ? q1 - q0 : 6;
    { u32 e = 0 + j; if (e < cnt) { si[e] = rx[q0 + e]; si[6 + e] = ry[q0 + e]; } }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 1) {
      double y0_0 = 0.0, y0_1 = 0.0, y0_2 = 0.0, y0_3 = 0.0, y0_4 = 0.0, y0_5 = 0.0;
      {
        const double2* xs_g = (const double2*)(xv + (u64)si[t + 0] * 36);
        const double* yb = yv + (u64)si[6 + t + 0] * 36;
        double2* xs_s = (double2*)(sx + 0);
        xs_s[0 + j] = xs_g[0 + j];
        xs_s[6 + j] = xs_g[6 + j];
        xs_s[12 + j] = xs_g[12 + j];
        y0_0 = yb[0 * 6 + j];
        y0_1 = yb[1 * 6 + j];
        y0_2 = yb[2 * 6 + j];
        y0_3 = yb[3 * 6 + j];
        y0_4 = yb[4 * 6 + j];
        y0_5 = yb[5 * 6 + j];
      }
      __syncwarp(gm);
      double2 x0_0 = ((const double2*)(sx + 0))[0];
      double2 x0_1 = ((const double2*)(sx + 0))[1];
      double2 x0_2 = ((const double2*)(sx + 0))[2];
      double2 x0_3 = ((const double2*)(sx + 0))[3];
      double2 x0_4 = ((const double2*)(sx + 0))[4];
      double2 x0_5 = ((const double2*)(sx + 0))[5];
      double2 x0_6 = ((const double2*)(sx + 0))[6];
      double2 x0_7 = ((const double2*)(sx + 0))[7];
      double2 x0_8 = ((const double2*)(sx + 0))[8];
      double2 x0_9 = ((const double2*)(sx + 0))[9];
      double2 x0_10 = ((const double2*)(sx + 0))[10];
      double2 x0_11 = ((const double2*)(sx + 0))[11];
      double2 x0_12 = ((const double2*)(sx + 0))[12];
      double2 x0_13 = ((const double2*)(sx + 0))[13];
      double2 x0_14 = ((const double2*)(sx + 0))[14];
      double2 x0_15 = ((const double2*)(sx + 0))[15];
      double2 x0_16 = ((const double2*)(sx + 0))[16];
      double2 x0_17 = ((const double2*)(sx + 0))[17];
      c0 = c0 + x0_0.x * y0_0;
      c1 = c1 + x0_3.x * y0_0;
      c2 = c2 + x0_6.x * y0_0;
      c3 = c3 + x0_9.x * y0_0;
      c4 = c4 + x0_12.x * y0_0;
      c5 = c5 + x0_15.x * y0_0;
      c0 = c0 + x0_0.y * y0_1;
      c1 = c1 + x0_3.y * y0_1;
      c2 = c2 + x0_6.y * y0_1;
      c3 = c3 + x0_9.y * y0_1;
      c4 = c4 + x0_12.y * y0_1;
      c5 = c5 + x0_15.y * y0_1;
      c0 = c0 + x0_1.x * y0_2;
      c1 = c1 + x0_4.x * y0_2;
      c2 = c2 + x0_7.x * y0_2;
      c3 = c3 + x0_10.x * y0_2;
      c4 = c4 + x0_13.x * y0_2;
      c5 = c5 + x0_16.x * y0_2;
      c0 = c0 + x0_1.y * y0_3;
      c1 = c1 + x0_4.y * y0_3;
      c2 = c2 + x0_7.y * y0_3;
      c3 = c3 + x0_10.y * y0_3;
      c4 = c4 + x0_13.y * y0_3;
      c5 = c5 + x0_16.y * y0_3;
      c0 = c0 + x0_2.x * y0_4;
      c1 = c1 + x0_5.x * y0_4;
      c2 = c2 + x0_8.x * y0_4;
      c3 = c3 + x0_11.x * y0_4;
      c4 = c4 + x0_14.x * y0_4;
      c5 = c5 + x0_17.x * y0_4;
      c0 = c0 + x0_2.y * y0_5;
      c1 = c1 + x0_5.y * y0_5;
      c2 = c2 + x0_8.y * y0_5;
      c3 = c3 + x0_11.y * y0_5;
      c4 = c4 + x0_14.y * y0_5;
      c5 = c5 + x0_17.y * y0_5;
      __syncwarp(gm);
    }
  }
  cv[(u64)s * 36 + 0 + j] = c0;
  cv[(u64)s * 36 + 6 + j] = c1;
  cv[(u64)s * 36 + 12 + j] = c2;
  cv[(u64)s * 36 + 18 + j] = c3;
  cv[(u64)s * 36 + 24 + j] = c4;
  cv[(u64)s * 36 + 30 + j] = c5;
}

// flat-stream stage (6x6 by 6x6), one warp per record tile
extern "C" __global__ void ptap_flat_stream_6x6x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ rslot, const unsigned int* __restrict__ tile_rows, const unsigned int* __restrict__ tile_records, const unsigned int* __restrict__ c_rp, double* __restrict__ cv, unsigned int ntiles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u32 w = (u32)(((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (w >= ntiles) return;
  u64 e0 = (u64)c_rp[tile_rows[w]] * 36, e1 = (u64)c_rp[tile_rows[w + 1]] * 36;
  for (u64 e = e0 + lane; e < e1; e += 32) cv[e] = 0.0;
  __syncwarp();
  for (u32 q = tile_records[w]; q < tile_records[w + 1]; ++q) {
    const double* xb = xv + (u64)rx[q] * 36;
    const double* yb = yv + (u64)ry[q] * 36;
    double* cb = cv + (u64)rslot[q] * 36;
    for (u32 e = lane; e < 36; e += 32) {
      u32 i = e / 6, j = e % 6;
      double c = cb[e];
      c = c + xb[(i)*6+(0)] * yb[0 * 6 + j];
      c = c + xb[(i)*6+(1)] * yb[1 * 6 + j];
      c = c + xb[(i)*6+(2)] * yb[2 * 6 + j];
      c = c + xb[(i)*6+(3)] * yb[3 * 6 + j];
      c = c + xb[(i)*6+(4)] * yb[4 * 6 + j];
      c = c + xb[(i)*6+(5)] * yb[5 * 6 + j];
      cb[e] = c;
    }
  }
}

// lane-tiled stage (6x6 by 6x6), 18 lanes per slot each owning 1x2 outputs, 1 slots per warp, operands read straight into registers, 2 contributions per step
extern "C" __global__ void ptap_lane_tiled_6x6x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ u32 lt_idx[8 * 36];
  u32 lane = threadIdx.x & 31, gw = lane / 18;
  if (gw >= 1) return;
  u32 r = lane - gw * 18;
  u32 ti = r / 3, tj = r - ti * 3;
  u32 gl = (threadIdx.x >> 5) * 1 + gw;
  u32 idx = blockIdx.x * 8 + gl;
  if (idx >= nslots) return;
  u32 s = order[idx];
  u32* si = lt_idx + gl * 36;
  const u32 gm = 262143u << (gw * 18);
  u32 xo = ti * 6;
  u32 yo = tj * 2;
  double c0_0 = 0.0;
  double c0_1 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 18) {
    u32 cnt = q1 - q0 < 18 ? q1 - q0 : 18;
    if (r < cnt) { si[r] = rx[q0 + r]; si[18 + r] = ry[q0 + r]; }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double x0_0_0 = 0.0, x0_0_1 = 0.0, x0_0_2 = 0.0, x0_0_3 = 0.0, x0_0_4 = 0.0, x0_0_5 = 0.0;
      double y0_0_0 = 0.0, y0_0_1 = 0.0, y0_1_0 = 0.0, y0_1_1 = 0.0, y0_2_0 = 0.0, y0_2_1 = 0.0, y0_3_0 = 0.0, y0_3_1 = 0.0, y0_4_0 = 0.0, y0_4_1 = 0.0, y0_5_0 = 0.0, y0_5_1 = 0.0;
      {
        const double* xb = xv + (u64)si[t + 0] * 36 + xo;
        const double* yb = yv + (u64)si[18 + t + 0] * 36 + yo;
        { double2 v = ((const double2*)(yb + 0))[0]; y0_0_0 = v.x; y0_0_1 = v.y; }
        { double2 v = ((const double2*)(yb + 6))[0]; y0_1_0 = v.x; y0_1_1 = v.y; }
        { double2 v = ((const double2*)(yb + 12))[0]; y0_2_0 = v.x; y0_2_1 = v.y; }
        { double2 v = ((const double2*)(yb + 18))[0]; y0_3_0 = v.x; y0_3_1 = v.y; }
        { double2 v = ((const double2*)(yb + 24))[0]; y0_4_0 = v.x; y0_4_1 = v.y; }
        { double2 v = ((const double2*)(yb + 30))[0]; y0_5_0 = v.x; y0_5_1 = v.y; }
        { double2 v = ((const double2*)(xb + 0))[0]; x0_0_0 = v.x; x0_0_1 = v.y; }
        { double2 v = ((const double2*)(xb + 0))[1]; x0_0_2 = v.x; x0_0_3 = v.y; }
        { double2 v = ((const double2*)(xb + 0))[2]; x0_0_4 = v.x; x0_0_5 = v.y; }
      }
      double x1_0_0 = 0.0, x1_0_1 = 0.0, x1_0_2 = 0.0, x1_0_3 = 0.0, x1_0_4 = 0.0, x1_0_5 = 0.0;
      double y1_0_0 = 0.0, y1_0_1 = 0.0, y1_1_0 = 0.0, y1_1_1 = 0.0, y1_2_0 = 0.0, y1_2_1 = 0.0, y1_3_0 = 0.0, y1_3_1 = 0.0, y1_4_0 = 0.0, y1_4_1 = 0.0, y1_5_0 = 0.0, y1_5_1 = 0.0;
      if (t + 1 < cnt) {
        const double* xb = xv + (u64)si[t + 1] * 36 + xo;
        const double* yb = yv + (u64)si[18 + t + 1] * 36 + yo;
        { double2 v = ((const double2*)(yb + 0))[0]; y1_0_0 = v.x; y1_0_1 = v.y; }
        { double2 v = ((const double2*)(yb + 6))[0]; y1_1_0 = v.x; y1_1_1 = v.y; }
        { double2 v = ((const double2*)(yb + 12))[0]; y1_2_0 = v.x; y1_2_1 = v.y; }
        { double2 v = ((const double2*)(yb + 18))[0]; y1_3_0 = v.x; y1_3_1 = v.y; }
        { double2 v = ((const double2*)(yb + 24))[0]; y1_4_0 = v.x; y1_4_1 = v.y; }
        { double2 v = ((const double2*)(yb + 30))[0]; y1_5_0 = v.x; y1_5_1 = v.y; }
        { double2 v = ((const double2*)(xb + 0))[0]; x1_0_0 = v.x; x1_0_1 = v.y; }
        { double2 v = ((const double2*)(xb + 0))[1]; x1_0_2 = v.x; x1_0_3 = v.y; }
        { double2 v = ((const double2*)(xb + 0))[2]; x1_0_4 = v.x; x1_0_5 = v.y; }
      }
      c0_0 = c0_0 + x0_0_0 * y0_0_0;
      c0_0 = c0_0 + x0_0_1 * y0_1_0;
      c0_0 = c0_0 + x0_0_2 * y0_2_0;
      c0_0 = c0_0 + x0_0_3 * y0_3_0;
      c0_0 = c0_0 + x0_0_4 * y0_4_0;
      c0_0 = c0_0 + x0_0_5 * y0_5_0;
      c0_1 = c0_1 + x0_0_0 * y0_0_1;
      c0_1 = c0_1 + x0_0_1 * y0_1_1;
      c0_1 = c0_1 + x0_0_2 * y0_2_1;
      c0_1 = c0_1 + x0_0_3 * y0_3_1;
      c0_1 = c0_1 + x0_0_4 * y0_4_1;
      c0_1 = c0_1 + x0_0_5 * y0_5_1;
      if (t + 1 < cnt) {
      c0_0 = c0_0 + x1_0_0 * y1_0_0;
      c0_0 = c0_0 + x1_0_1 * y1_1_0;
      c0_0 = c0_0 + x1_0_2 * y1_2_0;
      c0_0 = c0_0 + x1_0_3 * y1_3_0;
      c0_0 = c0_0 + x1_0_4 * y1_4_0;
      c0_0 = c0_0 + x1_0_5 * y1_5_0;
      c0_1 = c0_1 + x1_0_0 * y1_0_1;
      c0_1 = c0_1 + x1_0_1 * y1_1_1;
      c0_1 = c0_1 + x1_0_2 * y1_2_1;
      c0_1 = c0_1 + x1_0_3 * y1_3_1;
      c0_1 = c0_1 + x1_0_4 * y1_4_1;
      c0_1 = c0_1 + x1_0_5 * y1_5_1;
      }
    }
    __syncwarp(gm);
  }
  double* cb = cv + (u64)s * 36;
  cb[(ti * 1 + 0) * 6 + tj * 2 + 0] = c0_0;
  cb[(ti * 1 + 0) * 6 + tj * 2 + 1] = c0_1;
}

// k-split stage (6x6 by 6x6), 18 lanes per slot each owning inner index kk and 2 columns, 1 slots per warp, 8 warps per block, 1 contributions per step, partials added in kk order
extern "C" __global__ void ptap_k_split_6x6x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  extern __shared__ double2 ks_smem[];
  u32 lane = threadIdx.x & 31, gw = lane / 18;
  if (gw >= 1) return;
  u32 r = lane - gw * 18;
  u32 kk = r / 3, c = r - kk * 3;
  u32 gl = (threadIdx.x >> 5) * 1 + gw;
  u32 idx = blockIdx.x * 8 + gl;
  if (idx >= nslots) return;
  u32 s = order[idx];
  double* sx = (double*)((char*)ks_smem + (u64)gl * 1824);
  u32* si = (u32*)(sx + 36);
  const u32 gm = 262143u << (gw * 18);
  u32 yo = kk * 6 + c * 2;
  double c0_0 = 0.0;
  double c0_1 = 0.0;
  double c1_0 = 0.0;
  double c1_1 = 0.0;
  double c2_0 = 0.0;
  double c2_1 = 0.0;
  double c3_0 = 0.0;
  double c3_1 = 0.0;
  double c4_0 = 0.0;
  double c4_1 = 0.0;
  double c5_0 = 0.0;
  double c5_1 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 18) {
    u32 cnt = q1 - q0 < 18 ? q1 - q0 : 18;
    if (r < cnt) { si[r] = rx[q0 + r]; si[18 + r] = ry[q0 + r]; }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 1) {
      double y0_0 = 0.0, y0_1 = 0.0;
      {
        const double2* xs_g = (const double2*)(xv + (u64)si[t + 0] * 36);
        double2* xs_s = (double2*)(sx + 0);
        const double* yb = yv + (u64)si[18 + t + 0] * 36 + yo;
        xs_s[0 + r] = xs_g[0 + r];
        { double2 v = ((const double2*)(yb + 0))[0]; y0_0 = v.x; y0_1 = v.y; }
      }
      __syncwarp(gm);
      { double x = sx[0 + 0 + kk];
        c0_0 = c0_0 + x * y0_0;
        c0_1 = c0_1 + x * y0_1;
      }
      { double x = sx[0 + 6 + kk];
        c1_0 = c1_0 + x * y0_0;
        c1_1 = c1_1 + x * y0_1;
      }
      { double x = sx[0 + 12 + kk];
        c2_0 = c2_0 + x * y0_0;
        c2_1 = c2_1 + x * y0_1;
      }
      { double x = sx[0 + 18 + kk];
        c3_0 = c3_0 + x * y0_0;
        c3_1 = c3_1 + x * y0_1;
      }
      { double x = sx[0 + 24 + kk];
        c4_0 = c4_0 + x * y0_0;
        c4_1 = c4_1 + x * y0_1;
      }
      { double x = sx[0 + 30 + kk];
        c5_0 = c5_0 + x * y0_0;
        c5_1 = c5_1 + x * y0_1;
      }
      __syncwarp(gm);
    }
  }
  double* part = sx;
  part[(kk * 6 + 0) * 6 + c * 2 + 0] = c0_0;
  part[(kk * 6 + 0) * 6 + c * 2 + 1] = c0_1;
  part[(kk * 6 + 1) * 6 + c * 2 + 0] = c1_0;
  part[(kk * 6 + 1) * 6 + c * 2 + 1] = c1_1;
  part[(kk * 6 + 2) * 6 + c * 2 + 0] = c2_0;
  part[(kk * 6 + 2) * 6 + c * 2 + 1] = c2_1;
  part[(kk * 6 + 3) * 6 + c * 2 + 0] = c3_0;
  part[(kk * 6 + 3) * 6 + c * 2 + 1] = c3_1;
  part[(kk * 6 + 4) * 6 + c * 2 + 0] = c4_0;
  part[(kk * 6 + 4) * 6 + c * 2 + 1] = c4_1;
  part[(kk * 6 + 5) * 6 + c * 2 + 0] = c5_0;
  part[(kk * 6 + 5) * 6 + c * 2 + 1] = c5_1;
  __syncwarp(gm);
  double* cb = cv + (u64)s * 36;
  for (u32 e = r; e < 36; e += 18) {
    double v = part[e];
    v = v + part[36 + e];
    v = v + part[72 + e];
    v = v + part[108 + e];
    v = v + part[144 + e];
    v = v + part[180 + e];
    cb[e] = v;
  }
}

// tensor-core stage (6x6 by 6x6), one warp per slot, 2 FP64 m8n8k4 MMA per contribution, 2 contributions per step
extern "C" __global__ void ptap_mma_6x6x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
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
  const bool av0 = r < 6 && (0 + t) < 6, bv0 = r < 6 && (0 + t) < 6;
  const double* xl0 = xv + (av0 ? r * 6 + (0 + t) : 0);
  const double* yl0 = yv + (bv0 ? (0 + t) * 6 + r : 0);
  asm("" : "+l"(xl0), "+l"(yl0));
  const bool av1 = r < 6 && (4 + t) < 6, bv1 = r < 6 && (4 + t) < 6;
  const double* xl1 = xl0 + 4;
  const double* yl1 = yl0 + 24;
  double d0 = 0.0, d1 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 16) {
    u32 cnt = q1 - q0 < 16 ? q1 - q0 : 16;
    u32 e = lane & 15;
    u32 idx = 0;
    if (e < cnt) idx = lane < 16 ? rx[q0 + e] : ry[q0 + e];
    u32 u = 0;
    for (; u + 2 <= cnt; u += 2) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = 0.0, b0_0 = 0.0;
      if (av0) a0_0 = __ldg(xl0 + (u64)xi0 * 36);
      if (bv0) b0_0 = __ldg(yl0 + (u64)yi0 * 36);
      double a0_1 = 0.0, b0_1 = 0.0;
      if (av1) a0_1 = __ldg(xl1 + (u64)xi0 * 36);
      if (bv1) b0_1 = __ldg(yl1 + (u64)yi0 * 36);
      u32 xi1 = __shfl_sync(0xffffffffu, idx, u + 1), yi1 = __shfl_sync(0xffffffffu, idx, 16 + u + 1);
      double a1_0 = 0.0, b1_0 = 0.0;
      if (av0) a1_0 = __ldg(xl0 + (u64)xi1 * 36);
      if (bv0) b1_0 = __ldg(yl0 + (u64)yi1 * 36);
      double a1_1 = 0.0, b1_1 = 0.0;
      if (av1) a1_1 = __ldg(xl1 + (u64)xi1 * 36);
      if (bv1) b1_1 = __ldg(yl1 + (u64)yi1 * 36);
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_1), "d"(b0_1));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_1), "d"(b1_1));
    }
    for (; u < cnt; ++u) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = 0.0, b0_0 = 0.0;
      if (av0) a0_0 = __ldg(xl0 + (u64)xi0 * 36);
      if (bv0) b0_0 = __ldg(yl0 + (u64)yi0 * 36);
      double a0_1 = 0.0, b0_1 = 0.0;
      if (av1) a0_1 = __ldg(xl1 + (u64)xi0 * 36);
      if (bv1) b0_1 = __ldg(yl1 + (u64)yi0 * 36);
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_1), "d"(b0_1));
    }
  }
  u32 c0 = 2 * t;
  double* cb = cv + (u64)s * 36;
  if (r < 6 && c0 < 6) *(double2*)(cb + r * 6 + c0) = make_double2(d0, d1);
#else
  __trap();
#endif
}

// tensor-core stage (6x6 by 6x6), a block's warps interleaved over `chunk` consecutive slots, 2 FP64 m8n8k4 MMA per contribution, 2 contributions per step, a run's last x block halved where its end bound has bit 31
extern "C" __global__ __launch_bounds__(256, 6) void ptap_mmah_6x6x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots, unsigned int chunk) {
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
  const bool av0 = r < 6 && (0 + t) < 6, bv0 = r < 6 && (0 + t) < 6;
  const double* xl0 = xv + (av0 ? r * 6 + (0 + t) : 0);
  const double* yl0 = yv + (bv0 ? (0 + t) * 6 + r : 0);
  asm("" : "+l"(xl0), "+l"(yl0));
  const bool av1 = r < 6 && (4 + t) < 6, bv1 = r < 6 && (4 + t) < 6;
  const double* xl1 = xl0 + 4;
  const double* yl1 = yl0 + 24;
  double d0 = 0.0, d1 = 0.0;
  u32 q1 = qb.y & 0x7fffffffu;
  for (u32 q0 = qb.x; q0 < q1; q0 += 16) {
    u32 cnt = q1 - q0 < 16 ? q1 - q0 : 16;
    u32 ce = cnt - (dg && q0 + cnt == q1 ? 1 : 0);
    u32 e = lane & 15;
    u32 idx = 0;
    if (e < cnt) idx = lane < 16 ? rx[q0 + e] : ry[q0 + e];
    u32 u = 0;
    for (; u + 2 <= ce; u += 2) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = 0.0, b0_0 = 0.0;
      if (av0) a0_0 = __ldg(xl0 + (u64)xi0 * 36);
      if (bv0) b0_0 = __ldg(yl0 + (u64)yi0 * 36);
      double a0_1 = 0.0, b0_1 = 0.0;
      if (av1) a0_1 = __ldg(xl1 + (u64)xi0 * 36);
      if (bv1) b0_1 = __ldg(yl1 + (u64)yi0 * 36);
      u32 xi1 = __shfl_sync(0xffffffffu, idx, u + 1), yi1 = __shfl_sync(0xffffffffu, idx, 16 + u + 1);
      double a1_0 = 0.0, b1_0 = 0.0;
      if (av0) a1_0 = __ldg(xl0 + (u64)xi1 * 36);
      if (bv0) b1_0 = __ldg(yl0 + (u64)yi1 * 36);
      double a1_1 = 0.0, b1_1 = 0.0;
      if (av1) a1_1 = __ldg(xl1 + (u64)xi1 * 36);
      if (bv1) b1_1 = __ldg(yl1 + (u64)yi1 * 36);
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_1), "d"(b0_1));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_1), "d"(b1_1));
    }
    for (; u < ce; ++u) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = 0.0, b0_0 = 0.0;
      if (av0) a0_0 = __ldg(xl0 + (u64)xi0 * 36);
      if (bv0) b0_0 = __ldg(yl0 + (u64)yi0 * 36);
      double a0_1 = 0.0, b0_1 = 0.0;
      if (av1) a0_1 = __ldg(xl1 + (u64)xi0 * 36);
      if (bv1) b0_1 = __ldg(yl1 + (u64)yi0 * 36);
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_1), "d"(b0_1));
    }
    if (u < cnt) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      xi0 &= 0x7fffffffu;
      double a0_0 = 0.0, b0_0 = 0.0;
      if (av0) a0_0 = __ldg(xl0 + (u64)xi0 * 36);
      if (bv0) b0_0 = __ldg(yl0 + (u64)yi0 * 36);
      double a0_1 = 0.0, b0_1 = 0.0;
      if (av1) a0_1 = __ldg(xl1 + (u64)xi0 * 36);
      if (bv1) b0_1 = __ldg(yl1 + (u64)yi0 * 36);
      d0 *= 2.0;
      d1 *= 2.0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_1), "d"(b0_1));
      d0 *= 0.5;
      d1 *= 0.5;
    }
  }
  u32 c0 = 2 * t;
  double* cb = cv + (u64)s * 36;
  if (r < 6 && c0 < 6) *(double2*)(cb + r * 6 + c0) = make_double2(d0, d1);
  }
#else
  __trap();
#endif
}

// folded P^T W' stage (6x6 by 6x6), one warp per slot (I, J) of the upper triangle summing X_IJ + X_JI^T, 2 FP64 m8n8k4 MMA per entry, 2 entries per step, each half's last ones as one guarded step; writes (I, J) and (J, I)
extern "C" __global__ void ptap_mma2f_6x6x6t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ hptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (w >= nunits) return;
  u32 r = lane >> 2, t = lane & 3;
  const bool av0 = r < 6 && (0 + t) < 6, bv0 = r < 6 && (0 + t) < 6;
  const double* xl0 = xv + (av0 ? (0 + t) * 6 + r : (r < 6 ? r : 5));
  const double* yl0 = yv + (bv0 ? (0 + t) * 6 + r : (r < 6 ? r : 5));
  asm("" : "+l"(xl0), "+l"(yl0));
  const bool av1 = r < 6 && (4 + t) < 6, bv1 = r < 6 && (4 + t) < 6;
  const double* xl1 = xl0 + 24;
  const double* yl1 = yl0 + 24;
  const uint2* ep = (const uint2*)ent;
  double d0 = 0.0, d1 = 0.0;
  u32 q = hptr[2 * w], q1 = hptr[2 * w + 1];
  for (; q + 2 <= q1; q += 2) {
    uint2 e0 = __ldg(ep + q + 0);
    uint2 e1 = __ldg(ep + q + 1);
    double b0_0 = 0.0, a0_0 = 0.0;
    if (bv0) b0_0 = __ldg(yl0 + (u64)e0.y * 36);
    if (av0) a0_0 = __ldg(xl0 + (u64)e0.x * 36);
    double b0_1 = 0.0, a0_1 = 0.0;
    if (bv1) b0_1 = __ldg(yl1 + (u64)e0.y * 36);
    if (av1) a0_1 = __ldg(xl1 + (u64)e0.x * 36);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (bv0) b1_0 = __ldg(yl0 + (u64)e1.y * 36);
    if (av0) a1_0 = __ldg(xl0 + (u64)e1.x * 36);
    double b1_1 = 0.0, a1_1 = 0.0;
    if (bv1) b1_1 = __ldg(yl1 + (u64)e1.y * 36);
    if (av1) a1_1 = __ldg(xl1 + (u64)e1.x * 36);
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_1), "d"(b0_1));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_1), "d"(b1_1));
  }
  if (q < q1) {
    u32 rem = q1 - q;
    uint2 e0 = __ldg(ep + q + 0);
    double b0_0 = 0.0, a0_0 = 0.0;
    if (bv0) b0_0 = __ldg(yl0 + (u64)e0.y * 36);
    if (av0) a0_0 = __ldg(xl0 + (u64)e0.x * 36);
    double b0_1 = 0.0, a0_1 = 0.0;
    if (bv1) b0_1 = __ldg(yl1 + (u64)e0.y * 36);
    if (av1) a0_1 = __ldg(xl1 + (u64)e0.x * 36);
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_1), "d"(b0_1));
  }
  q = q1;
  q1 = hptr[2 * w + 2];
  for (; q + 2 <= q1; q += 2) {
    uint2 e0 = __ldg(ep + q + 0);
    uint2 e1 = __ldg(ep + q + 1);
    double b0_0 = 0.0, a0_0 = 0.0;
    if (bv0) b0_0 = __ldg(yl0 + (u64)e0.y * 36);
    if (av0) a0_0 = __ldg(xl0 + (u64)e0.x * 36);
    double b0_1 = 0.0, a0_1 = 0.0;
    if (bv1) b0_1 = __ldg(yl1 + (u64)e0.y * 36);
    if (av1) a0_1 = __ldg(xl1 + (u64)e0.x * 36);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (bv0) b1_0 = __ldg(yl0 + (u64)e1.y * 36);
    if (av0) a1_0 = __ldg(xl0 + (u64)e1.x * 36);
    double b1_1 = 0.0, a1_1 = 0.0;
    if (bv1) b1_1 = __ldg(yl1 + (u64)e1.y * 36);
    if (av1) a1_1 = __ldg(xl1 + (u64)e1.x * 36);
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(b0_0), "d"(a0_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(b0_1), "d"(a0_1));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(b1_0), "d"(a1_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(b1_1), "d"(a1_1));
  }
  if (q < q1) {
    u32 rem = q1 - q;
    uint2 e0 = __ldg(ep + q + 0);
    double b0_0 = 0.0, a0_0 = 0.0;
    if (bv0) b0_0 = __ldg(yl0 + (u64)e0.y * 36);
    if (av0) a0_0 = __ldg(xl0 + (u64)e0.x * 36);
    double b0_1 = 0.0, a0_1 = 0.0;
    if (bv1) b0_1 = __ldg(yl1 + (u64)e0.y * 36);
    if (av1) a0_1 = __ldg(xl1 + (u64)e0.x * 36);
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(b0_0), "d"(a0_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(b0_1), "d"(a0_1));
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
  if (r < 6) {
    double* cb = cv + (u64)s0 * 36;
    if (c0 < 6) *(double2*)(cb + r * 6 + c0) = make_double2(d0, d1);
    if (s1 != 0xffffffffu) {
      double* ct = cv + (u64)s1 * 36;
      if (c0 < 6) ct[c0 * 6 + r] = d0; if (c0 + 1 < 6) ct[(c0 + 1) * 6 + r] = d1;
    }
  }
#else
  __trap();
#endif
}

// row-Gustavson stage (6x6 by 6x6), one warp per chunk of 32 output slots, 4 warps per block
extern "C" __global__ void ptap_row_gustavson_6x6x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ chunk_slot, const unsigned int* __restrict__ chunk_seg, const unsigned int* __restrict__ chunk_pos, const unsigned int* __restrict__ seg_x, const unsigned int* __restrict__ seg_y, const unsigned int* __restrict__ seg_n, const unsigned int* __restrict__ pos, double* __restrict__ cv, unsigned int nchunks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double rg_acc[4][32 * 36];
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u32 c = blockIdx.x * 4 + wl;
  if (c >= nchunks) return;
  double* acc = rg_acc[wl];
  u32 s0 = chunk_slot[c], ne = (chunk_slot[c + 1] - s0) * 36;
  for (u32 e = lane; e < ne; e += 32) acc[e] = 0.0;
  __syncwarp();
  const unsigned char* sn = (const unsigned char*)seg_n;
  const unsigned char* ps = (const unsigned char*)pos;
  u32 pb = chunk_pos[c];
  u32 g1 = chunk_seg[c + 1];
  for (u32 g = chunk_seg[c]; g < g1; ++g) {
    u32 cnt = sn[g];
    const double* xb = xv + (u64)seg_x[g] * 36;
    const double* yb0 = yv + (u64)seg_y[g] * 36;
    double x0 = __ldg(xb + 0);
    double x1 = __ldg(xb + 1);
    double x2 = __ldg(xb + 2);
    double x3 = __ldg(xb + 3);
    double x4 = __ldg(xb + 4);
    double x5 = __ldg(xb + 5);
    double x6 = __ldg(xb + 6);
    double x7 = __ldg(xb + 7);
    double x8 = __ldg(xb + 8);
    double x9 = __ldg(xb + 9);
    double x10 = __ldg(xb + 10);
    double x11 = __ldg(xb + 11);
    double x12 = __ldg(xb + 12);
    double x13 = __ldg(xb + 13);
    double x14 = __ldg(xb + 14);
    double x15 = __ldg(xb + 15);
    double x16 = __ldg(xb + 16);
    double x17 = __ldg(xb + 17);
    double x18 = __ldg(xb + 18);
    double x19 = __ldg(xb + 19);
    double x20 = __ldg(xb + 20);
    double x21 = __ldg(xb + 21);
    double x22 = __ldg(xb + 22);
    double x23 = __ldg(xb + 23);
    double x24 = __ldg(xb + 24);
    double x25 = __ldg(xb + 25);
    double x26 = __ldg(xb + 26);
    double x27 = __ldg(xb + 27);
    double x28 = __ldg(xb + 28);
    double x29 = __ldg(xb + 29);
    double x30 = __ldg(xb + 30);
    double x31 = __ldg(xb + 31);
    double x32 = __ldg(xb + 32);
    double x33 = __ldg(xb + 33);
    double x34 = __ldg(xb + 34);
    double x35 = __ldg(xb + 35);
    for (u32 t = lane; t < cnt * 6; t += 32) {
      u32 b = t / 6, j = t - b * 6;
      const double* yb = yb0 + (u64)b * 36;
      double* o = acc + (u32)ps[pb + b] * 36 + j;
      double y0 = __ldg(yb + 0 * 6 + j);
      double y1 = __ldg(yb + 1 * 6 + j);
      double y2 = __ldg(yb + 2 * 6 + j);
      double y3 = __ldg(yb + 3 * 6 + j);
      double y4 = __ldg(yb + 4 * 6 + j);
      double y5 = __ldg(yb + 5 * 6 + j);
      { double a = o[0];
        a = a + x0 * y0;
        a = a + x1 * y1;
        a = a + x2 * y2;
        a = a + x3 * y3;
        a = a + x4 * y4;
        a = a + x5 * y5;
        o[0] = a; }
      { double a = o[6];
        a = a + x6 * y0;
        a = a + x7 * y1;
        a = a + x8 * y2;
        a = a + x9 * y3;
        a = a + x10 * y4;
        a = a + x11 * y5;
        o[6] = a; }
      { double a = o[12];
        a = a + x12 * y0;
        a = a + x13 * y1;
        a = a + x14 * y2;
        a = a + x15 * y3;
        a = a + x16 * y4;
        a = a + x17 * y5;
        o[12] = a; }
      { double a = o[18];
        a = a + x18 * y0;
        a = a + x19 * y1;
        a = a + x20 * y2;
        a = a + x21 * y3;
        a = a + x22 * y4;
        a = a + x23 * y5;
        o[18] = a; }
      { double a = o[24];
        a = a + x24 * y0;
        a = a + x25 * y1;
        a = a + x26 * y2;
        a = a + x27 * y3;
        a = a + x28 * y4;
        a = a + x29 * y5;
        o[24] = a; }
      { double a = o[30];
        a = a + x30 * y0;
        a = a + x31 * y1;
        a = a + x32 * y2;
        a = a + x33 * y3;
        a = a + x34 * y4;
        a = a + x35 * y5;
        o[30] = a; }
    }
    pb += cnt;
    __syncwarp();
  }
  for (u32 e = lane; e < ne; e += 32) cv[(u64)s0 * 36 + e] = acc[e];
}

// outer-product scatter pass (6x6 by 6x6), atomic accumulation
extern "C" __global__ void ptap_scatter_6x6x6(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ rslot, double* __restrict__ cv, unsigned int nrecords) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nrecords * 36) return;
  u32 q = (u32)(t / 36); u32 e = (u32)(t % 36);
  u32 i = e / 6, j = e % 6;
  const double* xb = xv + (u64)rx[q] * 36;
  const double* yb = yv + (u64)ry[q] * 36;
  double v = 0.0;
  v = v + xb[(i)*6+(0)] * yb[0 * 6 + j];
  v = v + xb[(i)*6+(1)] * yb[1 * 6 + j];
  v = v + xb[(i)*6+(2)] * yb[2 * 6 + j];
  v = v + xb[(i)*6+(3)] * yb[3 * 6 + j];
  v = v + xb[(i)*6+(4)] * yb[4 * 6 + j];
  v = v + xb[(i)*6+(5)] * yb[5 * 6 + j];
  atomicAdd(cv + (u64)rslot[q] * 36 + e, v);
}

// slot-tiled stage (6x6 by 6x6), 128 slots per block, register accumulators
extern "C" __global__ void ptap_slot_tiled_6x6x6t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double tile[128 * 36];
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
  double a9 = 0.0;
  double a10 = 0.0;
  double a11 = 0.0;
  double a12 = 0.0;
  double a13 = 0.0;
  double a14 = 0.0;
  double a15 = 0.0;
  double a16 = 0.0;
  double a17 = 0.0;
  double a18 = 0.0;
  double a19 = 0.0;
  double a20 = 0.0;
  double a21 = 0.0;
  double a22 = 0.0;
  double a23 = 0.0;
  double a24 = 0.0;
  double a25 = 0.0;
  double a26 = 0.0;
  double a27 = 0.0;
  double a28 = 0.0;
  double a29 = 0.0;
  double a30 = 0.0;
  double a31 = 0.0;
  double a32 = 0.0;
  double a33 = 0.0;
  double a34 = 0.0;
  double a35 = 0.0;
  if (s < nslots) {
    for (u32 q = ptr[s]; q < ptr[s + 1]; ++q) {
      const double* xb = xv + (u64)rx[q] * 36;
      const double* yb = yv + (u64)ry[q] * 36;
      double y0_0 = yb[0];
      double y0_1 = yb[1];
      double y0_2 = yb[2];
      double y0_3 = yb[3];
      double y0_4 = yb[4];
      double y0_5 = yb[5];
      double y1_0 = yb[6];
      double y1_1 = yb[7];
      double y1_2 = yb[8];
      double y1_3 = yb[9];
      double y1_4 = yb[10];
      double y1_5 = yb[11];
      double y2_0 = yb[12];
      double y2_1 = yb[13];
      double y2_2 = yb[14];
      double y2_3 = yb[15];
      double y2_4 = yb[16];
      double y2_5 = yb[17];
      double y3_0 = yb[18];
      double y3_1 = yb[19];
      double y3_2 = yb[20];
      double y3_3 = yb[21];
      double y3_4 = yb[22];
      double y3_5 = yb[23];
      double y4_0 = yb[24];
      double y4_1 = yb[25];
      double y4_2 = yb[26];
      double y4_3 = yb[27];
      double y4_4 = yb[28];
      double y4_5 = yb[29];
      double y5_0 = yb[30];
      double y5_1 = yb[31];
      double y5_2 = yb[32];
      double y5_3 = yb[33];
      double y5_4 = yb[34];
      double y5_5 = yb[35];
      { double x = xb[(0)*6+(0)];
        a0 = a0 + x * y0_0;
        a1 = a1 + x * y0_1;
        a2 = a2 + x * y0_2;
        a3 = a3 + x * y0_3;
        a4 = a4 + x * y0_4;
        a5 = a5 + x * y0_5;
      }
      { double x = xb[(0)*6+(1)];
        a6 = a6 + x * y0_0;
        a7 = a7 + x * y0_1;
        a8 = a8 + x * y0_2;
        a9 = a9 + x * y0_3;
        a10 = a10 + x * y0_4;
        a11 = a11 + x * y0_5;
      }
      { double x = xb[(0)*6+(2)];
        a12 = a12 + x * y0_0;
        a13 = a13 + x * y0_1;
        a14 = a14 + x * y0_2;
        a15 = a15 + x * y0_3;
        a16 = a16 + x * y0_4;
        a17 = a17 + x * y0_5;
      }
      { double x = xb[(0)*6+(3)];
        a18 = a18 + x * y0_0;
        a19 = a19 + x * y0_1;
        a20 = a20 + x * y0_2;
        a21 = a21 + x * y0_3;
        a22 = a22 + x * y0_4;
        a23 = a23 + x * y0_5;
      }
      { double x = xb[(0)*6+(4)];
        a24 = a24 + x * y0_0;
        a25 = a25 + x * y0_1;
        a26 = a26 + x * y0_2;
        a27 = a27 + x * y0_3;
        a28 = a28 + x * y0_4;
        a29 = a29 + x * y0_5;
      }
      { double x = xb[(0)*6+(5)];
        a30 = a30 + x * y0_0;
        a31 = a31 + x * y0_1;
        a32 = a32 + x * y0_2;
        a33 = a33 + x * y0_3;
        a34 = a34 + x * y0_4;
        a35 = a35 + x * y0_5;
      }
      { double x = xb[(1)*6+(0)];
        a0 = a0 + x * y1_0;
        a1 = a1 + x * y1_1;
        a2 = a2 + x * y1_2;
        a3 = a3 + x * y1_3;
        a4 = a4 + x * y1_4;
        a5 = a5 + x * y1_5;
      }
      { double x = xb[(1)*6+(1)];
        a6 = a6 + x * y1_0;
        a7 = a7 + x * y1_1;
        a8 = a8 + x * y1_2;
        a9 = a9 + x * y1_3;
        a10 = a10 + x * y1_4;
        a11 = a11 + x * y1_5;
      }
      { double x = xb[(1)*6+(2)];
        a12 = a12 + x * y1_0;
        a13 = a13 + x * y1_1;
        a14 = a14 + x * y1_2;
        a15 = a15 + x * y1_3;
        a16 = a16 + x * y1_4;
        a17 = a17 + x * y1_5;
      }
      { double x = xb[(1)*6+(3)];
        a18 = a18 + x * y1_0;
        a19 = a19 + x * y1_1;
        a20 = a20 + x * y1_2;
        a21 = a21 + x * y1_3;
        a22 = a22 + x * y1_4;
        a23 = a23 + x * y1_5;
      }
      { double x = xb[(1)*6+(4)];
        a24 = a24 + x * y1_0;
        a25 = a25 + x * y1_1;
        a26 = a26 + x * y1_2;
        a27 = a27 + x * y1_3;
        a28 = a28 + x * y1_4;
        a29 = a29 + x * y1_5;
      }
      { double x = xb[(1)*6+(5)];
        a30 = a30 + x * y1_0;
        a31 = a31 + x * y1_1;
        a32 = a32 + x * y1_2;
        a33 = a33 + x * y1_3;
        a34 = a34 + x * y1_4;
        a35 = a35 + x * y1_5;
      }
      { double x = xb[(2)*6+(0)];
        a0 = a0 + x * y2_0;
        a1 = a1 + x * y2_1;
        a2 = a2 + x * y2_2;
        a3 = a3 + x * y2_3;
        a4 = a4 + x * y2_4;
        a5 = a5 + x * y2_5;
      }
      { double x = xb[(2)*6+(1)];
        a6 = a6 + x * y2_0;
        a7 = a7 + x * y2_1;
        a8 = a8 + x * y2_2;
        a9 = a9 + x * y2_3;
        a10 = a10 + x * y2_4;
        a11 = a11 + x * y2_5;
      }
      { double x = xb[(2)*6+(2)];
        a12 = a12 + x * y2_0;
        a13 = a13 + x * y2_1;
        a14 = a14 + x * y2_2;
        a15 = a15 + x * y2_3;
        a16 = a16 + x * y2_4;
        a17 = a17 + x * y2_5;
      }
      { double x = xb[(2)*6+(3)];
        a18 = a18 + x * y2_0;
        a19 = a19 + x * y2_1;
        a20 = a20 + x * y2_2;
        a21 = a21 + x * y2_3;
        a22 = a22 + x * y2_4;
        a23 = a23 + x * y2_5;
      }
      { double x = xb[(2)*6+(4)];
        a24 = a24 + x * y2_0;
        a25 = a25 + x * y2_1;
        a26 = a26 + x * y2_2;
        a27 = a27 + x * y2_3;
        a28 = a28 + x * y2_4;
        a29 = a29 + x * y2_5;
      }
      { double x = xb[(2)*6+(5)];
        a30 = a30 + x * y2_0;
        a31 = a31 + x * y2_1;
        a32 = a32 + x * y2_2;
        a33 = a33 + x * y2_3;
        a34 = a34 + x * y2_4;
        a35 = a35 + x * y2_5;
      }
      { double x = xb[(3)*6+(0)];
        a0 = a0 + x * y3_0;
        a1 = a1 + x * y3_1;
        a2 = a2 + x * y3_2;
        a3 = a3 + x * y3_3;
        a4 = a4 + x * y3_4;
        a5 = a5 + x * y3_5;
      }
      { double x = xb[(3)*6+(1)];
        a6 = a6 + x * y3_0;
        a7 = a7 + x * y3_1;
        a8 = a8 + x * y3_2;
        a9 = a9 + x * y3_3;
        a10 = a10 + x * y3_4;
        a11 = a11 + x * y3_5;
      }
      { double x = xb[(3)*6+(2)];
        a12 = a12 + x * y3_0;
        a13 = a13 + x * y3_1;
        a14 = a14 + x * y3_2;
        a15 = a15 + x * y3_3;
        a16 = a16 + x * y3_4;
        a17 = a17 + x * y3_5;
      }
      { double x = xb[(3)*6+(3)];
        a18 = a18 + x * y3_0;
        a19 = a19 + x * y3_1;
        a20 = a20 + x * y3_2;
        a21 = a21 + x * y3_3;
        a22 = a22 + x * y3_4;
        a23 = a23 + x * y3_5;
      }
      { double x = xb[(3)*6+(4)];
        a24 = a24 + x * y3_0;
        a25 = a25 + x * y3_1;
        a26 = a26 + x * y3_2;
        a27 = a27 + x * y3_3;
        a28 = a28 + x * y3_4;
        a29 = a29 + x * y3_5;
      }
      { double x = xb[(3)*6+(5)];
        a30 = a30 + x * y3_0;
        a31 = a31 + x * y3_1;
        a32 = a32 + x * y3_2;
        a33 = a33 + x * y3_3;
        a34 = a34 + x * y3_4;
        a35 = a35 + x * y3_5;
      }
      { double x = xb[(4)*6+(0)];
        a0 = a0 + x * y4_0;
        a1 = a1 + x * y4_1;
        a2 = a2 + x * y4_2;
        a3 = a3 + x * y4_3;
        a4 = a4 + x * y4_4;
        a5 = a5 + x * y4_5;
      }
      { double x = xb[(4)*6+(1)];
        a6 = a6 + x * y4_0;
        a7 = a7 + x * y4_1;
        a8 = a8 + x * y4_2;
        a9 = a9 + x * y4_3;
        a10 = a10 + x * y4_4;
        a11 = a11 + x * y4_5;
      }
      { double x = xb[(4)*6+(2)];
        a12 = a12 + x * y4_0;
        a13 = a13 + x * y4_1;
        a14 = a14 + x * y4_2;
        a15 = a15 + x * y4_3;
        a16 = a16 + x * y4_4;
        a17 = a17 + x * y4_5;
      }
      { double x = xb[(4)*6+(3)];
        a18 = a18 + x * y4_0;
        a19 = a19 + x * y4_1;
        a20 = a20 + x * y4_2;
        a21 = a21 + x * y4_3;
        a22 = a22 + x * y4_4;
        a23 = a23 + x * y4_5;
      }
      { double x = xb[(4)*6+(4)];
        a24 = a24 + x * y4_0;
        a25 = a25 + x * y4_1;
        a26 = a26 + x * y4_2;
        a27 = a27 + x * y4_3;
        a28 = a28 + x * y4_4;
        a29 = a29 + x * y4_5;
      }
      { double x = xb[(4)*6+(5)];
        a30 = a30 + x * y4_0;
        a31 = a31 + x * y4_1;
        a32 = a32 + x * y4_2;
        a33 = a33 + x * y4_3;
        a34 = a34 + x * y4_4;
        a35 = a35 + x * y4_5;
      }
      { double x = xb[(5)*6+(0)];
        a0 = a0 + x * y5_0;
        a1 = a1 + x * y5_1;
        a2 = a2 + x * y5_2;
        a3 = a3 + x * y5_3;
        a4 = a4 + x * y5_4;
        a5 = a5 + x * y5_5;
      }
      { double x = xb[(5)*6+(1)];
        a6 = a6 + x * y5_0;
        a7 = a7 + x * y5_1;
        a8 = a8 + x * y5_2;
        a9 = a9 + x * y5_3;
        a10 = a10 + x * y5_4;
        a11 = a11 + x * y5_5;
      }
      { double x = xb[(5)*6+(2)];
        a12 = a12 + x * y5_0;
        a13 = a13 + x * y5_1;
        a14 = a14 + x * y5_2;
        a15 = a15 + x * y5_3;
        a16 = a16 + x * y5_4;
        a17 = a17 + x * y5_5;
      }
      { double x = xb[(5)*6+(3)];
        a18 = a18 + x * y5_0;
        a19 = a19 + x * y5_1;
        a20 = a20 + x * y5_2;
        a21 = a21 + x * y5_3;
        a22 = a22 + x * y5_4;
        a23 = a23 + x * y5_5;
      }
      { double x = xb[(5)*6+(4)];
        a24 = a24 + x * y5_0;
        a25 = a25 + x * y5_1;
        a26 = a26 + x * y5_2;
        a27 = a27 + x * y5_3;
        a28 = a28 + x * y5_4;
        a29 = a29 + x * y5_5;
      }
      { double x = xb[(5)*6+(5)];
        a30 = a30 + x * y5_0;
        a31 = a31 + x * y5_1;
        a32 = a32 + x * y5_2;
        a33 = a33 + x * y5_3;
        a34 = a34 + x * y5_4;
        a35 = a35 + x * y5_5;
      }
    }
  }
  tile[threadIdx.x * 36 + 0] = a0;
  tile[threadIdx.x * 36 + 1] = a1;
  tile[threadIdx.x * 36 + 2] = a2;
  tile[threadIdx.x * 36 + 3] = a3;
  tile[threadIdx.x * 36 + 4] = a4;
  tile[threadIdx.x * 36 + 5] = a5;
  tile[threadIdx.x * 36 + 6] = a6;
  tile[threadIdx.x * 36 + 7] = a7;
  tile[threadIdx.x * 36 + 8] = a8;
  tile[threadIdx.x * 36 + 9] = a9;
  tile[threadIdx.x * 36 + 10] = a10;
  tile[threadIdx.x * 36 + 11] = a11;
  tile[threadIdx.x * 36 + 12] = a12;
  tile[threadIdx.x * 36 + 13] = a13;
  tile[threadIdx.x * 36 + 14] = a14;
  tile[threadIdx.x * 36 + 15] = a15;
  tile[threadIdx.x * 36 + 16] = a16;
  tile[threadIdx.x * 36 + 17] = a17;
  tile[threadIdx.x * 36 + 18] = a18;
  tile[threadIdx.x * 36 + 19] = a19;
  tile[threadIdx.x * 36 + 20] = a20;
  tile[threadIdx.x * 36 + 21] = a21;
  tile[threadIdx.x * 36 + 22] = a22;
  tile[threadIdx.x * 36 + 23] = a23;
  tile[threadIdx.x * 36 + 24] = a24;
  tile[threadIdx.x * 36 + 25] = a25;
  tile[threadIdx.x * 36 + 26] = a26;
  tile[threadIdx.x * 36 + 27] = a27;
  tile[threadIdx.x * 36 + 28] = a28;
  tile[threadIdx.x * 36 + 29] = a29;
  tile[threadIdx.x * 36 + 30] = a30;
  tile[threadIdx.x * 36 + 31] = a31;
  tile[threadIdx.x * 36 + 32] = a32;
  tile[threadIdx.x * 36 + 33] = a33;
  tile[threadIdx.x * 36 + 34] = a34;
  tile[threadIdx.x * 36 + 35] = a35;
  __syncthreads();
  u32 valid = nslots - s0 < 128 ? nslots - s0 : 128;
  for (u32 e = threadIdx.x; e < valid * 36; e += 128) cv[(u64)s0 * 36 + e] = tile[e];
}

// column-split stage (6x6 by 6x6), 6 lanes per slot, 5 slots per warp, one window per block, x staged in shared memory, 1 contributions per step, 6 indices per fetch
extern "C" __global__ void ptap_column_split_6x6x6t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots, unsigned int window) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  extern __shared__ double2 cs_smem[];
  u32 lane = threadIdx.x & 31, gw = lane / 6;
  if (gw >= 5) return;
  u32 j = lane - gw * 6;
  u32 g = (threadIdx.x >> 5) * 5 + gw;
  if (g >= window) return;
  u32 idx = blockIdx.x * window + g;
  if (idx >= nslots) return;
  u32 s = order[idx];
  double* sx = (double*)((char*)cs_smem + (u64)g * 336);
  u32* si = (u32*)(sx + 36);
  const u32 gm = 63u << (gw * 6);
  double c0 = 0.0;
  double c1 = 0.0;
  double c2 = 0.0;
  double c3 = 0.0;
  double c4 = 0.0;
  double c5 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 6) {
    u32 cnt = q1 - q0 < 6 ? q1 - q0 : 6;
    { u32 e = 0 + j; if (e < cnt) { si[e] = rx[q0 + e]; si[6 + e] = ry[q0 + e]; } }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 1) {
      double y0_0 = 0.0, y0_1 = 0.0, y0_2 = 0.0, y0_3 = 0.0, y0_4 = 0.0, y0_5 = 0.0;
      {
        const double2* xs_g = (const double2*)(xv + (u64)si[t + 0] * 36);
        const double* yb = yv + (u64)si[6 + t + 0] * 36;
        double2* xs_s = (double2*)(sx + 0);
        xs_s[0 + j] = xs_g[0 + j];
        xs_s[6 + j] = xs_g[6 + j];
        xs_s[12 + j] = xs_g[12 + j];
        y0_0 = yb[0 * 6 + j];
        y0_1 = yb[1 * 6 + j];
        y0_2 = yb[2 * 6 + j];
        y0_3 = yb[3 * 6 + j];
        y0_4 = yb[4 * 6 + j];
        y0_5 = yb[5 * 6 + j];
      }
      __syncwarp(gm);
      double2 x0_0 = ((const double2*)(sx + 0))[0];
      double2 x0_1 = ((const double2*)(sx + 0))[1];
      double2 x0_2 = ((const double2*)(sx + 0))[2];
      double2 x0_3 = ((const double2*)(sx + 0))[3];
      double2 x0_4 = ((const double2*)(sx + 0))[4];
      double2 x0_5 = ((const double2*)(sx + 0))[5];
      double2 x0_6 = ((const double2*)(sx + 0))[6];
      double2 x0_7 = ((const double2*)(sx + 0))[7];
      double2 x0_8 = ((const double2*)(sx + 0))[8];
      double2 x0_9 = ((const double2*)(sx + 0))[9];
      double2 x0_10 = ((const double2*)(sx + 0))[10];
      double2 x0_11 = ((const double2*)(sx + 0))[11];
      double2 x0_12 = ((const double2*)(sx + 0))[12];
      double2 x0_13 = ((const double2*)(sx + 0))[13];
      double2 x0_14 = ((const double2*)(sx + 0))[14];
      double2 x0_15 = ((const double2*)(sx + 0))[15];
      double2 x0_16 = ((const double2*)(sx + 0))[16];
      double2 x0_17 = ((const double2*)(sx + 0))[17];
      c0 = c0 + x0_0.x * y0_0;
      c1 = c1 + x0_0.y * y0_0;
      c2 = c2 + x0_1.x * y0_0;
      c3 = c3 + x0_1.y * y0_0;
      c4 = c4 + x0_2.x * y0_0;
      c5 = c5 + x0_2.y * y0_0;
      c0 = c0 + x0_3.x * y0_1;
      c1 = c1 + x0_3.y * y0_1;
      c2 = c2 + x0_4.x * y0_1;
      c3 = c3 + x0_4.y * y0_1;
      c4 = c4 + x0_5.x * y0_1;
      c5 = c5 + x0_5.y * y0_1;
      c0 = c0 + x0_6.x * y0_2;
      c1 = c1 + x0_6.y * y0_2;
      c2 = c2 + x0_7.x * y0_2;
      c3 = c3 + x0_7.y * y0_2;
      c4 = c4 + x0_8.x * y0_2;
      c5 = c5 + x0_8.y * y0_2;
      c0 = c0 + x0_9.x * y0_3;
      c1 = c1 + x0_9.y * y0_3;
      c2 = c2 + x0_10.x * y0_3;
      c3 = c3 + x0_10.y * y0_3;
      c4 = c4 + x0_11.x * y0_3;
      c5 = c5 + x0_11.y * y0_3;
      c0 = c0 + x0_12.x * y0_4;
      c1 = c1 + x0_12.y * y0_4;
      c2 = c2 + x0_13.x * y0_4;
      c3 = c3 + x0_13.y * y0_4;
      c4 = c4 + x0_14.x * y0_4;
      c5 = c5 + x0_14.y * y0_4;
      c0 = c0 + x0_15.x * y0_5;
      c1 = c1 + x0_15.y * y0_5;
      c2 = c2 + x0_16.x * y0_5;
      c3 = c3 + x0_16.y * y0_5;
      c4 = c4 + x0_17.x * y0_5;
      c5 = c5 + x0_17.y * y0_5;
      __syncwarp(gm);
    }
  }
  cv[(u64)s * 36 + 0 + j] = c0;
  cv[(u64)s * 36 + 6 + j] = c1;
  cv[(u64)s * 36 + 12 + j] = c2;
  cv[(u64)s * 36 + 18 + j] = c3;
  cv[(u64)s * 36 + 24 + j] = c4;
  cv[(u64)s * 36 + 30 + j] = c5;
}

// flat-stream stage (6x6 by 6x6), one warp per record tile
extern "C" __global__ void ptap_flat_stream_6x6x6t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ rslot, const unsigned int* __restrict__ tile_rows, const unsigned int* __restrict__ tile_records, const unsigned int* __restrict__ c_rp, double* __restrict__ cv, unsigned int ntiles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u32 w = (u32)(((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (w >= ntiles) return;
  u64 e0 = (u64)c_rp[tile_rows[w]] * 36, e1 = (u64)c_rp[tile_rows[w + 1]] * 36;
  for (u64 e = e0 + lane; e < e1; e += 32) cv[e] = 0.0;
  __syncwarp();
  for (u32 q = tile_records[w]; q < tile_records[w + 1]; ++q) {
    const double* xb = xv + (u64)rx[q] * 36;
    const double* yb = yv + (u64)ry[q] * 36;
    double* cb = cv + (u64)rslot[q] * 36;
    for (u32 e = lane; e < 36; e += 32) {
      u32 i = e / 6, j = e % 6;
      double c = cb[e];
      c = c + xb[(0)*6+(i)] * yb[0 * 6 + j];
      c = c + xb[(1)*6+(i)] * yb[1 * 6 + j];
      c = c + xb[(2)*6+(i)] * yb[2 * 6 + j];
      c = c + xb[(3)*6+(i)] * yb[3 * 6 + j];
      c = c + xb[(4)*6+(i)] * yb[4 * 6 + j];
      c = c + xb[(5)*6+(i)] * yb[5 * 6 + j];
      cb[e] = c;
    }
  }
}

// lane-tiled stage (6x6 by 6x6), 9 lanes per slot each owning 2x2 outputs, 3 slots per warp, operands read straight into registers, 2 contributions per step
extern "C" __global__ void ptap_lane_tiled_6x6x6t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
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
  u32 xo = ti * 2;
  u32 yo = tj * 2;
  double c0_0 = 0.0;
  double c0_1 = 0.0;
  double c1_0 = 0.0;
  double c1_1 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 9) {
    u32 cnt = q1 - q0 < 9 ? q1 - q0 : 9;
    if (r < cnt) { si[r] = rx[q0 + r]; si[9 + r] = ry[q0 + r]; }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 2) {
      double x0_0_0 = 0.0, x0_0_1 = 0.0, x0_0_2 = 0.0, x0_0_3 = 0.0, x0_0_4 = 0.0, x0_0_5 = 0.0, x0_1_0 = 0.0, x0_1_1 = 0.0, x0_1_2 = 0.0, x0_1_3 = 0.0, x0_1_4 = 0.0, x0_1_5 = 0.0;
      double y0_0_0 = 0.0, y0_0_1 = 0.0, y0_1_0 = 0.0, y0_1_1 = 0.0, y0_2_0 = 0.0, y0_2_1 = 0.0, y0_3_0 = 0.0, y0_3_1 = 0.0, y0_4_0 = 0.0, y0_4_1 = 0.0, y0_5_0 = 0.0, y0_5_1 = 0.0;
      {
        const double* xb = xv + (u64)si[t + 0] * 36 + xo;
        const double* yb = yv + (u64)si[9 + t + 0] * 36 + yo;
        { double2 v = ((const double2*)(yb + 0))[0]; y0_0_0 = v.x; y0_0_1 = v.y; }
        { double2 v = ((const double2*)(yb + 6))[0]; y0_1_0 = v.x; y0_1_1 = v.y; }
        { double2 v = ((const double2*)(yb + 12))[0]; y0_2_0 = v.x; y0_2_1 = v.y; }
        { double2 v = ((const double2*)(yb + 18))[0]; y0_3_0 = v.x; y0_3_1 = v.y; }
        { double2 v = ((const double2*)(yb + 24))[0]; y0_4_0 = v.x; y0_4_1 = v.y; }
        { double2 v = ((const double2*)(yb + 30))[0]; y0_5_0 = v.x; y0_5_1 = v.y; }
        { double2 v = ((const double2*)(xb + 0))[0]; x0_0_0 = v.x; x0_1_0 = v.y; }
        { double2 v = ((const double2*)(xb + 6))[0]; x0_0_1 = v.x; x0_1_1 = v.y; }
        { double2 v = ((const double2*)(xb + 12))[0]; x0_0_2 = v.x; x0_1_2 = v.y; }
        { double2 v = ((const double2*)(xb + 18))[0]; x0_0_3 = v.x; x0_1_3 = v.y; }
        { double2 v = ((const double2*)(xb + 24))[0]; x0_0_4 = v.x; x0_1_4 = v.y; }
        { double2 v = ((const double2*)(xb + 30))[0]; x0_0_5 = v.x; x0_1_5 = v.y; }
      }
      double x1_0_0 = 0.0, x1_0_1 = 0.0, x1_0_2 = 0.0, x1_0_3 = 0.0, x1_0_4 = 0.0, x1_0_5 = 0.0, x1_1_0 = 0.0, x1_1_1 = 0.0, x1_1_2 = 0.0, x1_1_3 = 0.0, x1_1_4 = 0.0, x1_1_5 = 0.0;
      double y1_0_0 = 0.0, y1_0_1 = 0.0, y1_1_0 = 0.0, y1_1_1 = 0.0, y1_2_0 = 0.0, y1_2_1 = 0.0, y1_3_0 = 0.0, y1_3_1 = 0.0, y1_4_0 = 0.0, y1_4_1 = 0.0, y1_5_0 = 0.0, y1_5_1 = 0.0;
      if (t + 1 < cnt) {
        const double* xb = xv + (u64)si[t + 1] * 36 + xo;
        const double* yb = yv + (u64)si[9 + t + 1] * 36 + yo;
        { double2 v = ((const double2*)(yb + 0))[0]; y1_0_0 = v.x; y1_0_1 = v.y; }
        { double2 v = ((const double2*)(yb + 6))[0]; y1_1_0 = v.x; y1_1_1 = v.y; }
        { double2 v = ((const double2*)(yb + 12))[0]; y1_2_0 = v.x; y1_2_1 = v.y; }
        { double2 v = ((const double2*)(yb + 18))[0]; y1_3_0 = v.x; y1_3_1 = v.y; }
        { double2 v = ((const double2*)(yb + 24))[0]; y1_4_0 = v.x; y1_4_1 = v.y; }
        { double2 v = ((const double2*)(yb + 30))[0]; y1_5_0 = v.x; y1_5_1 = v.y; }
        { double2 v = ((const double2*)(xb + 0))[0]; x1_0_0 = v.x; x1_1_0 = v.y; }
        { double2 v = ((const double2*)(xb + 6))[0]; x1_0_1 = v.x; x1_1_1 = v.y; }
        { double2 v = ((const double2*)(xb + 12))[0]; x1_0_2 = v.x; x1_1_2 = v.y; }
        { double2 v = ((const double2*)(xb + 18))[0]; x1_0_3 = v.x; x1_1_3 = v.y; }
        { double2 v = ((const double2*)(xb + 24))[0]; x1_0_4 = v.x; x1_1_4 = v.y; }
        { double2 v = ((const double2*)(xb + 30))[0]; x1_0_5 = v.x; x1_1_5 = v.y; }
      }
      c0_0 = c0_0 + x0_0_0 * y0_0_0;
      c0_0 = c0_0 + x0_0_1 * y0_1_0;
      c0_0 = c0_0 + x0_0_2 * y0_2_0;
      c0_0 = c0_0 + x0_0_3 * y0_3_0;
      c0_0 = c0_0 + x0_0_4 * y0_4_0;
      c0_0 = c0_0 + x0_0_5 * y0_5_0;
      c0_1 = c0_1 + x0_0_0 * y0_0_1;
      c0_1 = c0_1 + x0_0_1 * y0_1_1;
      c0_1 = c0_1 + x0_0_2 * y0_2_1;
      c0_1 = c0_1 + x0_0_3 * y0_3_1;
      c0_1 = c0_1 + x0_0_4 * y0_4_1;
      c0_1 = c0_1 + x0_0_5 * y0_5_1;
      c1_0 = c1_0 + x0_1_0 * y0_0_0;
      c1_0 = c1_0 + x0_1_1 * y0_1_0;
      c1_0 = c1_0 + x0_1_2 * y0_2_0;
      c1_0 = c1_0 + x0_1_3 * y0_3_0;
      c1_0 = c1_0 + x0_1_4 * y0_4_0;
      c1_0 = c1_0 + x0_1_5 * y0_5_0;
      c1_1 = c1_1 + x0_1_0 * y0_0_1;
      c1_1 = c1_1 + x0_1_1 * y0_1_1;
      c1_1 = c1_1 + x0_1_2 * y0_2_1;
      c1_1 = c1_1 + x0_1_3 * y0_3_1;
      c1_1 = c1_1 + x0_1_4 * y0_4_1;
      c1_1 = c1_1 + x0_1_5 * y0_5_1;
      if (t + 1 < cnt) {
      c0_0 = c0_0 + x1_0_0 * y1_0_0;
      c0_0 = c0_0 + x1_0_1 * y1_1_0;
      c0_0 = c0_0 + x1_0_2 * y1_2_0;
      c0_0 = c0_0 + x1_0_3 * y1_3_0;
      c0_0 = c0_0 + x1_0_4 * y1_4_0;
      c0_0 = c0_0 + x1_0_5 * y1_5_0;
      c0_1 = c0_1 + x1_0_0 * y1_0_1;
      c0_1 = c0_1 + x1_0_1 * y1_1_1;
      c0_1 = c0_1 + x1_0_2 * y1_2_1;
      c0_1 = c0_1 + x1_0_3 * y1_3_1;
      c0_1 = c0_1 + x1_0_4 * y1_4_1;
      c0_1 = c0_1 + x1_0_5 * y1_5_1;
      c1_0 = c1_0 + x1_1_0 * y1_0_0;
      c1_0 = c1_0 + x1_1_1 * y1_1_0;
      c1_0 = c1_0 + x1_1_2 * y1_2_0;
      c1_0 = c1_0 + x1_1_3 * y1_3_0;
      c1_0 = c1_0 + x1_1_4 * y1_4_0;
      c1_0 = c1_0 + x1_1_5 * y1_5_0;
      c1_1 = c1_1 + x1_1_0 * y1_0_1;
      c1_1 = c1_1 + x1_1_1 * y1_1_1;
      c1_1 = c1_1 + x1_1_2 * y1_2_1;
      c1_1 = c1_1 + x1_1_3 * y1_3_1;
      c1_1 = c1_1 + x1_1_4 * y1_4_1;
      c1_1 = c1_1 + x1_1_5 * y1_5_1;
      }
    }
    __syncwarp(gm);
  }
  double* cb = cv + (u64)s * 36;
  cb[(ti * 2 + 0) * 6 + tj * 2 + 0] = c0_0;
  cb[(ti * 2 + 0) * 6 + tj * 2 + 1] = c0_1;
  cb[(ti * 2 + 1) * 6 + tj * 2 + 0] = c1_0;
  cb[(ti * 2 + 1) * 6 + tj * 2 + 1] = c1_1;
}

// k-split stage (6x6 by 6x6), 18 lanes per slot each owning inner index kk and 2 columns, 1 slots per warp, 8 warps per block, 1 contributions per step, partials added in kk order
extern "C" __global__ void ptap_k_split_6x6x6t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  extern __shared__ double2 ks_smem[];
  u32 lane = threadIdx.x & 31, gw = lane / 18;
  if (gw >= 1) return;
  u32 r = lane - gw * 18;
  u32 kk = r / 3, c = r - kk * 3;
  u32 gl = (threadIdx.x >> 5) * 1 + gw;
  u32 idx = blockIdx.x * 8 + gl;
  if (idx >= nslots) return;
  u32 s = order[idx];
  double* sx = (double*)((char*)ks_smem + (u64)gl * 1824);
  u32* si = (u32*)(sx + 36);
  const u32 gm = 262143u << (gw * 18);
  u32 yo = kk * 6 + c * 2;
  double c0_0 = 0.0;
  double c0_1 = 0.0;
  double c1_0 = 0.0;
  double c1_1 = 0.0;
  double c2_0 = 0.0;
  double c2_1 = 0.0;
  double c3_0 = 0.0;
  double c3_1 = 0.0;
  double c4_0 = 0.0;
  double c4_1 = 0.0;
  double c5_0 = 0.0;
  double c5_1 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 18) {
    u32 cnt = q1 - q0 < 18 ? q1 - q0 : 18;
    if (r < cnt) { si[r] = rx[q0 + r]; si[18 + r] = ry[q0 + r]; }
    __syncwarp(gm);
    for (u32 t = 0; t < cnt; t += 1) {
      double y0_0 = 0.0, y0_1 = 0.0;
      {
        const double2* xs_g = (const double2*)(xv + (u64)si[t + 0] * 36);
        double2* xs_s = (double2*)(sx + 0);
        const double* yb = yv + (u64)si[18 + t + 0] * 36 + yo;
        xs_s[0 + r] = xs_g[0 + r];
        { double2 v = ((const double2*)(yb + 0))[0]; y0_0 = v.x; y0_1 = v.y; }
      }
      __syncwarp(gm);
      double2 x0_0 = ((const double2*)(sx + 0 + kk * 6))[0];
      double2 x0_1 = ((const double2*)(sx + 0 + kk * 6))[1];
      double2 x0_2 = ((const double2*)(sx + 0 + kk * 6))[2];
      { double x = x0_0.x;
        c0_0 = c0_0 + x * y0_0;
        c0_1 = c0_1 + x * y0_1;
      }
      { double x = x0_0.y;
        c1_0 = c1_0 + x * y0_0;
        c1_1 = c1_1 + x * y0_1;
      }
      { double x = x0_1.x;
        c2_0 = c2_0 + x * y0_0;
        c2_1 = c2_1 + x * y0_1;
      }
      { double x = x0_1.y;
        c3_0 = c3_0 + x * y0_0;
        c3_1 = c3_1 + x * y0_1;
      }
      { double x = x0_2.x;
        c4_0 = c4_0 + x * y0_0;
        c4_1 = c4_1 + x * y0_1;
      }
      { double x = x0_2.y;
        c5_0 = c5_0 + x * y0_0;
        c5_1 = c5_1 + x * y0_1;
      }
      __syncwarp(gm);
    }
  }
  double* part = sx;
  part[(kk * 6 + 0) * 6 + c * 2 + 0] = c0_0;
  part[(kk * 6 + 0) * 6 + c * 2 + 1] = c0_1;
  part[(kk * 6 + 1) * 6 + c * 2 + 0] = c1_0;
  part[(kk * 6 + 1) * 6 + c * 2 + 1] = c1_1;
  part[(kk * 6 + 2) * 6 + c * 2 + 0] = c2_0;
  part[(kk * 6 + 2) * 6 + c * 2 + 1] = c2_1;
  part[(kk * 6 + 3) * 6 + c * 2 + 0] = c3_0;
  part[(kk * 6 + 3) * 6 + c * 2 + 1] = c3_1;
  part[(kk * 6 + 4) * 6 + c * 2 + 0] = c4_0;
  part[(kk * 6 + 4) * 6 + c * 2 + 1] = c4_1;
  part[(kk * 6 + 5) * 6 + c * 2 + 0] = c5_0;
  part[(kk * 6 + 5) * 6 + c * 2 + 1] = c5_1;
  __syncwarp(gm);
  double* cb = cv + (u64)s * 36;
  for (u32 e = r; e < 36; e += 18) {
    double v = part[e];
    v = v + part[36 + e];
    v = v + part[72 + e];
    v = v + part[108 + e];
    v = v + part[144 + e];
    v = v + part[180 + e];
    cb[e] = v;
  }
}

// tensor-core stage (6x6 by 6x6), one warp per slot, 2 FP64 m8n8k4 MMA per contribution, 2 contributions per step
extern "C" __global__ void ptap_mma_6x6x6t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ ptr, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ order, double* __restrict__ cv, unsigned int nslots) {
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
  const bool av0 = r < 6 && (0 + t) < 6, bv0 = r < 6 && (0 + t) < 6;
  const double* xl0 = xv + (av0 ? (0 + t) * 6 + r : 0);
  const double* yl0 = yv + (bv0 ? (0 + t) * 6 + r : 0);
  asm("" : "+l"(xl0), "+l"(yl0));
  const bool av1 = r < 6 && (4 + t) < 6, bv1 = r < 6 && (4 + t) < 6;
  const double* xl1 = xl0 + 24;
  const double* yl1 = yl0 + 24;
  double d0 = 0.0, d1 = 0.0;
  u32 q1 = ptr[s + 1];
  for (u32 q0 = ptr[s]; q0 < q1; q0 += 16) {
    u32 cnt = q1 - q0 < 16 ? q1 - q0 : 16;
    u32 e = lane & 15;
    u32 idx = 0;
    if (e < cnt) idx = lane < 16 ? rx[q0 + e] : ry[q0 + e];
    u32 u = 0;
    for (; u + 2 <= cnt; u += 2) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = 0.0, b0_0 = 0.0;
      if (av0) a0_0 = __ldg(xl0 + (u64)xi0 * 36);
      if (bv0) b0_0 = __ldg(yl0 + (u64)yi0 * 36);
      double a0_1 = 0.0, b0_1 = 0.0;
      if (av1) a0_1 = __ldg(xl1 + (u64)xi0 * 36);
      if (bv1) b0_1 = __ldg(yl1 + (u64)yi0 * 36);
      u32 xi1 = __shfl_sync(0xffffffffu, idx, u + 1), yi1 = __shfl_sync(0xffffffffu, idx, 16 + u + 1);
      double a1_0 = 0.0, b1_0 = 0.0;
      if (av0) a1_0 = __ldg(xl0 + (u64)xi1 * 36);
      if (bv0) b1_0 = __ldg(yl0 + (u64)yi1 * 36);
      double a1_1 = 0.0, b1_1 = 0.0;
      if (av1) a1_1 = __ldg(xl1 + (u64)xi1 * 36);
      if (bv1) b1_1 = __ldg(yl1 + (u64)yi1 * 36);
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_1), "d"(b0_1));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_1), "d"(b1_1));
    }
    for (; u < cnt; ++u) {
      u32 xi0 = __shfl_sync(0xffffffffu, idx, u + 0), yi0 = __shfl_sync(0xffffffffu, idx, 16 + u + 0);
      double a0_0 = 0.0, b0_0 = 0.0;
      if (av0) a0_0 = __ldg(xl0 + (u64)xi0 * 36);
      if (bv0) b0_0 = __ldg(yl0 + (u64)yi0 * 36);
      double a0_1 = 0.0, b0_1 = 0.0;
      if (av1) a0_1 = __ldg(xl1 + (u64)xi0 * 36);
      if (bv1) b0_1 = __ldg(yl1 + (u64)yi0 * 36);
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_1), "d"(b0_1));
    }
  }
  u32 c0 = 2 * t;
  double* cb = cv + (u64)s * 36;
  if (r < 6 && c0 < 6) *(double2*)(cb + r * 6 + c0) = make_double2(d0, d1);
#else
  __trap();
#endif
}

// tensor-pair stage (6x6 by 6x6, Single), one warp per unit of 1 slot(s), 2 FP64 m8n8k4 MMA per entry and side, 2 entries per step, the last ones as one guarded step
extern "C" __global__ void ptap_mma2_6x6x6t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ uptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  u32 lane = threadIdx.x & 31;
  u32 w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (w >= nunits) return;
  u32 r = lane >> 2, t = lane & 3;
  const bool av0 = r < 6 && (0 + t) < 6, bv0 = r < 6 && (0 + t) < 6;
  const double* xl0 = xv + (av0 ? (0 + t) * 6 + r : (r < 6 ? r : 5));
  const double* yl0 = yv + (bv0 ? (0 + t) * 6 + r : (r < 6 ? r : 5));
  asm("" : "+l"(xl0), "+l"(yl0));
  const bool av1 = r < 6 && (4 + t) < 6, bv1 = r < 6 && (4 + t) < 6;
  const double* xl1 = xl0 + 24;
  const double* yl1 = yl0 + 24;
  const uint2* ep = (const uint2*)ent;
  double d0 = 0.0, d1 = 0.0;
  u32 q = uptr[w], q1 = uptr[w + 1];
  for (; q + 2 <= q1; q += 2) {
    uint2 e0 = __ldg(ep + q + 0);
    uint2 e1 = __ldg(ep + q + 1);
    double b0_0 = 0.0, a0_0 = 0.0;
    if (bv0) b0_0 = __ldg(yl0 + (u64)e0.y * 36);
    if (av0) a0_0 = __ldg(xl0 + (u64)e0.x * 36);
    double b0_1 = 0.0, a0_1 = 0.0;
    if (bv1) b0_1 = __ldg(yl1 + (u64)e0.y * 36);
    if (av1) a0_1 = __ldg(xl1 + (u64)e0.x * 36);
    double b1_0 = 0.0, a1_0 = 0.0;
    if (bv0) b1_0 = __ldg(yl0 + (u64)e1.y * 36);
    if (av0) a1_0 = __ldg(xl0 + (u64)e1.x * 36);
    double b1_1 = 0.0, a1_1 = 0.0;
    if (bv1) b1_1 = __ldg(yl1 + (u64)e1.y * 36);
    if (av1) a1_1 = __ldg(xl1 + (u64)e1.x * 36);
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_1), "d"(b0_1));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_0), "d"(b1_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a1_1), "d"(b1_1));
  }
  if (q < q1) {
    u32 rem = q1 - q;
    uint2 e0 = __ldg(ep + q + 0);
    double b0_0 = 0.0, a0_0 = 0.0;
    if (bv0) b0_0 = __ldg(yl0 + (u64)e0.y * 36);
    if (av0) a0_0 = __ldg(xl0 + (u64)e0.x * 36);
    double b0_1 = 0.0, a0_1 = 0.0;
    if (bv1) b0_1 = __ldg(yl1 + (u64)e0.y * 36);
    if (av1) a0_1 = __ldg(xl1 + (u64)e0.x * 36);
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_0), "d"(b0_0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a0_1), "d"(b0_1));
  }
  u32 c0 = 2 * t;
  {
  u32 s = uslot[1 * w + 0];
  double* cb = cv + (u64)s * 36;
  if (s != 0xffffffffu && r < 6) {
    if (c0 < 6) *(double2*)(cb + r * 6 + c0) = make_double2(d0, d1);
  }
  }
#else
  __trap();
#endif
}

// row-Gustavson stage (6x6 by 6x6), one warp per chunk of 32 output slots, 4 warps per block
extern "C" __global__ void ptap_row_gustavson_6x6x6t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ chunk_slot, const unsigned int* __restrict__ chunk_seg, const unsigned int* __restrict__ chunk_pos, const unsigned int* __restrict__ seg_x, const unsigned int* __restrict__ seg_y, const unsigned int* __restrict__ seg_n, const unsigned int* __restrict__ pos, double* __restrict__ cv, unsigned int nchunks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double rg_acc[4][32 * 36];
  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;
  u32 c = blockIdx.x * 4 + wl;
  if (c >= nchunks) return;
  double* acc = rg_acc[wl];
  u32 s0 = chunk_slot[c], ne = (chunk_slot[c + 1] - s0) * 36;
  for (u32 e = lane; e < ne; e += 32) acc[e] = 0.0;
  __syncwarp();
  const unsigned char* sn = (const unsigned char*)seg_n;
  const unsigned char* ps = (const unsigned char*)pos;
  u32 pb = chunk_pos[c];
  u32 g1 = chunk_seg[c + 1];
  for (u32 g = chunk_seg[c]; g < g1; ++g) {
    u32 cnt = sn[g];
    const double* xb = xv + (u64)seg_x[g] * 36;
    const double* yb0 = yv + (u64)seg_y[g] * 36;
    double x0 = __ldg(xb + 0);
    double x1 = __ldg(xb + 1);
    double x2 = __ldg(xb + 2);
    double x3 = __ldg(xb + 3);
    double x4 = __ldg(xb + 4);
    double x5 = __ldg(xb + 5);
    double x6 = __ldg(xb + 6);
    double x7 = __ldg(xb + 7);
    double x8 = __ldg(xb + 8);
    double x9 = __ldg(xb + 9);
    double x10 = __ldg(xb + 10);
    double x11 = __ldg(xb + 11);
    double x12 = __ldg(xb + 12);
    double x13 = __ldg(xb + 13);
    double x14 = __ldg(xb + 14);
    double x15 = __ldg(xb + 15);
    double x16 = __ldg(xb + 16);
    double x17 = __ldg(xb + 17);
    double x18 = __ldg(xb + 18);
    double x19 = __ldg(xb + 19);
    double x20 = __ldg(xb + 20);
    double x21 = __ldg(xb + 21);
    double x22 = __ldg(xb + 22);
    double x23 = __ldg(xb + 23);
    double x24 = __ldg(xb + 24);
    double x25 = __ldg(xb + 25);
    double x26 = __ldg(xb + 26);
    double x27 = __ldg(xb + 27);
    double x28 = __ldg(xb + 28);
    double x29 = __ldg(xb + 29);
    double x30 = __ldg(xb + 30);
    double x31 = __ldg(xb + 31);
    double x32 = __ldg(xb + 32);
    double x33 = __ldg(xb + 33);
    double x34 = __ldg(xb + 34);
    double x35 = __ldg(xb + 35);
    for (u32 t = lane; t < cnt * 6; t += 32) {
      u32 b = t / 6, j = t - b * 6;
      const double* yb = yb0 + (u64)b * 36;
      double* o = acc + (u32)ps[pb + b] * 36 + j;
      double y0 = __ldg(yb + 0 * 6 + j);
      double y1 = __ldg(yb + 1 * 6 + j);
      double y2 = __ldg(yb + 2 * 6 + j);
      double y3 = __ldg(yb + 3 * 6 + j);
      double y4 = __ldg(yb + 4 * 6 + j);
      double y5 = __ldg(yb + 5 * 6 + j);
      { double a = o[0];
        a = a + x0 * y0;
        a = a + x6 * y1;
        a = a + x12 * y2;
        a = a + x18 * y3;
        a = a + x24 * y4;
        a = a + x30 * y5;
        o[0] = a; }
      { double a = o[6];
        a = a + x1 * y0;
        a = a + x7 * y1;
        a = a + x13 * y2;
        a = a + x19 * y3;
        a = a + x25 * y4;
        a = a + x31 * y5;
        o[6] = a; }
      { double a = o[12];
        a = a + x2 * y0;
        a = a + x8 * y1;
        a = a + x14 * y2;
        a = a + x20 * y3;
        a = a + x26 * y4;
        a = a + x32 * y5;
        o[12] = a; }
      { double a = o[18];
        a = a + x3 * y0;
        a = a + x9 * y1;
        a = a + x15 * y2;
        a = a + x21 * y3;
        a = a + x27 * y4;
        a = a + x33 * y5;
        o[18] = a; }
      { double a = o[24];
        a = a + x4 * y0;
        a = a + x10 * y1;
        a = a + x16 * y2;
        a = a + x22 * y3;
        a = a + x28 * y4;
        a = a + x34 * y5;
        o[24] = a; }
      { double a = o[30];
        a = a + x5 * y0;
        a = a + x11 * y1;
        a = a + x17 * y2;
        a = a + x23 * y3;
        a = a + x29 * y4;
        a = a + x35 * y5;
        o[30] = a; }
    }
    pb += cnt;
    __syncwarp();
  }
  for (u32 e = lane; e < ne; e += 32) cv[(u64)s0 * 36 + e] = acc[e];
}

// outer-product scatter pass (6x6 by 6x6), atomic accumulation
extern "C" __global__ void ptap_scatter_6x6x6t(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ rx, const unsigned int* __restrict__ ry, const unsigned int* __restrict__ rslot, double* __restrict__ cv, unsigned int nrecords) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nrecords * 36) return;
  u32 q = (u32)(t / 36); u32 e = (u32)(t % 36);
  u32 i = e / 6, j = e % 6;
  const double* xb = xv + (u64)rx[q] * 36;
  const double* yb = yv + (u64)ry[q] * 36;
  double v = 0.0;
  v = v + xb[(0)*6+(i)] * yb[0 * 6 + j];
  v = v + xb[(1)*6+(i)] * yb[1 * 6 + j];
  v = v + xb[(2)*6+(i)] * yb[2 * 6 + j];
  v = v + xb[(3)*6+(i)] * yb[3 * 6 + j];
  v = v + xb[(4)*6+(i)] * yb[4 * 6 + j];
  v = v + xb[(5)*6+(i)] * yb[5 * 6 + j];
  atomicAdd(cv + (u64)rslot[q] * 36 + e, v);
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

// merge-path block SpMV y = A x, 3x6 blocks, 4 warps per block, the next 32 blocks loaded while the current ones are multiplied; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_spmv_merge_3x6(const double* __restrict__ av, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double2 stage2[4][288];
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
  double2 pf5;
  double2 pf6;
  double2 pf7;
  double2 pf8;
  double pf_odd = 0.0;
  double k0 = 0.0;
  double k1 = 0.0;
  double k2 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  {
    u32 nd = pcnt * 18;
    const double2* src2 = (const double2*)(av + b0 * 18);
    if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
    if (lane + 32 < nd / 2) pf1 = src2[lane + 32];
    if (lane + 64 < nd / 2) pf2 = src2[lane + 64];
    if (lane + 96 < nd / 2) pf3 = src2[lane + 96];
    if (lane + 128 < nd / 2) pf4 = src2[lane + 128];
    if (lane + 160 < nd / 2) pf5 = src2[lane + 160];
    if (lane + 192 < nd / 2) pf6 = src2[lane + 192];
    if (lane + 224 < nd / 2) pf7 = src2[lane + 224];
    if (lane + 256 < nd / 2) pf8 = src2[lane + 256];
    if ((nd & 1) && lane == 0) pf_odd = av[b0 * 18 + nd - 1];
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    {
      u32 nd = cnt * 18;
      if (lane + 0 < nd / 2) stage2[wl][lane + 0] = pf0;
      if (lane + 32 < nd / 2) stage2[wl][lane + 32] = pf1;
      if (lane + 64 < nd / 2) stage2[wl][lane + 64] = pf2;
      if (lane + 96 < nd / 2) stage2[wl][lane + 96] = pf3;
      if (lane + 128 < nd / 2) stage2[wl][lane + 128] = pf4;
      if (lane + 160 < nd / 2) stage2[wl][lane + 160] = pf5;
      if (lane + 192 < nd / 2) stage2[wl][lane + 192] = pf6;
      if (lane + 224 < nd / 2) stage2[wl][lane + 224] = pf7;
      if (lane + 256 < nd / 2) stage2[wl][lane + 256] = pf8;
      if ((nd & 1) && lane == 0) stage[nd - 1] = pf_odd;
    }
    __syncwarp();
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        u32 nd = pcnt * 18;
        const double2* src2 = (const double2*)(av + nbase * 18);
        if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
        if (lane + 32 < nd / 2) pf1 = src2[lane + 32];
        if (lane + 64 < nd / 2) pf2 = src2[lane + 64];
        if (lane + 96 < nd / 2) pf3 = src2[lane + 96];
        if (lane + 128 < nd / 2) pf4 = src2[lane + 128];
        if (lane + 160 < nd / 2) pf5 = src2[lane + 160];
        if (lane + 192 < nd / 2) pf6 = src2[lane + 192];
        if (lane + 224 < nd / 2) pf7 = src2[lane + 224];
        if (lane + 256 < nd / 2) pf8 = src2[lane + 256];
        if ((nd & 1) && lane == 0) pf_odd = av[nbase * 18 + nd - 1];
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    double v1 = 0.0;
    double v2 = 0.0;
    if (valid) {
      const double* a = stage + lane * 18;
      double x0 = x[(u64)col * 6 + 0];
      double x1 = x[(u64)col * 6 + 1];
      double x2 = x[(u64)col * 6 + 2];
      double x3 = x[(u64)col * 6 + 3];
      double x4 = x[(u64)col * 6 + 4];
      double x5 = x[(u64)col * 6 + 5];
      v0 = a[0] * x0 + a[1] * x1 + a[2] * x2 + a[3] * x3 + a[4] * x4 + a[5] * x5;
      v1 = a[6] * x0 + a[7] * x1 + a[8] * x2 + a[9] * x3 + a[10] * x4 + a[11] * x5;
      v2 = a[12] * x0 + a[13] * x1 + a[14] * x2 + a[15] * x3 + a[16] * x4 + a[17] * x5;
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

// merge-path block SpMV y = A x, 6x3 blocks, 4 warps per block, the next 32 blocks loaded while the current ones are multiplied; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_spmv_merge_6x3(const double* __restrict__ av, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double2 stage2[4][288];
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
  double2 pf5;
  double2 pf6;
  double2 pf7;
  double2 pf8;
  double pf_odd = 0.0;
  double k0 = 0.0;
  double k1 = 0.0;
  double k2 = 0.0;
  double k3 = 0.0;
  double k4 = 0.0;
  double k5 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  {
    u32 nd = pcnt * 18;
    const double2* src2 = (const double2*)(av + b0 * 18);
    if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
    if (lane + 32 < nd / 2) pf1 = src2[lane + 32];
    if (lane + 64 < nd / 2) pf2 = src2[lane + 64];
    if (lane + 96 < nd / 2) pf3 = src2[lane + 96];
    if (lane + 128 < nd / 2) pf4 = src2[lane + 128];
    if (lane + 160 < nd / 2) pf5 = src2[lane + 160];
    if (lane + 192 < nd / 2) pf6 = src2[lane + 192];
    if (lane + 224 < nd / 2) pf7 = src2[lane + 224];
    if (lane + 256 < nd / 2) pf8 = src2[lane + 256];
    if ((nd & 1) && lane == 0) pf_odd = av[b0 * 18 + nd - 1];
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    {
      u32 nd = cnt * 18;
      if (lane + 0 < nd / 2) stage2[wl][lane + 0] = pf0;
      if (lane + 32 < nd / 2) stage2[wl][lane + 32] = pf1;
      if (lane + 64 < nd / 2) stage2[wl][lane + 64] = pf2;
      if (lane + 96 < nd / 2) stage2[wl][lane + 96] = pf3;
      if (lane + 128 < nd / 2) stage2[wl][lane + 128] = pf4;
      if (lane + 160 < nd / 2) stage2[wl][lane + 160] = pf5;
      if (lane + 192 < nd / 2) stage2[wl][lane + 192] = pf6;
      if (lane + 224 < nd / 2) stage2[wl][lane + 224] = pf7;
      if (lane + 256 < nd / 2) stage2[wl][lane + 256] = pf8;
      if ((nd & 1) && lane == 0) stage[nd - 1] = pf_odd;
    }
    __syncwarp();
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        u32 nd = pcnt * 18;
        const double2* src2 = (const double2*)(av + nbase * 18);
        if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
        if (lane + 32 < nd / 2) pf1 = src2[lane + 32];
        if (lane + 64 < nd / 2) pf2 = src2[lane + 64];
        if (lane + 96 < nd / 2) pf3 = src2[lane + 96];
        if (lane + 128 < nd / 2) pf4 = src2[lane + 128];
        if (lane + 160 < nd / 2) pf5 = src2[lane + 160];
        if (lane + 192 < nd / 2) pf6 = src2[lane + 192];
        if (lane + 224 < nd / 2) pf7 = src2[lane + 224];
        if (lane + 256 < nd / 2) pf8 = src2[lane + 256];
        if ((nd & 1) && lane == 0) pf_odd = av[nbase * 18 + nd - 1];
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    double v1 = 0.0;
    double v2 = 0.0;
    double v3 = 0.0;
    double v4 = 0.0;
    double v5 = 0.0;
    if (valid) {
      const double* a = stage + lane * 18;
      double x0 = x[(u64)col * 3 + 0];
      double x1 = x[(u64)col * 3 + 1];
      double x2 = x[(u64)col * 3 + 2];
      v0 = a[0] * x0 + a[1] * x1 + a[2] * x2;
      v1 = a[3] * x0 + a[4] * x1 + a[5] * x2;
      v2 = a[6] * x0 + a[7] * x1 + a[8] * x2;
      v3 = a[9] * x0 + a[10] * x1 + a[11] * x2;
      v4 = a[12] * x0 + a[13] * x1 + a[14] * x2;
      v5 = a[15] * x0 + a[16] * x1 + a[17] * x2;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      double o2 = __shfl_up_sync(0xffffffffu, v2, d);
      double o3 = __shfl_up_sync(0xffffffffu, v3, d);
      double o4 = __shfl_up_sync(0xffffffffu, v4, d);
      double o5 = __shfl_up_sync(0xffffffffu, v5, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
        v2 = o2 + v2;
        v3 = o3 + v3;
        v4 = o4 + v4;
        v5 = o5 + v5;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
      v2 = k2 + v2;
      v3 = k3 + v3;
      v4 = k4 + v4;
      v5 = k5 + v5;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    k2 = __shfl_sync(0xffffffffu, v2, cnt - 1);
    k3 = __shfl_sync(0xffffffffu, v3, cnt - 1);
    k4 = __shfl_sync(0xffffffffu, v4, cnt - 1);
    k5 = __shfl_sync(0xffffffffu, v5, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 6;
      if (row != head_row && row != tail_row) {
        yr[0] = v0;
        yr[1] = v1;
        yr[2] = v2;
        yr[3] = v3;
        yr[4] = v4;
        yr[5] = v5;
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 6;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 6;
        mine[0] = v0;
        mine[1] = v1;
        mine[2] = v2;
        mine[3] = v3;
        mine[4] = v4;
        mine[5] = v5;
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
          double t3 = is_tail ? v3 : __ldcg(other + 3);
          double h3 = is_tail ? __ldcg(other + 3) : v3;
          double t4 = is_tail ? v4 : __ldcg(other + 4);
          double h4 = is_tail ? __ldcg(other + 4) : v4;
          double t5 = is_tail ? v5 : __ldcg(other + 5);
          double h5 = is_tail ? __ldcg(other + 5) : v5;
          yr[0] = t0 + h0;
          yr[1] = t1 + h1;
          yr[2] = t2 + h2;
          yr[3] = t3 + h3;
          yr[4] = t4 + h4;
          yr[5] = t5 + h5;
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = A x, 6x6 blocks, 4 warps per block, the next 32 blocks loaded while the current ones are multiplied; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_spmv_merge_6x6(const double* __restrict__ av, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double2 stage2[4][576];
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
  double2 pf5;
  double2 pf6;
  double2 pf7;
  double2 pf8;
  double2 pf9;
  double2 pf10;
  double2 pf11;
  double2 pf12;
  double2 pf13;
  double2 pf14;
  double2 pf15;
  double2 pf16;
  double2 pf17;
  double pf_odd = 0.0;
  double k0 = 0.0;
  double k1 = 0.0;
  double k2 = 0.0;
  double k3 = 0.0;
  double k4 = 0.0;
  double k5 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  {
    u32 nd = pcnt * 36;
    const double2* src2 = (const double2*)(av + b0 * 36);
    if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
    if (lane + 32 < nd / 2) pf1 = src2[lane + 32];
    if (lane + 64 < nd / 2) pf2 = src2[lane + 64];
    if (lane + 96 < nd / 2) pf3 = src2[lane + 96];
    if (lane + 128 < nd / 2) pf4 = src2[lane + 128];
    if (lane + 160 < nd / 2) pf5 = src2[lane + 160];
    if (lane + 192 < nd / 2) pf6 = src2[lane + 192];
    if (lane + 224 < nd / 2) pf7 = src2[lane + 224];
    if (lane + 256 < nd / 2) pf8 = src2[lane + 256];
    if (lane + 288 < nd / 2) pf9 = src2[lane + 288];
    if (lane + 320 < nd / 2) pf10 = src2[lane + 320];
    if (lane + 352 < nd / 2) pf11 = src2[lane + 352];
    if (lane + 384 < nd / 2) pf12 = src2[lane + 384];
    if (lane + 416 < nd / 2) pf13 = src2[lane + 416];
    if (lane + 448 < nd / 2) pf14 = src2[lane + 448];
    if (lane + 480 < nd / 2) pf15 = src2[lane + 480];
    if (lane + 512 < nd / 2) pf16 = src2[lane + 512];
    if (lane + 544 < nd / 2) pf17 = src2[lane + 544];
    if ((nd & 1) && lane == 0) pf_odd = av[b0 * 36 + nd - 1];
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    {
      u32 nd = cnt * 36;
      if (lane + 0 < nd / 2) stage2[wl][lane + 0] = pf0;
      if (lane + 32 < nd / 2) stage2[wl][lane + 32] = pf1;
      if (lane + 64 < nd / 2) stage2[wl][lane + 64] = pf2;
      if (lane + 96 < nd / 2) stage2[wl][lane + 96] = pf3;
      if (lane + 128 < nd / 2) stage2[wl][lane + 128] = pf4;
      if (lane + 160 < nd / 2) stage2[wl][lane + 160] = pf5;
      if (lane + 192 < nd / 2) stage2[wl][lane + 192] = pf6;
      if (lane + 224 < nd / 2) stage2[wl][lane + 224] = pf7;
      if (lane + 256 < nd / 2) stage2[wl][lane + 256] = pf8;
      if (lane + 288 < nd / 2) stage2[wl][lane + 288] = pf9;
      if (lane + 320 < nd / 2) stage2[wl][lane + 320] = pf10;
      if (lane + 352 < nd / 2) stage2[wl][lane + 352] = pf11;
      if (lane + 384 < nd / 2) stage2[wl][lane + 384] = pf12;
      if (lane + 416 < nd / 2) stage2[wl][lane + 416] = pf13;
      if (lane + 448 < nd / 2) stage2[wl][lane + 448] = pf14;
      if (lane + 480 < nd / 2) stage2[wl][lane + 480] = pf15;
      if (lane + 512 < nd / 2) stage2[wl][lane + 512] = pf16;
      if (lane + 544 < nd / 2) stage2[wl][lane + 544] = pf17;
      if ((nd & 1) && lane == 0) stage[nd - 1] = pf_odd;
    }
    __syncwarp();
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        u32 nd = pcnt * 36;
        const double2* src2 = (const double2*)(av + nbase * 36);
        if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
        if (lane + 32 < nd / 2) pf1 = src2[lane + 32];
        if (lane + 64 < nd / 2) pf2 = src2[lane + 64];
        if (lane + 96 < nd / 2) pf3 = src2[lane + 96];
        if (lane + 128 < nd / 2) pf4 = src2[lane + 128];
        if (lane + 160 < nd / 2) pf5 = src2[lane + 160];
        if (lane + 192 < nd / 2) pf6 = src2[lane + 192];
        if (lane + 224 < nd / 2) pf7 = src2[lane + 224];
        if (lane + 256 < nd / 2) pf8 = src2[lane + 256];
        if (lane + 288 < nd / 2) pf9 = src2[lane + 288];
        if (lane + 320 < nd / 2) pf10 = src2[lane + 320];
        if (lane + 352 < nd / 2) pf11 = src2[lane + 352];
        if (lane + 384 < nd / 2) pf12 = src2[lane + 384];
        if (lane + 416 < nd / 2) pf13 = src2[lane + 416];
        if (lane + 448 < nd / 2) pf14 = src2[lane + 448];
        if (lane + 480 < nd / 2) pf15 = src2[lane + 480];
        if (lane + 512 < nd / 2) pf16 = src2[lane + 512];
        if (lane + 544 < nd / 2) pf17 = src2[lane + 544];
        if ((nd & 1) && lane == 0) pf_odd = av[nbase * 36 + nd - 1];
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    double v1 = 0.0;
    double v2 = 0.0;
    double v3 = 0.0;
    double v4 = 0.0;
    double v5 = 0.0;
    if (valid) {
      const double* a = stage + lane * 36;
      double x0 = x[(u64)col * 6 + 0];
      double x1 = x[(u64)col * 6 + 1];
      double x2 = x[(u64)col * 6 + 2];
      double x3 = x[(u64)col * 6 + 3];
      double x4 = x[(u64)col * 6 + 4];
      double x5 = x[(u64)col * 6 + 5];
      v0 = a[0] * x0 + a[1] * x1 + a[2] * x2 + a[3] * x3 + a[4] * x4 + a[5] * x5;
      v1 = a[6] * x0 + a[7] * x1 + a[8] * x2 + a[9] * x3 + a[10] * x4 + a[11] * x5;
      v2 = a[12] * x0 + a[13] * x1 + a[14] * x2 + a[15] * x3 + a[16] * x4 + a[17] * x5;
      v3 = a[18] * x0 + a[19] * x1 + a[20] * x2 + a[21] * x3 + a[22] * x4 + a[23] * x5;
      v4 = a[24] * x0 + a[25] * x1 + a[26] * x2 + a[27] * x3 + a[28] * x4 + a[29] * x5;
      v5 = a[30] * x0 + a[31] * x1 + a[32] * x2 + a[33] * x3 + a[34] * x4 + a[35] * x5;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      double o2 = __shfl_up_sync(0xffffffffu, v2, d);
      double o3 = __shfl_up_sync(0xffffffffu, v3, d);
      double o4 = __shfl_up_sync(0xffffffffu, v4, d);
      double o5 = __shfl_up_sync(0xffffffffu, v5, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
        v2 = o2 + v2;
        v3 = o3 + v3;
        v4 = o4 + v4;
        v5 = o5 + v5;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
      v2 = k2 + v2;
      v3 = k3 + v3;
      v4 = k4 + v4;
      v5 = k5 + v5;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    k2 = __shfl_sync(0xffffffffu, v2, cnt - 1);
    k3 = __shfl_sync(0xffffffffu, v3, cnt - 1);
    k4 = __shfl_sync(0xffffffffu, v4, cnt - 1);
    k5 = __shfl_sync(0xffffffffu, v5, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 6;
      if (row != head_row && row != tail_row) {
        yr[0] = v0;
        yr[1] = v1;
        yr[2] = v2;
        yr[3] = v3;
        yr[4] = v4;
        yr[5] = v5;
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 6;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 6;
        mine[0] = v0;
        mine[1] = v1;
        mine[2] = v2;
        mine[3] = v3;
        mine[4] = v4;
        mine[5] = v5;
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
          double t3 = is_tail ? v3 : __ldcg(other + 3);
          double h3 = is_tail ? __ldcg(other + 3) : v3;
          double t4 = is_tail ? v4 : __ldcg(other + 4);
          double h4 = is_tail ? __ldcg(other + 4) : v4;
          double t5 = is_tail ? v5 : __ldcg(other + 5);
          double h5 = is_tail ? __ldcg(other + 5) : v5;
          yr[0] = t0 + h0;
          yr[1] = t1 + h1;
          yr[2] = t2 + h2;
          yr[3] = t3 + h3;
          yr[4] = t4 + h4;
          yr[5] = t5 + h5;
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = b - A x, 6x6 blocks, 4 warps per block, the next 32 blocks loaded while the current ones are multiplied; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_residual_merge_6x6(const double* __restrict__ av, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, const double* __restrict__ bv, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double2 stage2[4][576];
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
  double2 pf5;
  double2 pf6;
  double2 pf7;
  double2 pf8;
  double2 pf9;
  double2 pf10;
  double2 pf11;
  double2 pf12;
  double2 pf13;
  double2 pf14;
  double2 pf15;
  double2 pf16;
  double2 pf17;
  double pf_odd = 0.0;
  double k0 = 0.0;
  double k1 = 0.0;
  double k2 = 0.0;
  double k3 = 0.0;
  double k4 = 0.0;
  double k5 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  {
    u32 nd = pcnt * 36;
    const double2* src2 = (const double2*)(av + b0 * 36);
    if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
    if (lane + 32 < nd / 2) pf1 = src2[lane + 32];
    if (lane + 64 < nd / 2) pf2 = src2[lane + 64];
    if (lane + 96 < nd / 2) pf3 = src2[lane + 96];
    if (lane + 128 < nd / 2) pf4 = src2[lane + 128];
    if (lane + 160 < nd / 2) pf5 = src2[lane + 160];
    if (lane + 192 < nd / 2) pf6 = src2[lane + 192];
    if (lane + 224 < nd / 2) pf7 = src2[lane + 224];
    if (lane + 256 < nd / 2) pf8 = src2[lane + 256];
    if (lane + 288 < nd / 2) pf9 = src2[lane + 288];
    if (lane + 320 < nd / 2) pf10 = src2[lane + 320];
    if (lane + 352 < nd / 2) pf11 = src2[lane + 352];
    if (lane + 384 < nd / 2) pf12 = src2[lane + 384];
    if (lane + 416 < nd / 2) pf13 = src2[lane + 416];
    if (lane + 448 < nd / 2) pf14 = src2[lane + 448];
    if (lane + 480 < nd / 2) pf15 = src2[lane + 480];
    if (lane + 512 < nd / 2) pf16 = src2[lane + 512];
    if (lane + 544 < nd / 2) pf17 = src2[lane + 544];
    if ((nd & 1) && lane == 0) pf_odd = av[b0 * 36 + nd - 1];
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    {
      u32 nd = cnt * 36;
      if (lane + 0 < nd / 2) stage2[wl][lane + 0] = pf0;
      if (lane + 32 < nd / 2) stage2[wl][lane + 32] = pf1;
      if (lane + 64 < nd / 2) stage2[wl][lane + 64] = pf2;
      if (lane + 96 < nd / 2) stage2[wl][lane + 96] = pf3;
      if (lane + 128 < nd / 2) stage2[wl][lane + 128] = pf4;
      if (lane + 160 < nd / 2) stage2[wl][lane + 160] = pf5;
      if (lane + 192 < nd / 2) stage2[wl][lane + 192] = pf6;
      if (lane + 224 < nd / 2) stage2[wl][lane + 224] = pf7;
      if (lane + 256 < nd / 2) stage2[wl][lane + 256] = pf8;
      if (lane + 288 < nd / 2) stage2[wl][lane + 288] = pf9;
      if (lane + 320 < nd / 2) stage2[wl][lane + 320] = pf10;
      if (lane + 352 < nd / 2) stage2[wl][lane + 352] = pf11;
      if (lane + 384 < nd / 2) stage2[wl][lane + 384] = pf12;
      if (lane + 416 < nd / 2) stage2[wl][lane + 416] = pf13;
      if (lane + 448 < nd / 2) stage2[wl][lane + 448] = pf14;
      if (lane + 480 < nd / 2) stage2[wl][lane + 480] = pf15;
      if (lane + 512 < nd / 2) stage2[wl][lane + 512] = pf16;
      if (lane + 544 < nd / 2) stage2[wl][lane + 544] = pf17;
      if ((nd & 1) && lane == 0) stage[nd - 1] = pf_odd;
    }
    __syncwarp();
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        u32 nd = pcnt * 36;
        const double2* src2 = (const double2*)(av + nbase * 36);
        if (lane + 0 < nd / 2) pf0 = src2[lane + 0];
        if (lane + 32 < nd / 2) pf1 = src2[lane + 32];
        if (lane + 64 < nd / 2) pf2 = src2[lane + 64];
        if (lane + 96 < nd / 2) pf3 = src2[lane + 96];
        if (lane + 128 < nd / 2) pf4 = src2[lane + 128];
        if (lane + 160 < nd / 2) pf5 = src2[lane + 160];
        if (lane + 192 < nd / 2) pf6 = src2[lane + 192];
        if (lane + 224 < nd / 2) pf7 = src2[lane + 224];
        if (lane + 256 < nd / 2) pf8 = src2[lane + 256];
        if (lane + 288 < nd / 2) pf9 = src2[lane + 288];
        if (lane + 320 < nd / 2) pf10 = src2[lane + 320];
        if (lane + 352 < nd / 2) pf11 = src2[lane + 352];
        if (lane + 384 < nd / 2) pf12 = src2[lane + 384];
        if (lane + 416 < nd / 2) pf13 = src2[lane + 416];
        if (lane + 448 < nd / 2) pf14 = src2[lane + 448];
        if (lane + 480 < nd / 2) pf15 = src2[lane + 480];
        if (lane + 512 < nd / 2) pf16 = src2[lane + 512];
        if (lane + 544 < nd / 2) pf17 = src2[lane + 544];
        if ((nd & 1) && lane == 0) pf_odd = av[nbase * 36 + nd - 1];
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    double v1 = 0.0;
    double v2 = 0.0;
    double v3 = 0.0;
    double v4 = 0.0;
    double v5 = 0.0;
    if (valid) {
      const double* a = stage + lane * 36;
      double x0 = x[(u64)col * 6 + 0];
      double x1 = x[(u64)col * 6 + 1];
      double x2 = x[(u64)col * 6 + 2];
      double x3 = x[(u64)col * 6 + 3];
      double x4 = x[(u64)col * 6 + 4];
      double x5 = x[(u64)col * 6 + 5];
      v0 = a[0] * x0 + a[1] * x1 + a[2] * x2 + a[3] * x3 + a[4] * x4 + a[5] * x5;
      v1 = a[6] * x0 + a[7] * x1 + a[8] * x2 + a[9] * x3 + a[10] * x4 + a[11] * x5;
      v2 = a[12] * x0 + a[13] * x1 + a[14] * x2 + a[15] * x3 + a[16] * x4 + a[17] * x5;
      v3 = a[18] * x0 + a[19] * x1 + a[20] * x2 + a[21] * x3 + a[22] * x4 + a[23] * x5;
      v4 = a[24] * x0 + a[25] * x1 + a[26] * x2 + a[27] * x3 + a[28] * x4 + a[29] * x5;
      v5 = a[30] * x0 + a[31] * x1 + a[32] * x2 + a[33] * x3 + a[34] * x4 + a[35] * x5;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      double o2 = __shfl_up_sync(0xffffffffu, v2, d);
      double o3 = __shfl_up_sync(0xffffffffu, v3, d);
      double o4 = __shfl_up_sync(0xffffffffu, v4, d);
      double o5 = __shfl_up_sync(0xffffffffu, v5, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
        v2 = o2 + v2;
        v3 = o3 + v3;
        v4 = o4 + v4;
        v5 = o5 + v5;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
      v2 = k2 + v2;
      v3 = k3 + v3;
      v4 = k4 + v4;
      v5 = k5 + v5;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    k2 = __shfl_sync(0xffffffffu, v2, cnt - 1);
    k3 = __shfl_sync(0xffffffffu, v3, cnt - 1);
    k4 = __shfl_sync(0xffffffffu, v4, cnt - 1);
    k5 = __shfl_sync(0xffffffffu, v5, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 6;
      const double* br_ = bv + (u64)row * 6;
      if (row != head_row && row != tail_row) {
        yr[0] = 1.0 * br_[0] - 1.0 * (v0);
        yr[1] = 1.0 * br_[1] - 1.0 * (v1);
        yr[2] = 1.0 * br_[2] - 1.0 * (v2);
        yr[3] = 1.0 * br_[3] - 1.0 * (v3);
        yr[4] = 1.0 * br_[4] - 1.0 * (v4);
        yr[5] = 1.0 * br_[5] - 1.0 * (v5);
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 6;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 6;
        mine[0] = v0;
        mine[1] = v1;
        mine[2] = v2;
        mine[3] = v3;
        mine[4] = v4;
        mine[5] = v5;
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
          double t3 = is_tail ? v3 : __ldcg(other + 3);
          double h3 = is_tail ? __ldcg(other + 3) : v3;
          double t4 = is_tail ? v4 : __ldcg(other + 4);
          double h4 = is_tail ? __ldcg(other + 4) : v4;
          double t5 = is_tail ? v5 : __ldcg(other + 5);
          double h5 = is_tail ? __ldcg(other + 5) : v5;
          yr[0] = 1.0 * br_[0] - 1.0 * (t0 + h0);
          yr[1] = 1.0 * br_[1] - 1.0 * (t1 + h1);
          yr[2] = 1.0 * br_[2] - 1.0 * (t2 + h2);
          yr[3] = 1.0 * br_[3] - 1.0 * (t3 + h3);
          yr[4] = 1.0 * br_[4] - 1.0 * (t4 + h4);
          yr[5] = 1.0 * br_[5] - 1.0 * (t5 + h5);
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

// merge-path block SpMV y = A x, 6x6 blocks (values stored as f32, widened to f64; x, y and the sums f64), 4 warps per block, the next 32 blocks loaded while the current ones are multiplied; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_spmv_merge_f32_6x6(const float* __restrict__ av, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ float4 stage2[4][288];
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
  float4 pf3;
  float4 pf4;
  float4 pf5;
  float4 pf6;
  float4 pf7;
  float4 pf8;
  float pf_odd = 0.0f;
  double k0 = 0.0;
  double k1 = 0.0;
  double k2 = 0.0;
  double k3 = 0.0;
  double k4 = 0.0;
  double k5 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  {
    u32 nd = pcnt * 36;
    const float4* src2 = (const float4*)(av + b0 * 36);
    if (lane + 0 < nd / 4) pf0 = src2[lane + 0];
    if (lane + 32 < nd / 4) pf1 = src2[lane + 32];
    if (lane + 64 < nd / 4) pf2 = src2[lane + 64];
    if (lane + 96 < nd / 4) pf3 = src2[lane + 96];
    if (lane + 128 < nd / 4) pf4 = src2[lane + 128];
    if (lane + 160 < nd / 4) pf5 = src2[lane + 160];
    if (lane + 192 < nd / 4) pf6 = src2[lane + 192];
    if (lane + 224 < nd / 4) pf7 = src2[lane + 224];
    if (lane + 256 < nd / 4) pf8 = src2[lane + 256];
    if (lane < (nd & 3u)) pf_odd = av[b0 * 36 + (nd & ~3u) + lane];
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    {
      u32 nd = cnt * 36;
      if (lane + 0 < nd / 4) stage2[wl][lane + 0] = pf0;
      if (lane + 32 < nd / 4) stage2[wl][lane + 32] = pf1;
      if (lane + 64 < nd / 4) stage2[wl][lane + 64] = pf2;
      if (lane + 96 < nd / 4) stage2[wl][lane + 96] = pf3;
      if (lane + 128 < nd / 4) stage2[wl][lane + 128] = pf4;
      if (lane + 160 < nd / 4) stage2[wl][lane + 160] = pf5;
      if (lane + 192 < nd / 4) stage2[wl][lane + 192] = pf6;
      if (lane + 224 < nd / 4) stage2[wl][lane + 224] = pf7;
      if (lane + 256 < nd / 4) stage2[wl][lane + 256] = pf8;
      if (lane < (nd & 3u)) stage[(nd & ~3u) + lane] = pf_odd;
    }
    __syncwarp();
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        u32 nd = pcnt * 36;
        const float4* src2 = (const float4*)(av + nbase * 36);
        if (lane + 0 < nd / 4) pf0 = src2[lane + 0];
        if (lane + 32 < nd / 4) pf1 = src2[lane + 32];
        if (lane + 64 < nd / 4) pf2 = src2[lane + 64];
        if (lane + 96 < nd / 4) pf3 = src2[lane + 96];
        if (lane + 128 < nd / 4) pf4 = src2[lane + 128];
        if (lane + 160 < nd / 4) pf5 = src2[lane + 160];
        if (lane + 192 < nd / 4) pf6 = src2[lane + 192];
        if (lane + 224 < nd / 4) pf7 = src2[lane + 224];
        if (lane + 256 < nd / 4) pf8 = src2[lane + 256];
        if (lane < (nd & 3u)) pf_odd = av[nbase * 36 + (nd & ~3u) + lane];
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    double v1 = 0.0;
    double v2 = 0.0;
    double v3 = 0.0;
    double v4 = 0.0;
    double v5 = 0.0;
    if (valid) {
      const float* a = stage + lane * 36;
      const double2* xc2 = (const double2*)(x + (u64)col * 6);
      double2 xv0 = xc2[0];
      double2 xv1 = xc2[1];
      double2 xv2 = xc2[2];
      double x0 = xv0.x;
      double x1 = xv0.y;
      double x2 = xv1.x;
      double x3 = xv1.y;
      double x4 = xv2.x;
      double x5 = xv2.y;
      v0 = (double)a[0] * x0 + (double)a[1] * x1 + (double)a[2] * x2 + (double)a[3] * x3 + (double)a[4] * x4 + (double)a[5] * x5;
      v1 = (double)a[6] * x0 + (double)a[7] * x1 + (double)a[8] * x2 + (double)a[9] * x3 + (double)a[10] * x4 + (double)a[11] * x5;
      v2 = (double)a[12] * x0 + (double)a[13] * x1 + (double)a[14] * x2 + (double)a[15] * x3 + (double)a[16] * x4 + (double)a[17] * x5;
      v3 = (double)a[18] * x0 + (double)a[19] * x1 + (double)a[20] * x2 + (double)a[21] * x3 + (double)a[22] * x4 + (double)a[23] * x5;
      v4 = (double)a[24] * x0 + (double)a[25] * x1 + (double)a[26] * x2 + (double)a[27] * x3 + (double)a[28] * x4 + (double)a[29] * x5;
      v5 = (double)a[30] * x0 + (double)a[31] * x1 + (double)a[32] * x2 + (double)a[33] * x3 + (double)a[34] * x4 + (double)a[35] * x5;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      double o2 = __shfl_up_sync(0xffffffffu, v2, d);
      double o3 = __shfl_up_sync(0xffffffffu, v3, d);
      double o4 = __shfl_up_sync(0xffffffffu, v4, d);
      double o5 = __shfl_up_sync(0xffffffffu, v5, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
        v2 = o2 + v2;
        v3 = o3 + v3;
        v4 = o4 + v4;
        v5 = o5 + v5;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
      v2 = k2 + v2;
      v3 = k3 + v3;
      v4 = k4 + v4;
      v5 = k5 + v5;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    k2 = __shfl_sync(0xffffffffu, v2, cnt - 1);
    k3 = __shfl_sync(0xffffffffu, v3, cnt - 1);
    k4 = __shfl_sync(0xffffffffu, v4, cnt - 1);
    k5 = __shfl_sync(0xffffffffu, v5, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 6;
      if (row != head_row && row != tail_row) {
        yr[0] = v0;
        yr[1] = v1;
        yr[2] = v2;
        yr[3] = v3;
        yr[4] = v4;
        yr[5] = v5;
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 6;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 6;
        mine[0] = v0;
        mine[1] = v1;
        mine[2] = v2;
        mine[3] = v3;
        mine[4] = v4;
        mine[5] = v5;
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
          double t3 = is_tail ? v3 : __ldcg(other + 3);
          double h3 = is_tail ? __ldcg(other + 3) : v3;
          double t4 = is_tail ? v4 : __ldcg(other + 4);
          double h4 = is_tail ? __ldcg(other + 4) : v4;
          double t5 = is_tail ? v5 : __ldcg(other + 5);
          double h5 = is_tail ? __ldcg(other + 5) : v5;
          yr[0] = t0 + h0;
          yr[1] = t1 + h1;
          yr[2] = t2 + h2;
          yr[3] = t3 + h3;
          yr[4] = t4 + h4;
          yr[5] = t5 + h5;
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = b - A x, 6x6 blocks (values stored as f32, widened to f64; x, y and the sums f64), 4 warps per block, the next 32 blocks loaded while the current ones are multiplied; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_residual_merge_f32_6x6(const float* __restrict__ av, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, const double* __restrict__ bv, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ float4 stage2[4][288];
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
  float4 pf3;
  float4 pf4;
  float4 pf5;
  float4 pf6;
  float4 pf7;
  float4 pf8;
  float pf_odd = 0.0f;
  double k0 = 0.0;
  double k1 = 0.0;
  double k2 = 0.0;
  double k3 = 0.0;
  double k4 = 0.0;
  double k5 = 0.0;
  u32 pci = 0, prow = 0xfffffffeu;
  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);
  {
    u32 nd = pcnt * 36;
    const float4* src2 = (const float4*)(av + b0 * 36);
    if (lane + 0 < nd / 4) pf0 = src2[lane + 0];
    if (lane + 32 < nd / 4) pf1 = src2[lane + 32];
    if (lane + 64 < nd / 4) pf2 = src2[lane + 64];
    if (lane + 96 < nd / 4) pf3 = src2[lane + 96];
    if (lane + 128 < nd / 4) pf4 = src2[lane + 128];
    if (lane + 160 < nd / 4) pf5 = src2[lane + 160];
    if (lane + 192 < nd / 4) pf6 = src2[lane + 192];
    if (lane + 224 < nd / 4) pf7 = src2[lane + 224];
    if (lane + 256 < nd / 4) pf8 = src2[lane + 256];
    if (lane < (nd & 3u)) pf_odd = av[b0 * 36 + (nd & ~3u) + lane];
    pci = lane < pcnt ? ci[b0 + lane] : 0;
    prow = lane < pcnt ? brow[b0 + lane] : 0xfffffffeu;
  }
  for (u64 base = b0; base < b1; base += 32) {
    u32 cnt = pcnt;
    u32 col = pci, row = prow;
    {
      u32 nd = cnt * 36;
      if (lane + 0 < nd / 4) stage2[wl][lane + 0] = pf0;
      if (lane + 32 < nd / 4) stage2[wl][lane + 32] = pf1;
      if (lane + 64 < nd / 4) stage2[wl][lane + 64] = pf2;
      if (lane + 96 < nd / 4) stage2[wl][lane + 96] = pf3;
      if (lane + 128 < nd / 4) stage2[wl][lane + 128] = pf4;
      if (lane + 160 < nd / 4) stage2[wl][lane + 160] = pf5;
      if (lane + 192 < nd / 4) stage2[wl][lane + 192] = pf6;
      if (lane + 224 < nd / 4) stage2[wl][lane + 224] = pf7;
      if (lane + 256 < nd / 4) stage2[wl][lane + 256] = pf8;
      if (lane < (nd & 3u)) stage[(nd & ~3u) + lane] = pf_odd;
    }
    __syncwarp();
    u64 nbase = base + 32;
    if (nbase < b1) {
      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);
      {
        u32 nd = pcnt * 36;
        const float4* src2 = (const float4*)(av + nbase * 36);
        if (lane + 0 < nd / 4) pf0 = src2[lane + 0];
        if (lane + 32 < nd / 4) pf1 = src2[lane + 32];
        if (lane + 64 < nd / 4) pf2 = src2[lane + 64];
        if (lane + 96 < nd / 4) pf3 = src2[lane + 96];
        if (lane + 128 < nd / 4) pf4 = src2[lane + 128];
        if (lane + 160 < nd / 4) pf5 = src2[lane + 160];
        if (lane + 192 < nd / 4) pf6 = src2[lane + 192];
        if (lane + 224 < nd / 4) pf7 = src2[lane + 224];
        if (lane + 256 < nd / 4) pf8 = src2[lane + 256];
        if (lane < (nd & 3u)) pf_odd = av[nbase * 36 + (nd & ~3u) + lane];
        pci = lane < pcnt ? ci[nbase + lane] : 0;
        prow = lane < pcnt ? brow[nbase + lane] : 0xfffffffeu;
      }
    }
    bool valid = lane < cnt;
    double v0 = 0.0;
    double v1 = 0.0;
    double v2 = 0.0;
    double v3 = 0.0;
    double v4 = 0.0;
    double v5 = 0.0;
    if (valid) {
      const float* a = stage + lane * 36;
      const double2* xc2 = (const double2*)(x + (u64)col * 6);
      double2 xv0 = xc2[0];
      double2 xv1 = xc2[1];
      double2 xv2 = xc2[2];
      double x0 = xv0.x;
      double x1 = xv0.y;
      double x2 = xv1.x;
      double x3 = xv1.y;
      double x4 = xv2.x;
      double x5 = xv2.y;
      v0 = (double)a[0] * x0 + (double)a[1] * x1 + (double)a[2] * x2 + (double)a[3] * x3 + (double)a[4] * x4 + (double)a[5] * x5;
      v1 = (double)a[6] * x0 + (double)a[7] * x1 + (double)a[8] * x2 + (double)a[9] * x3 + (double)a[10] * x4 + (double)a[11] * x5;
      v2 = (double)a[12] * x0 + (double)a[13] * x1 + (double)a[14] * x2 + (double)a[15] * x3 + (double)a[16] * x4 + (double)a[17] * x5;
      v3 = (double)a[18] * x0 + (double)a[19] * x1 + (double)a[20] * x2 + (double)a[21] * x3 + (double)a[22] * x4 + (double)a[23] * x5;
      v4 = (double)a[24] * x0 + (double)a[25] * x1 + (double)a[26] * x2 + (double)a[27] * x3 + (double)a[28] * x4 + (double)a[29] * x5;
      v5 = (double)a[30] * x0 + (double)a[31] * x1 + (double)a[32] * x2 + (double)a[33] * x3 + (double)a[34] * x4 + (double)a[35] * x5;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      double o2 = __shfl_up_sync(0xffffffffu, v2, d);
      double o3 = __shfl_up_sync(0xffffffffu, v3, d);
      double o4 = __shfl_up_sync(0xffffffffu, v4, d);
      double o5 = __shfl_up_sync(0xffffffffu, v5, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
        v2 = o2 + v2;
        v3 = o3 + v3;
        v4 = o4 + v4;
        v5 = o5 + v5;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
      v2 = k2 + v2;
      v3 = k3 + v3;
      v4 = k4 + v4;
      v5 = k5 + v5;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    k2 = __shfl_sync(0xffffffffu, v2, cnt - 1);
    k3 = __shfl_sync(0xffffffffu, v3, cnt - 1);
    k4 = __shfl_sync(0xffffffffu, v4, cnt - 1);
    k5 = __shfl_sync(0xffffffffu, v5, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 6;
      const double* br_ = bv + (u64)row * 6;
      if (row != head_row && row != tail_row) {
        yr[0] = 1.0 * br_[0] - 1.0 * (v0);
        yr[1] = 1.0 * br_[1] - 1.0 * (v1);
        yr[2] = 1.0 * br_[2] - 1.0 * (v2);
        yr[3] = 1.0 * br_[3] - 1.0 * (v3);
        yr[4] = 1.0 * br_[4] - 1.0 * (v4);
        yr[5] = 1.0 * br_[5] - 1.0 * (v5);
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 6;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 6;
        mine[0] = v0;
        mine[1] = v1;
        mine[2] = v2;
        mine[3] = v3;
        mine[4] = v4;
        mine[5] = v5;
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
          double t3 = is_tail ? v3 : __ldcg(other + 3);
          double h3 = is_tail ? __ldcg(other + 3) : v3;
          double t4 = is_tail ? v4 : __ldcg(other + 4);
          double h4 = is_tail ? __ldcg(other + 4) : v4;
          double t5 = is_tail ? v5 : __ldcg(other + 5);
          double h5 = is_tail ? __ldcg(other + 5) : v5;
          yr[0] = 1.0 * br_[0] - 1.0 * (t0 + h0);
          yr[1] = 1.0 * br_[1] - 1.0 * (t1 + h1);
          yr[2] = 1.0 * br_[2] - 1.0 * (t2 + h2);
          yr[3] = 1.0 * br_[3] - 1.0 * (t3 + h3);
          yr[4] = 1.0 * br_[4] - 1.0 * (t4 + h4);
          yr[5] = 1.0 * br_[5] - 1.0 * (t5 + h5);
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

// merge-path block SpMV y = A x, 6x6 blocks (each block read at pos[k], transposed where bit 31 is set: a symmetric operator's upper triangle only), 4 warps per block, the next 32 blocks loaded while the current ones are multiplied, blocks gathered from global memory; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_spmv_mirror_6x6(const double* __restrict__ av, const unsigned int* __restrict__ pos, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
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
  double k3 = 0.0;
  double k4 = 0.0;
  double k5 = 0.0;
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
    double v3 = 0.0;
    double v4 = 0.0;
    double v5 = 0.0;
    if (valid) {
      const double* a = av + (u64)(mpos & 0x7fffffffu) * 36;
      bool tr = (mpos >> 31) != 0u;
      double x0 = x[(u64)col * 6 + 0];
      double x1 = x[(u64)col * 6 + 1];
      double x2 = x[(u64)col * 6 + 2];
      double x3 = x[(u64)col * 6 + 3];
      double x4 = x[(u64)col * 6 + 4];
      double x5 = x[(u64)col * 6 + 5];
      double e0 = a[0];
      double e1 = a[1];
      double e2 = a[2];
      double e3 = a[3];
      double e4 = a[4];
      double e5 = a[5];
      double e6 = a[6];
      double e7 = a[7];
      double e8 = a[8];
      double e9 = a[9];
      double e10 = a[10];
      double e11 = a[11];
      double e12 = a[12];
      double e13 = a[13];
      double e14 = a[14];
      double e15 = a[15];
      double e16 = a[16];
      double e17 = a[17];
      double e18 = a[18];
      double e19 = a[19];
      double e20 = a[20];
      double e21 = a[21];
      double e22 = a[22];
      double e23 = a[23];
      double e24 = a[24];
      double e25 = a[25];
      double e26 = a[26];
      double e27 = a[27];
      double e28 = a[28];
      double e29 = a[29];
      double e30 = a[30];
      double e31 = a[31];
      double e32 = a[32];
      double e33 = a[33];
      double e34 = a[34];
      double e35 = a[35];
      v0 = e0 * x0 + (tr ? e6 : e1) * x1 + (tr ? e12 : e2) * x2 + (tr ? e18 : e3) * x3 + (tr ? e24 : e4) * x4 + (tr ? e30 : e5) * x5;
      v1 = (tr ? e1 : e6) * x0 + e7 * x1 + (tr ? e13 : e8) * x2 + (tr ? e19 : e9) * x3 + (tr ? e25 : e10) * x4 + (tr ? e31 : e11) * x5;
      v2 = (tr ? e2 : e12) * x0 + (tr ? e8 : e13) * x1 + e14 * x2 + (tr ? e20 : e15) * x3 + (tr ? e26 : e16) * x4 + (tr ? e32 : e17) * x5;
      v3 = (tr ? e3 : e18) * x0 + (tr ? e9 : e19) * x1 + (tr ? e15 : e20) * x2 + e21 * x3 + (tr ? e27 : e22) * x4 + (tr ? e33 : e23) * x5;
      v4 = (tr ? e4 : e24) * x0 + (tr ? e10 : e25) * x1 + (tr ? e16 : e26) * x2 + (tr ? e22 : e27) * x3 + e28 * x4 + (tr ? e34 : e29) * x5;
      v5 = (tr ? e5 : e30) * x0 + (tr ? e11 : e31) * x1 + (tr ? e17 : e32) * x2 + (tr ? e23 : e33) * x3 + (tr ? e29 : e34) * x4 + e35 * x5;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      double o2 = __shfl_up_sync(0xffffffffu, v2, d);
      double o3 = __shfl_up_sync(0xffffffffu, v3, d);
      double o4 = __shfl_up_sync(0xffffffffu, v4, d);
      double o5 = __shfl_up_sync(0xffffffffu, v5, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
        v2 = o2 + v2;
        v3 = o3 + v3;
        v4 = o4 + v4;
        v5 = o5 + v5;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
      v2 = k2 + v2;
      v3 = k3 + v3;
      v4 = k4 + v4;
      v5 = k5 + v5;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    k2 = __shfl_sync(0xffffffffu, v2, cnt - 1);
    k3 = __shfl_sync(0xffffffffu, v3, cnt - 1);
    k4 = __shfl_sync(0xffffffffu, v4, cnt - 1);
    k5 = __shfl_sync(0xffffffffu, v5, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 6;
      if (row != head_row && row != tail_row) {
        yr[0] = v0;
        yr[1] = v1;
        yr[2] = v2;
        yr[3] = v3;
        yr[4] = v4;
        yr[5] = v5;
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 6;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 6;
        mine[0] = v0;
        mine[1] = v1;
        mine[2] = v2;
        mine[3] = v3;
        mine[4] = v4;
        mine[5] = v5;
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
          double t3 = is_tail ? v3 : __ldcg(other + 3);
          double h3 = is_tail ? __ldcg(other + 3) : v3;
          double t4 = is_tail ? v4 : __ldcg(other + 4);
          double h4 = is_tail ? __ldcg(other + 4) : v4;
          double t5 = is_tail ? v5 : __ldcg(other + 5);
          double h5 = is_tail ? __ldcg(other + 5) : v5;
          yr[0] = t0 + h0;
          yr[1] = t1 + h1;
          yr[2] = t2 + h2;
          yr[3] = t3 + h3;
          yr[4] = t4 + h4;
          yr[5] = t5 + h5;
        }
      }
    }
    __syncwarp();
  }
}

// merge-path block SpMV y = b - A x, 6x6 blocks (each block read at pos[k], transposed where bit 31 is set: a symmetric operator's upper triangle only), 4 warps per block, the next 32 blocks loaded while the current ones are multiplied, blocks gathered from global memory; rows crossing a warp range meet in carry[boundary] (tail + head, stored by the second warp to take the boundary's ticket)
extern "C" __global__ void ptap_residual_mirror_6x6(const double* __restrict__ av, const unsigned int* __restrict__ pos, const unsigned int* __restrict__ ci, const unsigned int* __restrict__ brow, const double* __restrict__ x, const double* __restrict__ bv, double* __restrict__ y, double* __restrict__ carry, unsigned int* __restrict__ ticket, unsigned int nblocks, unsigned int per_warp) {
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
  double k3 = 0.0;
  double k4 = 0.0;
  double k5 = 0.0;
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
    double v3 = 0.0;
    double v4 = 0.0;
    double v5 = 0.0;
    if (valid) {
      const double* a = av + (u64)(mpos & 0x7fffffffu) * 36;
      bool tr = (mpos >> 31) != 0u;
      double x0 = x[(u64)col * 6 + 0];
      double x1 = x[(u64)col * 6 + 1];
      double x2 = x[(u64)col * 6 + 2];
      double x3 = x[(u64)col * 6 + 3];
      double x4 = x[(u64)col * 6 + 4];
      double x5 = x[(u64)col * 6 + 5];
      double e0 = a[0];
      double e1 = a[1];
      double e2 = a[2];
      double e3 = a[3];
      double e4 = a[4];
      double e5 = a[5];
      double e6 = a[6];
      double e7 = a[7];
      double e8 = a[8];
      double e9 = a[9];
      double e10 = a[10];
      double e11 = a[11];
      double e12 = a[12];
      double e13 = a[13];
      double e14 = a[14];
      double e15 = a[15];
      double e16 = a[16];
      double e17 = a[17];
      double e18 = a[18];
      double e19 = a[19];
      double e20 = a[20];
      double e21 = a[21];
      double e22 = a[22];
      double e23 = a[23];
      double e24 = a[24];
      double e25 = a[25];
      double e26 = a[26];
      double e27 = a[27];
      double e28 = a[28];
      double e29 = a[29];
      double e30 = a[30];
      double e31 = a[31];
      double e32 = a[32];
      double e33 = a[33];
      double e34 = a[34];
      double e35 = a[35];
      v0 = e0 * x0 + (tr ? e6 : e1) * x1 + (tr ? e12 : e2) * x2 + (tr ? e18 : e3) * x3 + (tr ? e24 : e4) * x4 + (tr ? e30 : e5) * x5;
      v1 = (tr ? e1 : e6) * x0 + e7 * x1 + (tr ? e13 : e8) * x2 + (tr ? e19 : e9) * x3 + (tr ? e25 : e10) * x4 + (tr ? e31 : e11) * x5;
      v2 = (tr ? e2 : e12) * x0 + (tr ? e8 : e13) * x1 + e14 * x2 + (tr ? e20 : e15) * x3 + (tr ? e26 : e16) * x4 + (tr ? e32 : e17) * x5;
      v3 = (tr ? e3 : e18) * x0 + (tr ? e9 : e19) * x1 + (tr ? e15 : e20) * x2 + e21 * x3 + (tr ? e27 : e22) * x4 + (tr ? e33 : e23) * x5;
      v4 = (tr ? e4 : e24) * x0 + (tr ? e10 : e25) * x1 + (tr ? e16 : e26) * x2 + (tr ? e22 : e27) * x3 + e28 * x4 + (tr ? e34 : e29) * x5;
      v5 = (tr ? e5 : e30) * x0 + (tr ? e11 : e31) * x1 + (tr ? e17 : e32) * x2 + (tr ? e23 : e33) * x3 + (tr ? e29 : e34) * x4 + e35 * x5;
    }
    __syncwarp();
    #pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
      u32 orow = __shfl_up_sync(0xffffffffu, row, d);
      double o0 = __shfl_up_sync(0xffffffffu, v0, d);
      double o1 = __shfl_up_sync(0xffffffffu, v1, d);
      double o2 = __shfl_up_sync(0xffffffffu, v2, d);
      double o3 = __shfl_up_sync(0xffffffffu, v3, d);
      double o4 = __shfl_up_sync(0xffffffffu, v4, d);
      double o5 = __shfl_up_sync(0xffffffffu, v5, d);
      if (lane >= d && orow == row) {
        v0 = o0 + v0;
        v1 = o1 + v1;
        v2 = o2 + v2;
        v3 = o3 + v3;
        v4 = o4 + v4;
        v5 = o5 + v5;
      }
    }
    u32 next = __shfl_down_sync(0xffffffffu, row, 1);
    bool last = valid && (lane == cnt - 1 || next != row);
    if (last && row == carry_row) {
      v0 = k0 + v0;
      v1 = k1 + v1;
      v2 = k2 + v2;
      v3 = k3 + v3;
      v4 = k4 + v4;
      v5 = k5 + v5;
    }
    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);
    u32 next_first = __shfl_sync(0xffffffffu, prow, 0);
    bool cont = nbase < b1 && next_first == tail_c;
    carry_row = cont ? tail_c : 0xffffffffu;
    k0 = __shfl_sync(0xffffffffu, v0, cnt - 1);
    k1 = __shfl_sync(0xffffffffu, v1, cnt - 1);
    k2 = __shfl_sync(0xffffffffu, v2, cnt - 1);
    k3 = __shfl_sync(0xffffffffu, v3, cnt - 1);
    k4 = __shfl_sync(0xffffffffu, v4, cnt - 1);
    k5 = __shfl_sync(0xffffffffu, v5, cnt - 1);
    if (last && !(cont && lane == cnt - 1)) {
      double* yr = y + (u64)row * 6;
      const double* br_ = bv + (u64)row * 6;
      if (row != head_row && row != tail_row) {
        yr[0] = 1.0 * br_[0] - 1.0 * (v0);
        yr[1] = 1.0 * br_[1] - 1.0 * (v1);
        yr[2] = 1.0 * br_[2] - 1.0 * (v2);
        yr[3] = 1.0 * br_[3] - 1.0 * (v3);
        yr[4] = 1.0 * br_[4] - 1.0 * (v4);
        yr[5] = 1.0 * br_[5] - 1.0 * (v5);
      } else {
        bool is_tail = row == tail_row;
        u64 bw = is_tail ? w + 1 : w;
        double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * 6;
        double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * 6;
        mine[0] = v0;
        mine[1] = v1;
        mine[2] = v2;
        mine[3] = v3;
        mine[4] = v4;
        mine[5] = v5;
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
          double t3 = is_tail ? v3 : __ldcg(other + 3);
          double h3 = is_tail ? __ldcg(other + 3) : v3;
          double t4 = is_tail ? v4 : __ldcg(other + 4);
          double h4 = is_tail ? __ldcg(other + 4) : v4;
          double t5 = is_tail ? v5 : __ldcg(other + 5);
          double h5 = is_tail ? __ldcg(other + 5) : v5;
          yr[0] = 1.0 * br_[0] - 1.0 * (t0 + h0);
          yr[1] = 1.0 * br_[1] - 1.0 * (t1 + h1);
          yr[2] = 1.0 * br_[2] - 1.0 * (t2 + h2);
          yr[3] = 1.0 * br_[3] - 1.0 * (t3 + h3);
          yr[4] = 1.0 * br_[4] - 1.0 * (t4 + h4);
          yr[5] = 1.0 * br_[5] - 1.0 * (t5 + h5);
        }
      }
    }
    __syncwarp();
  }
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

// inverse of every 6x6 diagonal block (Gauss-Jordan, partial pivoting, as invert_in_place); a singular or missing block records its row in status[0]
extern "C" __global__ void ptap_jacobi_invert_6(const double* __restrict__ av, const unsigned int* __restrict__ diag_pos, double* __restrict__ dinv, unsigned int* __restrict__ status, unsigned int nrows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nrows) return;
  u32 k = diag_pos[i];
  if (k == 0xffffffffu) { atomicMax(status, 0xffffffffu - i); return; }
  double a[36];
  double scale = 0.0;
  for (int q = 0; q < 36; ++q) { a[q] = av[(u64)k * 36 + q]; scale = fmax(scale, fabs(a[q])); }
  if (!isfinite(scale) || scale == 0.0) { atomicMax(status, 0xffffffffu - i); return; }
  int perm[6];
  for (int q = 0; q < 6; ++q) perm[q] = q;
  for (int col = 0; col < 6; ++col) {
    int piv = col; double best = fabs(a[col * 6 + col]);
    for (int r = col + 1; r < 6; ++r) if (fabs(a[r * 6 + col]) > best) { best = fabs(a[r * 6 + col]); piv = r; }
    if (best <= 1e-14 * scale) { atomicMax(status, 0xffffffffu - i); return; }
    if (piv != col) {
      for (int j = 0; j < 6; ++j) { double t = a[piv * 6 + j]; a[piv * 6 + j] = a[col * 6 + j]; a[col * 6 + j] = t; }
      int t = perm[piv]; perm[piv] = perm[col]; perm[col] = t;
    }
    double inv = 1.0 / a[col * 6 + col];
    a[col * 6 + col] = 1.0;
    for (int j = 0; j < 6; ++j) a[col * 6 + j] *= inv;
    for (int r = 0; r < 6; ++r) {
      if (r != col) {
        double f = a[r * 6 + col];
        if (f != 0.0) {
          a[r * 6 + col] = 0.0;
          for (int j = 0; j < 6; ++j) a[r * 6 + j] -= f * a[col * 6 + j];
        }
      }
    }
  }
  int cols[6];
  for (int q = 0; q < 6; ++q) cols[perm[q]] = q;
  for (int r = 0; r < 6; ++r)
    for (int j = 0; j < 6; ++j) dinv[(u64)i * 36 + r * 6 + j] = a[r * 6 + cols[j]];
}

// x += alpha D^-1 r + beta t (6x6 blocks; t unread when beta = 0), one thread per scalar
extern "C" __global__ void ptap_jacobi_update_6(const double* __restrict__ dinv, double alpha, const double* __restrict__ r, double beta, const double* __restrict__ t, double* __restrict__ x, unsigned int nrows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= (u64)nrows * 6) return;
  u64 i = s / 6; u32 q = (u32)(s % 6);
  const double* d = dinv + i * 36 + q * 6;
  const double* ri = r + i * 6;
  double y = 0.0;
  y = y + d[0] * ri[0];
  y = y + d[1] * ri[1];
  y = y + d[2] * ri[2];
  y = y + d[3] * ri[3];
  y = y + d[4] * ri[4];
  y = y + d[5] * ri[5];
  double v = alpha * y + (beta != 0.0 ? beta * t[s] : 0.0);
  x[s] = x[s] + v;
}

// scatter 6x6 block-CSR values into a zeroed row-major n x n matrix
extern "C" __global__ void ptap_densify_6(const double* __restrict__ av, const unsigned int* __restrict__ brow, const unsigned int* __restrict__ ci, double* __restrict__ dense, unsigned int nblocks, unsigned int n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (u64)nblocks * 36) return;
  u32 k = (u32)(t / 36), e = (u32)(t % 36);
  u64 i = (u64)brow[k] * 6 + e / 6;
  u64 j = (u64)ci[k] * 6 + e % 6;
  dense[i * n + j] = av[t];
}

// x += coef[alpha_at] D^-1 r + coef[beta_at] t (6x6 blocks; beta_at = 0xffffffff: no t term), one thread per scalar
extern "C" __global__ void ptap_jacobi_update_at_6(const double* __restrict__ dinv, const double* __restrict__ coef, unsigned int alpha_at, unsigned int beta_at, const double* __restrict__ r, const double* __restrict__ t, double* __restrict__ x, unsigned int nrows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= (u64)nrows * 6) return;
  double alpha = coef[alpha_at], beta = beta_at == 0xffffffffu ? 0.0 : coef[beta_at];
  u64 i = s / 6; u32 q = (u32)(s % 6);
  const double* d = dinv + i * 36 + q * 6;
  const double* ri = r + i * 6;
  double y = 0.0;
  y = y + d[0] * ri[0];
  y = y + d[1] * ri[1];
  y = y + d[2] * ri[2];
  y = y + d[3] * ri[3];
  y = y + d[4] * ri[4];
  y = y + d[5] * ri[5];
  double v = alpha * y + (beta != 0.0 ? beta * t[s] : 0.0);
  x[s] = x[s] + v;
}

// t = coef[alpha_at] D^-1 r; x = t (zero != 0) or x += t (6x6 blocks), one thread per scalar
extern "C" __global__ void ptap_jacobi_step_6(const double* __restrict__ dinv, const double* __restrict__ coef, unsigned int alpha_at, const double* __restrict__ r, double* __restrict__ t, double* __restrict__ x, unsigned int zero, unsigned int nrows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= (u64)nrows * 6) return;
  double alpha = coef[alpha_at];
  u64 i = s / 6; u32 q = (u32)(s % 6);
  const double* d = dinv + i * 36 + q * 6;
  const double* ri = r + i * 6;
  double y = 0.0;
  y = y + d[0] * ri[0];
  y = y + d[1] * ri[1];
  y = y + d[2] * ri[2];
  y = y + d[3] * ri[3];
  y = y + d[4] * ri[4];
  y = y + d[5] * ri[5];
  double v = 0.0 + (alpha * y + 0.0);
  t[s] = v;
  x[s] = (zero != 0u ? 0.0 : x[s]) + v;
}

// c = s[num_at] / s[den_at]; r = (-c) ap + r; z = D^-1 r; per-block partial sums of r . z (6x6 blocks, one thread per block row, 256 threads, grid-stride, fixed tree)
extern "C" __global__ void ptap_lanczos_step_6(const double* __restrict__ s, unsigned int num_at, unsigned int den_at, const double* __restrict__ dinv, const double* __restrict__ ap, double* __restrict__ r, double* __restrict__ z, double* __restrict__ part, unsigned long long nrows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ double sh[256];
  double c = s[num_at] / s[den_at];
  double acc = 0.0;
  u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < nrows; i += stride) {
    double* ri = r + i * 6;
    const double* ai = ap + i * 6;
    const double* d = dinv + i * 36;
    double r0 = -c * ai[0] + 1.0 * ri[0];
    ri[0] = r0;
    double r1 = -c * ai[1] + 1.0 * ri[1];
    ri[1] = r1;
    double r2 = -c * ai[2] + 1.0 * ri[2];
    ri[2] = r2;
    double r3 = -c * ai[3] + 1.0 * ri[3];
    ri[3] = r3;
    double r4 = -c * ai[4] + 1.0 * ri[4];
    ri[4] = r4;
    double r5 = -c * ai[5] + 1.0 * ri[5];
    ri[5] = r5;
    {
      double y = 0.0;
      y = y + d[0] * r0;
      y = y + d[1] * r1;
      y = y + d[2] * r2;
      y = y + d[3] * r3;
      y = y + d[4] * r4;
      y = y + d[5] * r5;
      double v = 0.0 + (1.0 * y + 0.0);
      z[i * 6 + 0] = v;
      acc += r0 * v;
    }
    {
      double y = 0.0;
      y = y + d[6] * r0;
      y = y + d[7] * r1;
      y = y + d[8] * r2;
      y = y + d[9] * r3;
      y = y + d[10] * r4;
      y = y + d[11] * r5;
      double v = 0.0 + (1.0 * y + 0.0);
      z[i * 6 + 1] = v;
      acc += r1 * v;
    }
    {
      double y = 0.0;
      y = y + d[12] * r0;
      y = y + d[13] * r1;
      y = y + d[14] * r2;
      y = y + d[15] * r3;
      y = y + d[16] * r4;
      y = y + d[17] * r5;
      double v = 0.0 + (1.0 * y + 0.0);
      z[i * 6 + 2] = v;
      acc += r2 * v;
    }
    {
      double y = 0.0;
      y = y + d[18] * r0;
      y = y + d[19] * r1;
      y = y + d[20] * r2;
      y = y + d[21] * r3;
      y = y + d[22] * r4;
      y = y + d[23] * r5;
      double v = 0.0 + (1.0 * y + 0.0);
      z[i * 6 + 3] = v;
      acc += r3 * v;
    }
    {
      double y = 0.0;
      y = y + d[24] * r0;
      y = y + d[25] * r1;
      y = y + d[26] * r2;
      y = y + d[27] * r3;
      y = y + d[28] * r4;
      y = y + d[29] * r5;
      double v = 0.0 + (1.0 * y + 0.0);
      z[i * 6 + 4] = v;
      acc += r4 * v;
    }
    {
      double y = 0.0;
      y = y + d[30] * r0;
      y = y + d[31] * r1;
      y = y + d[32] * r2;
      y = y + d[33] * r3;
      y = y + d[34] * r4;
      y = y + d[35] * r5;
      double v = 0.0 + (1.0 * y + 0.0);
      z[i * 6 + 5] = v;
      acc += r5 * v;
    }
  }
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (u32 h = 128; h > 0; h >>= 1) { if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h]; __syncthreads(); }
  if (threadIdx.x == 0) part[blockIdx.x] = sh[0];
}

