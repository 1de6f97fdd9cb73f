typedef unsigned int u32;
typedef unsigned long long u64;
// prototype: lane-local cp.async ring (each lane copies only its own A and B fragment elements), depth D chunks of 4 entries
template <int D>
__device__ __forceinline__ void body(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ uptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits, unsigned int chunk, unsigned int inter) {
  extern __shared__ double2 hl_smem[];
  u32 lane = threadIdx.x & 31;
  u32 r = lane >> 2, t = lane & 3;
  const bool av0 = (r & 3) < 3 && t < 3, bv0 = r < 6 && t < 3;
  const double* xl0 = xv + (av0 ? (r & 3) * 3 + t : 0);
  const double* yl0 = yv + (bv0 ? t * 6 + r : (r < 6 ? r : 5));
  const double ym0 = t < 3 ? 1.0 : 0.0;
  const uint2* ep = (const uint2*)ent;
  const u32 nb = blockDim.x >> 5, lw = threadIdx.x >> 5, g = blockIdx.x * nb + lw;
  double2* ring = hl_smem + (u64)lw * D * 4 * 32 * 3 / 2;  // per stage: 4 entries x 32 lanes x (a, b) + 4 x 32 u32
  const u32 step = inter ? nb : 1, span = chunk * step, off = inter ? lw : 0;
  const u64 jump = (u64)(inter ? gridDim.x : gridDim.x * nb) * span;
  const u64 start = (u64)(inter ? blockIdx.x : g) * span;
  // producer state
  u64 pb0 = start; bool pv = pb0 < nunits;
  u32 pb1 = 0, pw = 0, pq = 0, pq1 = 0, ps = 0;
  #define ADV while (pv) { pw += step; while (pw >= pb1) { pb0 += jump; if (pb0 >= nunits) { pv = false; break; } pb1 = (u32)(pb0 + span < nunits ? pb0 + span : nunits); pw = (u32)pb0 + off; } if (!pv) break; pq = uptr[pw]; pq1 = uptr[pw + 1]; if (pq < pq1) break; }
  if (pv) { pb1 = (u32)(pb0 + span < nunits ? pb0 + span : nunits); pw = (u32)pb0 + off - step; }
  ADV
  #define PRODUCE { \
    double2* sb = ring + ps * 192; u32* sx = (u32*)(sb + 128); \
    u32 pn = 0; \
    if (pv) { pn = pq1 - pq < 4 ? pq1 - pq : 4; \
      uint2 e[4]; \
      _Pragma("unroll") for (int c = 0; c < 4; ++c) e[c] = c < pn ? __ldg(ep + (2 * pq + (r >> 2)) + 2 * c) : make_uint2(0xffffffffu, 0); \
      _Pragma("unroll") for (int c = 0; c < 4; ++c) if (c < pn) { \
        sx[c * 32 + lane] = e[c].x; \
        u32 da = (u32)__cvta_generic_to_shared(&sb[c * 32 + lane].x); \
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" :: "r"(da + 8), "l"(yl0 + (u64)e[c].y * 18) : "memory"); \
        if (av0 && e[c].x != 0xffffffffu) asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" :: "r"(da), "l"(xl0 + (u64)(e[c].x & 0x7fffffffu) * 9) : "memory"); \
      } } \
    asm volatile("cp.async.commit_group;" ::: "memory"); \
    if (pv) { pq += pn; if (pq >= pq1) { ADV } } \
    ps = ps + 1 == D ? 0 : ps + 1; }
  #pragma unroll
  for (int i = 0; i + 1 < D; ++i) PRODUCE
  u32 cs = 0;
  for (u64 b0 = start; b0 < nunits; b0 += jump) {
  const u32 b1 = (u32)(b0 + span < nunits ? b0 + span : nunits);
  for (u32 w = (u32)b0 + off; w < b1; w += step) {
  double d0 = 0.0, d1 = 0.0;
  u32 q = uptr[w], q1 = uptr[w + 1];
  for (; q < q1; q += 4) {
    const u32 cnt = q1 - q < 4 ? q1 - q : 4;
    PRODUCE
    asm volatile("cp.async.wait_group %0;" :: "n"(D - 1) : "memory");
    const double2* cb = ring + cs * 192; const u32* cx = (const u32*)(cb + 128);
    #pragma unroll
    for (int c = 0; c < 4; ++c) if (c < cnt) {
      u32 ex = cx[c * 32 + lane];
      double2 v = cb[c * 32 + lane];
      double a = av0 && ex != 0xffffffffu ? v.x : 0.0;
      a *= (int)ex < 0 ? 0.5 : 1.0;
      double b = v.y * ym0;
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d0), "+d"(d1) : "d"(a), "d"(b));
    }
    cs = cs + 1 == D ? 0 : cs + 1;
  }
  u32 c0 = 2 * t;
  u32 s = uslot[2 * w + (r >> 2)];
  double* ob = cv + (u64)s * 18;
  if (s != 0xffffffffu && (r & 3) < 3 && c0 < 6) *(double2*)(ob + (r & 3) * 6 + c0) = make_double2(d0, d1);
  }
  }
  asm volatile("cp.async.wait_all;" ::: "memory");
}
extern "C" __global__ void hl2(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ uptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits, unsigned int chunk, unsigned int inter) { body<2>(xv, yv, uptr, uslot, ent, cv, nunits, chunk, inter); }
extern "C" __global__ void hl3(const double* __restrict__ xv, const double* __restrict__ yv, const unsigned int* __restrict__ uptr, const unsigned int* __restrict__ uslot, const unsigned int* __restrict__ ent, double* __restrict__ cv, unsigned int nunits, unsigned int chunk, unsigned int inter) { body<3>(xv, yv, uptr, uslot, ent, cv, nunits, chunk, inter); }
