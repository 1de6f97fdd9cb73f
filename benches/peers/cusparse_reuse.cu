// cuSPARSE peer for ptap's numeric Galerkin refresh, with symbolic reuse.
//
// What a user of cuSPARSE would write for a recurring P^T A P whose sparsity
// is fixed: R = P^T formed once, then W = A P and C = R W through the
// SpGEMMreuse API, whose work estimation, nnz and copy phases (the symbolic
// part) run once; every refresh calls only cusparseSpGEMMreuse_compute twice.
// Only those two compute calls are timed (CUDA events, best and median of
// --repeat), on the scalar expansion of the same matrices ptap multiplies in
// blocks.
//
// Input: the directory written by `ptap bench --device cuda --k K --dump DIR`
// (per level A{l} and P{l}: .indptr int64, .indices int32, .data float64,
// little-endian, and a .json with rows/cols/nnz).
//
// Validity: C's nonzero count is checked against the dumped A{l+1} (same
// pattern) and its Frobenius norm printed next to that of A{l+1}'s values.
// When the unsplit product cannot be set up (cuSPARSE's 32-bit indices or its
// workspace), both products are split into row blocks, W_i = A[rows_i] P and
// C_i = R[rows_i] W, doubling the split until every block succeeds; the split
// is reported. A failure is reported for that level, never a number.
//
// Build and run (GPU host): nvcc -O2 -std=c++17 -o /tmp/cusparse_reuse \
//   benches/peers/cusparse_reuse.cu -lcusparse && /tmp/cusparse_reuse DIR [--repeat 10] [--json OUT]
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Failure {
  std::string what;
};

void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Failure{std::string(what) + ": " + cudaGetErrorString(e)};
}
void sparse_ok(cusparseStatus_t s, const char* what) {
  if (s != CUSPARSE_STATUS_SUCCESS) throw Failure{std::string(what) + ": " + cusparseGetErrorString(s)};
}

// A device buffer that frees itself.
struct Buf {
  void* p = nullptr;
  size_t bytes = 0;
  Buf() = default;
  explicit Buf(size_t n) : bytes(n) {
    if (n) cuda_ok(cudaMalloc(&p, n), "cudaMalloc");
  }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  Buf(Buf&& o) noexcept : p(o.p), bytes(o.bytes) { o.p = nullptr; o.bytes = 0; }
  Buf& operator=(Buf&& o) noexcept {
    std::swap(p, o.p);
    std::swap(bytes, o.bytes);
    return *this;
  }
  ~Buf() {
    if (p) cudaFree(p);
  }
};

// A scalar CSR matrix resident on the device with its cuSPARSE descriptor.
struct Csr {
  int64_t rows = 0, cols = 0, nnz = 0;
  Buf indptr, indices, values;
  cusparseSpMatDescr_t d = nullptr;
  Csr() = default;
  Csr(const Csr&) = delete;
  Csr(Csr&& o) noexcept
      : rows(o.rows), cols(o.cols), nnz(o.nnz), indptr(std::move(o.indptr)), indices(std::move(o.indices)),
        values(std::move(o.values)), d(o.d) {
    o.d = nullptr;
  }
  Csr& operator=(Csr&& o) noexcept {
    std::swap(rows, o.rows);
    std::swap(cols, o.cols);
    std::swap(nnz, o.nnz);
    std::swap(indptr, o.indptr);
    std::swap(indices, o.indices);
    std::swap(values, o.values);
    std::swap(d, o.d);
    return *this;
  }
  ~Csr() {
    if (d) cusparseDestroySpMat(d);
  }
  void describe() {
    sparse_ok(cusparseCreateCsr(&d, rows, cols, nnz, indptr.p, indices.p, values.p, CUSPARSE_INDEX_32I,
                                CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
              "cusparseCreateCsr");
  }
};

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Failure{"cannot open " + path};
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The integer after `"key":` in a small JSON object (the dump's shape files).
int64_t json_int(const std::string& text, const char* key) {
  std::string k = std::string("\"") + key + "\"";
  size_t at = text.find(k);
  if (at == std::string::npos) throw Failure{std::string("no ") + key + " in shape file"};
  at = text.find(':', at);
  return std::strtoll(text.c_str() + at + 1, nullptr, 10);
}

struct Host {
  int64_t rows, cols, nnz;
  std::vector<int32_t> indptr, indices;
  std::vector<double> values;
};

Host read_host(const std::string& dir, const std::string& name) {
  std::string meta = slurp(dir + "/" + name + ".json");
  Host h{json_int(meta, "rows"), json_int(meta, "cols"), json_int(meta, "nnz"), {}, {}, {}};
  std::string ip = slurp(dir + "/" + name + ".indptr");
  std::string ix = slurp(dir + "/" + name + ".indices");
  std::string vx = slurp(dir + "/" + name + ".data");
  if (ip.size() != size_t(h.rows + 1) * 8 || ix.size() != size_t(h.nnz) * 4 || vx.size() != size_t(h.nnz) * 8)
    throw Failure{name + ": file sizes do not match its shape file"};
  std::vector<int64_t> ip64(h.rows + 1);
  std::memcpy(ip64.data(), ip.data(), ip.size());
  if (ip64.back() > INT32_MAX) throw Failure{name + ": more than 2^31 nonzeros, beyond cuSPARSE's 32-bit indices"};
  h.indptr.assign(ip64.begin(), ip64.end());
  h.indices.resize(h.nnz);
  std::memcpy(h.indices.data(), ix.data(), ix.size());
  h.values.resize(h.nnz);
  std::memcpy(h.values.data(), vx.data(), vx.size());
  return h;
}

// Rows [r0, r1) of `h` on the device (indptr rebased to 0).
Csr upload_rows(const Host& h, int64_t r0, int64_t r1) {
  Csr m;
  m.rows = r1 - r0;
  m.cols = h.cols;
  int64_t base = h.indptr[r0];
  m.nnz = h.indptr[r1] - base;
  std::vector<int32_t> ip(m.rows + 1);
  for (int64_t i = 0; i <= m.rows; ++i) ip[i] = int32_t(h.indptr[r0 + i] - base);
  m.indptr = Buf(ip.size() * 4);
  m.indices = Buf(std::max<int64_t>(m.nnz, 1) * 4);
  m.values = Buf(std::max<int64_t>(m.nnz, 1) * 8);
  cuda_ok(cudaMemcpy(m.indptr.p, ip.data(), ip.size() * 4, cudaMemcpyHostToDevice), "upload indptr");
  cuda_ok(cudaMemcpy(m.indices.p, h.indices.data() + base, m.nnz * 4, cudaMemcpyHostToDevice), "upload indices");
  cuda_ok(cudaMemcpy(m.values.p, h.values.data() + base, m.nnz * 8, cudaMemcpyHostToDevice), "upload values");
  m.describe();
  return m;
}

Host download(const Csr& m) {
  Host h{m.rows, m.cols, m.nnz, std::vector<int32_t>(m.rows + 1), std::vector<int32_t>(m.nnz),
         std::vector<double>(m.nnz)};
  cuda_ok(cudaMemcpy(h.indptr.data(), m.indptr.p, (m.rows + 1) * 4, cudaMemcpyDeviceToHost), "download");
  cuda_ok(cudaMemcpy(h.indices.data(), m.indices.p, m.nnz * 4, cudaMemcpyDeviceToHost), "download");
  cuda_ok(cudaMemcpy(h.values.data(), m.values.p, m.nnz * 8, cudaMemcpyDeviceToHost), "download");
  return h;
}

// P^T of a device CSR (csr2csc), as a host matrix (it is split by rows later).
Host transpose(cusparseHandle_t handle, const Host& p) {
  Csr dp = upload_rows(p, 0, p.rows);
  Csr t;
  t.rows = p.cols;
  t.cols = p.rows;
  t.nnz = p.nnz;
  t.indptr = Buf((t.rows + 1) * 4);
  t.indices = Buf(std::max<int64_t>(t.nnz, 1) * 4);
  t.values = Buf(std::max<int64_t>(t.nnz, 1) * 8);
  size_t bytes = 0;
  sparse_ok(cusparseCsr2cscEx2_bufferSize(handle, p.rows, p.cols, p.nnz, dp.values.p, (int*)dp.indptr.p,
                                          (int*)dp.indices.p, t.values.p, (int*)t.indptr.p, (int*)t.indices.p,
                                          CUDA_R_64F, CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO,
                                          CUSPARSE_CSR2CSC_ALG1, &bytes),
            "csr2csc buffer");
  Buf work(std::max<size_t>(bytes, 1));
  sparse_ok(cusparseCsr2cscEx2(handle, p.rows, p.cols, p.nnz, dp.values.p, (int*)dp.indptr.p, (int*)dp.indices.p,
                               t.values.p, (int*)t.indptr.p, (int*)t.indices.p, CUDA_R_64F,
                               CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, work.p),
            "csr2csc");
  cuda_ok(cudaDeviceSynchronize(), "csr2csc");
  return download(t);
}

// One product X Y with its symbolic phases done once; compute() is the refresh.
struct Reuse {
  cusparseHandle_t handle;
  const Csr* x;
  const Csr* y;
  Csr c;
  cusparseSpGEMMDescr_t desc = nullptr;
  Buf b1, b2, b3, b4, b5;
  Reuse(cusparseHandle_t h, const Csr& xx, const Csr& yy) : handle(h), x(&xx), y(&yy) {
    const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const auto alg = CUSPARSE_SPGEMM_DEFAULT;
    c.rows = x->rows;
    c.cols = y->cols;
    c.indptr = Buf((c.rows + 1) * 4);
    sparse_ok(cusparseCreateCsr(&c.d, c.rows, c.cols, 0, c.indptr.p, nullptr, nullptr, CUSPARSE_INDEX_32I,
                                CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
              "create C");
    sparse_ok(cusparseSpGEMM_createDescr(&desc), "SpGEMM descriptor");
    size_t s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0;
    sparse_ok(cusparseSpGEMMreuse_workEstimation(handle, op, op, x->d, y->d, c.d, alg, desc, &s1, nullptr),
              "reuse_workEstimation (size)");
    b1 = Buf(std::max<size_t>(s1, 1));
    sparse_ok(cusparseSpGEMMreuse_workEstimation(handle, op, op, x->d, y->d, c.d, alg, desc, &s1, b1.p),
              "reuse_workEstimation");
    sparse_ok(cusparseSpGEMMreuse_nnz(handle, op, op, x->d, y->d, c.d, alg, desc, &s2, nullptr, &s3, nullptr, &s4,
                                      nullptr),
              "reuse_nnz (size)");
    b2 = Buf(std::max<size_t>(s2, 1));
    b3 = Buf(std::max<size_t>(s3, 1));
    b4 = Buf(std::max<size_t>(s4, 1));
    sparse_ok(cusparseSpGEMMreuse_nnz(handle, op, op, x->d, y->d, c.d, alg, desc, &s2, b2.p, &s3, b3.p, &s4, b4.p),
              "reuse_nnz");
    b1 = Buf();
    b2 = Buf();  // the documentation allows freeing buffers 1 and 2 after nnz
    int64_t r = 0, cc = 0, nz = 0;
    sparse_ok(cusparseSpMatGetSize(c.d, &r, &cc, &nz), "C size");
    c.nnz = nz;
    c.indices = Buf(std::max<int64_t>(nz, 1) * 4);
    c.values = Buf(std::max<int64_t>(nz, 1) * 8);
    sparse_ok(cusparseCsrSetPointers(c.d, c.indptr.p, c.indices.p, c.values.p), "C pointers");
    sparse_ok(cusparseSpGEMMreuse_copy(handle, op, op, x->d, y->d, c.d, alg, desc, &s5, nullptr),
              "reuse_copy (size)");
    b5 = Buf(std::max<size_t>(s5, 1));
    sparse_ok(cusparseSpGEMMreuse_copy(handle, op, op, x->d, y->d, c.d, alg, desc, &s5, b5.p), "reuse_copy");
    b3 = Buf();
    compute();
    cuda_ok(cudaDeviceSynchronize(), "first compute");
  }
  Reuse(const Reuse&) = delete;
  ~Reuse() {
    if (desc) cusparseSpGEMM_destroyDescr(desc);
  }
  void compute() {
    const double one = 1.0, zero = 0.0;
    sparse_ok(cusparseSpGEMMreuse_compute(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                          CUSPARSE_OPERATION_NON_TRANSPOSE, &one, x->d, y->d, &zero, c.d,
                                          CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT, desc),
              "reuse_compute");
  }
};

std::vector<std::pair<int64_t, int64_t>> row_blocks(int64_t n, int split) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int i = 0; i < split; ++i) {
    int64_t a = n * i / split, b = n * (i + 1) / split;
    if (b > a) out.push_back({a, b});
  }
  return out;
}

// Stack row blocks of W (each a device CSR over all columns) into one device CSR.
Csr stack(const std::vector<Host>& parts, int64_t cols) {
  Host all{0, cols, 0, {0}, {}, {}};
  for (const Host& p : parts) {
    for (int64_t i = 0; i < p.rows; ++i) all.indptr.push_back(int32_t(all.nnz + p.indptr[i + 1]));
    all.indices.insert(all.indices.end(), p.indices.begin(), p.indices.end());
    all.values.insert(all.values.end(), p.values.begin(), p.values.end());
    all.rows += p.rows;
    all.nnz += p.nnz;
  }
  return upload_rows(all, 0, all.rows);
}

struct LevelResult {
  int level;
  int64_t a_rows, a_nnz, p_cols, c_nnz, c_nnz_expected;
  int split;
  double best_s, median_s, c_frobenius, want_frobenius;
};

double frobenius(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

LevelResult run_level(cusparseHandle_t handle, const std::string& dir, int l, int repeat, int split) {
  Host a = read_host(dir, "A" + std::to_string(l));
  Host p = read_host(dir, "P" + std::to_string(l));
  Host r = transpose(handle, p);
  int64_t want = -1;
  double want_frob = NAN;
  {
    std::ifstream probe(dir + "/A" + std::to_string(l + 1) + ".json");
    if (probe) {
      Host next = read_host(dir, "A" + std::to_string(l + 1));
      want = next.nnz;
      want_frob = frobenius(next.values);
    }
  }
  Csr dp = upload_rows(p, 0, p.rows);
  // Stage 1: W = A P, by row blocks of A.
  std::vector<Csr> a_parts;
  for (auto [i, j] : row_blocks(a.rows, split)) a_parts.push_back(upload_rows(a, i, j));
  std::vector<std::unique_ptr<Reuse>> w_parts;
  for (auto& ap : a_parts) w_parts.push_back(std::make_unique<Reuse>(handle, ap, dp));
  // With a split, stage 2 reads W's blocks stacked into one matrix.
  Csr w_stacked;
  if (split > 1) {
    std::vector<Host> w_host;
    for (auto& w : w_parts) w_host.push_back(download(w->c));
    w_stacked = stack(w_host, p.cols);
  }
  const Csr& w_all = split > 1 ? w_stacked : w_parts[0]->c;
  // Stage 2: C = R W, by row blocks of R.
  std::vector<Csr> r_parts;
  for (auto [i, j] : row_blocks(r.rows, split)) r_parts.push_back(upload_rows(r, i, j));
  std::vector<std::unique_ptr<Reuse>> c_parts;
  for (auto& rp : r_parts) c_parts.push_back(std::make_unique<Reuse>(handle, rp, w_all));
  int64_t c_nnz = 0;
  std::vector<double> c_values;
  for (auto& c : c_parts) {
    c_nnz += c->c.nnz;
    Host h = download(c->c);
    c_values.insert(c_values.end(), h.values.begin(), h.values.end());
  }
  if (want >= 0 && c_nnz != want)
    throw Failure{"C has " + std::to_string(c_nnz) + " nonzeros, want " + std::to_string(want)};
  cudaEvent_t t0, t1;
  cuda_ok(cudaEventCreate(&t0), "event");
  cuda_ok(cudaEventCreate(&t1), "event");
  std::vector<double> times;
  for (int rep = 0; rep < repeat; ++rep) {
    cuda_ok(cudaEventRecord(t0), "record");
    for (auto& w : w_parts) w->compute();
    // With a split, stage 2 reads the stacked W: a refresh must refill it, so
    // the copy of each W block into it is part of the timed refresh.
    if (split > 1) {
      int64_t at = 0;
      for (auto& w : w_parts) {
        cuda_ok(cudaMemcpyAsync((char*)w_stacked.values.p + at * 8, w->c.values.p, w->c.nnz * 8,
                                cudaMemcpyDeviceToDevice),
                "stack W");
        at += w->c.nnz;
      }
    }
    for (auto& c : c_parts) c->compute();
    cuda_ok(cudaEventRecord(t1), "record");
    cuda_ok(cudaEventSynchronize(t1), "sync");
    float ms = 0;
    cuda_ok(cudaEventElapsedTime(&ms, t0, t1), "elapsed");
    times.push_back(ms * 1e-3);
  }
  cudaEventDestroy(t0);
  cudaEventDestroy(t1);
  std::sort(times.begin(), times.end());
  return LevelResult{l,          a.rows,   a.nnz, p.cols, c_nnz, want, split, times.front(), times[times.size() / 2],
                     frobenius(c_values), want_frob};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [--repeat N] [--json OUT]\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1], json;
  int repeat = 10;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--repeat")) repeat = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--json")) json = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "no CUDA device: this peer needs a GPU\n");
    return 1;
  }
  int version = 0;
  cusparseHandle_t handle;
  if (cusparseCreate(&handle) != CUSPARSE_STATUS_SUCCESS) {
    std::fprintf(stderr, "cusparseCreate failed\n");
    return 1;
  }
  cusparseGetVersion(handle, &version);
  std::printf("cuSPARSE %d SpGEMMreuse on %s\n", version, prop.name);
  std::vector<LevelResult> rows;
  std::vector<std::string> failures;
  for (int l = 0;; ++l) {
    std::ifstream probe(dir + "/P" + std::to_string(l) + ".json");
    if (!probe) break;
    bool done = false;
    for (int split = 1; split <= 256 && !done; split *= 2) {
      try {
        LevelResult r = run_level(handle, dir, l, repeat, split);
        std::printf(
            "l%d: A %lld rows %lld nnz, P %lld cols, C %lld nnz (want %lld), split %d; refresh (2x reuse_compute) "
            "best %.3f ms median %.3f ms; |C|_F %.12e vs A%d %.12e\n",
            l, (long long)r.a_rows, (long long)r.a_nnz, (long long)r.p_cols, (long long)r.c_nnz,
            (long long)r.c_nnz_expected, r.split, r.best_s * 1e3, r.median_s * 1e3, r.c_frobenius, l + 1,
            r.want_frobenius);
        rows.push_back(r);
        done = true;
      } catch (const Failure& f) {
        std::printf("l%d: split %d: %s\n", l, split, f.what.c_str());
        cudaGetLastError();
        cudaDeviceSynchronize();
      }
    }
    if (!done) failures.push_back("l" + std::to_string(l));
  }
  double total = 0;
  for (auto& r : rows) total += r.best_s;
  std::printf("all levels: %.3f ms (best per level)%s\n", total * 1e3, failures.empty() ? "" : "; some levels failed");
  if (!json.empty()) {
    std::ofstream o(json);
    o << "{\"device\":\"" << prop.name << "\",\"cusparse\":" << version << ",\"api\":\"SpGEMMreuse\",\"levels\":[";
    for (size_t i = 0; i < rows.size(); ++i) {
      auto& r = rows[i];
      char buf[512];
      std::snprintf(buf, sizeof buf,
                    "%s{\"level\":%d,\"a_rows\":%lld,\"a_nnz\":%lld,\"p_cols\":%lld,\"c_nnz\":%lld,"
                    "\"c_nnz_expected\":%lld,\"row_block_split\":%d,\"numeric_s\":%.9g,\"numeric_median_s\":%.9g,"
                    "\"c_frobenius\":%.17g}",
                    i ? "," : "", r.level, (long long)r.a_rows, (long long)r.a_nnz, (long long)r.p_cols,
                    (long long)r.c_nnz, (long long)r.c_nnz_expected, r.split, r.best_s, r.median_s, r.c_frobenius);
      o << buf;
    }
    o << "],\"failed_levels\":" << failures.size() << ",\"total_numeric_s\":" << total << "}\n";
  }
  cusparseDestroy(handle);
  return failures.empty() ? 0 : 1;
}
