// The fused fp32 elementwise passes of the CPU forward (rotary, RMSNorm, SwiGLU, the K/V writes, the
// int8 rows' scaling), bit for bit torch's. Wrapper and rationale: llm_engine/layers/cpu_ops.py.
// ISA levels: avx2, avx512 (llm_engine/utils/cpu_isa.py); compiled with -ffp-contract=off and
// without -ffast-math, so every rounding is torch's.

// ATen's and the Python binding's own headers rather than <torch/extension.h>, which parses the
// whole C++ frontend: a kernel then compiles in ~8 s instead of ~20 at a machine's first start.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/utils/pybind.h>
#include <ATen/Parallel.h>
#include <immintrin.h>
#include <sleef.h>
#include <algorithm>
#include <cmath>

// Rows per task: enough floats that a task outweighs its scheduling.
static int64_t grain(int64_t row_floats) { return std::max<int64_t>(1, 16384 / row_floats); }

// In place on x [T, heads, dim] (last dim contiguous), rotate-half RoPE at each row's
// position: for d < dim/2, (a, b) = (x[d], x[d + dim/2]) becomes
// (a * cos[d] + (-b) * sin[d], b * cos[d + dim/2] + a * sin[d + dim/2]).
static void rotate(at::Tensor x, const int64_t* pos, const float* cos, const float* sin) {
  const int64_t T = x.size(0), H = x.size(1), D = x.size(2), half = D / 2;
  const int64_t st = x.stride(0), sh = x.stride(1);
  float* base = x.data_ptr<float>();
  at::parallel_for(0, T, grain(H * D), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const float* c = cos + pos[t] * D;
      const float* s = sin + pos[t] * D;
      for (int64_t h = 0; h < H; ++h) {
        float* lo = base + t * st + h * sh;
        float* hi = lo + half;
#pragma omp simd
        for (int64_t d = 0; d < half; ++d) {
          const float a = lo[d], b = hi[d];
          lo[d] = a * c[d] + (-b) * s[d];
          hi[d] = b * c[half + d] + a * s[half + d];
        }
      }
    }
  });
}

void rotary_(at::Tensor positions, at::Tensor q, at::Tensor k, at::Tensor cos,
             at::Tensor sin) {
  TORCH_CHECK(q.stride(2) == 1 && k.stride(2) == 1 && cos.is_contiguous() && sin.is_contiguous(),
              "rotary_: the head dimension must be contiguous");
  auto pos = positions.to(at::kLong).contiguous();
  rotate(q, pos.data_ptr<int64_t>(), cos.data_ptr<float>(), sin.data_ptr<float>());
  rotate(k, pos.data_ptr<int64_t>(), cos.data_ptr<float>(), sin.data_ptr<float>());
}

// torch's sum of the squares of a contiguous fp32 row, in its order (SumKernel.cpp's
// vectorized_inner_sum over x * x): V-lane vectors summed as 4 interleaved columns
// (row_sum's ilp_factor) through a 4-level cascade (multi_row_sum), any vectors past a
// multiple of 4 added to the first column, the columns added in order; then the elements
// past the last whole vector from 0, and the lanes in order. Checked against torch at load.
template <int V>
static float sum_squares(const float* x, int64_t D) {
  constexpr int64_t levels = 4, cols = 4;
  const int64_t nvec = D / V, size = nvec / cols;
  int64_t log = 0;
  while ((int64_t{1} << log) < size) ++log;
  const int64_t power = std::max<int64_t>(4, log / levels), step = int64_t{1} << power;
  const int64_t mask = step - 1;
  float acc[levels][cols][V] = {};
  auto add_vec = [&](float* a, int64_t vec) {
    const float* p = x + vec * V;
#pragma omp simd
    for (int l = 0; l < V; ++l) a[l] += p[l] * p[l];
  };
  int64_t i = 0;
  for (; i + step <= size;) {
    for (int64_t j = 0; j < step; ++j, ++i)
      for (int64_t k = 0; k < cols; ++k) add_vec(acc[0][k], i * cols + k);
    for (int64_t j = 1; j < levels; ++j) {
      for (int64_t k = 0; k < cols; ++k)
        for (int l = 0; l < V; ++l) { acc[j][k][l] += acc[j - 1][k][l]; acc[j - 1][k][l] = 0.f; }
      if ((i & (mask << (j * power))) != 0) break;
    }
  }
  for (; i < size; ++i)
    for (int64_t k = 0; k < cols; ++k) add_vec(acc[0][k], i * cols + k);
  for (int64_t j = 1; j < levels; ++j)
    for (int64_t k = 0; k < cols; ++k)
      for (int l = 0; l < V; ++l) acc[0][k][l] += acc[j][k][l];
  for (int64_t v = size * cols; v < nvec; ++v) add_vec(acc[0][0], v);
  for (int64_t k = 1; k < cols; ++k)
    for (int l = 0; l < V; ++l) acc[0][0][l] += acc[0][k][l];
  float total = 0.f;
  for (int64_t d = nvec * V; d < D; ++d) total += x[d] * x[d];
  for (int l = 0; l < V; ++l) total += acc[0][0][l];
  return total;
}

// Llama's RMSNorm as layers/layernorm.py computes it: w * (x * (1 / sqrt(mean(x * x) + eps))),
// the mean a sum divided by D. With `residual` (not empty), x + residual first: written to
// residual, then normalized into out.
template <int V>
static void rms_norm_rows(const float* x, float* residual, const float* w, float eps,
                          float* out, int64_t M, int64_t D) {
  at::parallel_for(0, M, grain(D), [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      const float* row = x + m * D;
      if (residual) {
        float* r = residual + m * D;
#pragma omp simd
        for (int64_t d = 0; d < D; ++d) r[d] = row[d] + r[d];
        row = r;
      }
      const float inv = 1.f / std::sqrt(sum_squares<V>(row, D) / static_cast<float>(D) + eps);
      float* o = out + m * D;
#pragma omp simd
      for (int64_t d = 0; d < D; ++d) o[d] = w[d] * (row[d] * inv);
    }
  });
}

// x [M, D] -> the norm of x (residual empty), or, in place, residual += x and x = its norm.
at::Tensor rms_norm(at::Tensor x, at::Tensor residual, at::Tensor weight,
                    double eps, int64_t lanes) {
  const bool fused = residual.numel() > 0;
  TORCH_CHECK(x.is_contiguous() && (!fused || residual.is_contiguous()), "rms_norm: contiguous rows");
  const int64_t D = x.size(-1), M = x.numel() / D;
  auto out = fused ? x : at::empty_like(x);
  float* r = fused ? residual.data_ptr<float>() : nullptr;
  const float* w = weight.data_ptr<float>();
  if (lanes == 16)
    rms_norm_rows<16>(x.data_ptr<float>(), r, w, static_cast<float>(eps), out.data_ptr<float>(), M, D);
  else
    rms_norm_rows<8>(x.data_ptr<float>(), r, w, static_cast<float>(eps), out.data_ptr<float>(), M, D);
  return out;
}

// The new tokens' K/V into their cache slots (attention.py's layouts: keys [kvh, blocks,
// dim, block_size], values [kvh, blocks, block_size, dim]); k, v: [T, kvh, dim] fp32.
template <typename C>
static void write_kv(at::Tensor k_cache, at::Tensor v_cache, at::Tensor k,
                     at::Tensor v, const int64_t* blocks, const int64_t* offsets) {
  const int64_t T = k.size(0), KVH = k.size(1), D = k.size(2), BS = v_cache.size(2);
  C* kc = k_cache.data_ptr<C>();
  C* vc = v_cache.data_ptr<C>();
  const int64_t kc_h = k_cache.stride(0), kc_b = k_cache.stride(1);
  const int64_t vc_h = v_cache.stride(0), vc_b = v_cache.stride(1);
  const float* kp = k.data_ptr<float>();
  const float* vp = v.data_ptr<float>();
  const int64_t k_t = k.stride(0), k_h = k.stride(1), v_t = v.stride(0), v_h = v.stride(1);
  at::parallel_for(0, T, grain(2 * KVH * D), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t)
      for (int64_t h = 0; h < KVH; ++h) {
        C* kd = kc + h * kc_h + blocks[t] * kc_b + offsets[t];
        C* vd = vc + h * vc_h + blocks[t] * vc_b + offsets[t] * D;
        const float* ks = kp + t * k_t + h * k_h;
        const float* vs = vp + t * v_t + h * v_h;
        for (int64_t d = 0; d < D; ++d) {
          kd[d * BS] = static_cast<C>(ks[d]);
          vd[d] = static_cast<C>(vs[d]);
        }
      }
  });
}

void write_kv_(at::Tensor k_cache, at::Tensor v_cache, at::Tensor k, at::Tensor v,
               at::Tensor slot_blocks, at::Tensor slot_offsets) {
  TORCH_CHECK(k.stride(2) == 1 && v.stride(2) == 1 && k_cache.stride(3) == 1 &&
              v_cache.stride(3) == 1 && k_cache.stride(2) == k_cache.size(3) &&
              v_cache.stride(2) == v_cache.size(3), "write_kv_: blocks must be contiguous");
  auto blocks = slot_blocks.to(at::kLong).contiguous();
  auto offsets = slot_offsets.to(at::kLong).contiguous();
  if (k_cache.scalar_type() == at::kBFloat16)
    write_kv<c10::BFloat16>(k_cache, v_cache, k, v, blocks.data_ptr<int64_t>(), offsets.data_ptr<int64_t>());
  else
    write_kv<float>(k_cache, v_cache, k, v, blocks.data_ptr<int64_t>(), offsets.data_ptr<int64_t>());
}

// silu(x) = x / (1 + exp(-x)) on one vector of `lanes` floats, with the Sleef exp torch's
// silu kernel calls at that width.
template <int lanes>
static inline void silu_mul_vec(const float* g, const float* u, float* o) {
#if defined(__AVX512F__)
  if constexpr (lanes == 16) {
    const __m512 x = _mm512_loadu_ps(g);
    const __m512 e = Sleef_expf16_u10(_mm512_xor_ps(_mm512_set1_ps(-0.f), x));
    _mm512_storeu_ps(o, _mm512_mul_ps(_mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.f), e)),
                                      _mm512_loadu_ps(u)));
    return;
  }
#endif
#if defined(__AVX2__)
  if constexpr (lanes == 8) {
    const __m256 x = _mm256_loadu_ps(g);
    const __m256 e = Sleef_expf8_u10(_mm256_xor_ps(_mm256_set1_ps(-0.f), x));
    _mm256_storeu_ps(o, _mm256_mul_ps(_mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.f), e)),
                                      _mm256_loadu_ps(u)));
    return;
  }
#endif
  TORCH_CHECK(false, "silu_and_mul: this build has no ", lanes, "-lane vectors");
}

// x [T, 2D] (gate | up) -> silu(gate) * up [T, D], as F.silu(gate) * up computes it: silu's
// vector loop (two vectors a step) and its scalar tail (std::exp), each row on its own;
// layers/activation.py finds the width at which it equals torch, at first use.
template <int lanes>
static void silu_and_mul_rows(const float* xp, float* op, int64_t T, int64_t D) {
  at::parallel_for(0, T, grain(2 * D), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const float* gate = xp + t * 2 * D;
      const float* up = gate + D;
      float* o = op + t * D;
      int64_t d = 0;
      for (; d + 2 * lanes <= D; d += 2 * lanes) {
        silu_mul_vec<lanes>(gate + d, up + d, o + d);
        silu_mul_vec<lanes>(gate + d + lanes, up + d + lanes, o + d + lanes);
      }
      for (; d < D; ++d) o[d] = gate[d] / (1.f + std::exp(-gate[d])) * up[d];
    }
  });
}

at::Tensor silu_and_mul(at::Tensor x, int64_t lanes) {
  TORCH_CHECK(x.is_contiguous() && x.size(-1) % 2 == 0, "silu_and_mul: contiguous [T, 2D]");
  const int64_t D = x.size(-1) / 2, T = x.numel() / (2 * D);
  auto sizes = x.sizes().vec();
  sizes.back() = D;
  auto out = at::empty(sizes, x.options());
  if (lanes == 16)
    silu_and_mul_rows<16>(x.data_ptr<float>(), out.data_ptr<float>(), T, D);
  else
    silu_and_mul_rows<8>(x.data_ptr<float>(), out.data_ptr<float>(), T, D);
  return out;
}

// x [M, K] -> (x * inv_smooth / row_max, row_max [M, 1]) with row_max = max(max |x *
// inv_smooth|, 1e-12) (no smoothing where inv_smooth is empty).
std::vector<at::Tensor> int8_rows(at::Tensor x, at::Tensor inv_smooth) {
  x = x.contiguous();
  const int64_t M = x.size(0), K = x.size(1);
  auto out = at::empty_like(x);
  auto row_max = at::empty({M, 1}, x.options());
  const float* xp = x.data_ptr<float>();
  const float* inv = inv_smooth.numel() ? inv_smooth.data_ptr<float>() : nullptr;
  float* op = out.data_ptr<float>();
  float* mp = row_max.data_ptr<float>();
  at::parallel_for(0, M, grain(K), [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      const float* xr = xp + m * K;
      float* orow = op + m * K;
      float mx = 0.f;
      if (inv) {
#pragma omp simd reduction(max : mx)
        for (int64_t j = 0; j < K; ++j) {
          orow[j] = xr[j] * inv[j];
          mx = std::max(mx, std::fabs(orow[j]));
        }
      } else {
#pragma omp simd reduction(max : mx)
        for (int64_t j = 0; j < K; ++j) mx = std::max(mx, std::fabs(xr[j]));
      }
      mx = std::max(mx, 1e-12f);
      mp[m] = mx;
      const float* src = inv ? orow : xr;
#pragma omp simd
      for (int64_t j = 0; j < K; ++j) orow[j] = src[j] / mx;
    }
  });
  return {out, row_max};
}

// In place on y [M, N]: y * row_max, then + bias (none where bias is empty).
void rescale_rows_(at::Tensor y, at::Tensor row_max, at::Tensor bias) {
  TORCH_CHECK(y.is_contiguous(), "rescale_rows_: y must be contiguous");
  const int64_t M = y.size(0), N = y.size(1);
  float* yp = y.data_ptr<float>();
  const float* mp = row_max.data_ptr<float>();
  const float* bp = bias.numel() ? bias.data_ptr<float>() : nullptr;
  at::parallel_for(0, M, grain(N), [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      float* yr = yp + m * N;
      const float r = mp[m];
      if (bp) {
#pragma omp simd
        for (int64_t n = 0; n < N; ++n) yr[n] = yr[n] * r + bp[n];
      } else {
#pragma omp simd
        for (int64_t n = 0; n < N; ++n) yr[n] = yr[n] * r;
      }
    }
  });
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("rotary_", torch::wrap_pybind_function(rotary_));
  m.def("rms_norm", torch::wrap_pybind_function(rms_norm));
  m.def("silu_and_mul", torch::wrap_pybind_function(silu_and_mul));
  m.def("write_kv_", torch::wrap_pybind_function(write_kv_));
  m.def("int8_rows", torch::wrap_pybind_function(int8_rows));
  m.def("rescale_rows_", torch::wrap_pybind_function(rescale_rows_));
}
