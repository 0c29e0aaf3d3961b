// The int8 linear with AVX-512 VNNI, bit for bit fbgemm's result. Wrapper and rationale:
// llm_engine/layers/quantization/int8_vnni_cpu.py. Compiled without -ffast-math.

// ATen's and the Python binding's own headers rather than <torch/extension.h>, which parses the
// whole C++ frontend: a kernel then compiles in ~8 s instead of ~20 at a machine's first start.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/utils/pybind.h>
#include <ATen/Parallel.h>
#include <immintrin.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

// Built at the avx512_vnni ISA level only (llm_engine/layers/quantization/int8_vnni_cpu.py); the engine
// loads it where the running CPU has VNNI, so nothing here is chosen at compile time.
#if !(defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__))
#error "int8_vnni.cpp needs AVX-512 F, BW and VNNI: build it at the avx512_vnni level"
#endif

// Up to 8 rows against NB output channels at a time from [n0, n1): each 64-byte piece of a
// weight row is loaded once and dotted with every row's piece; NB rows in flight keep
// NB * R independent sums in registers, so the adds do not wait on each other.
template <int R, int NB>
static inline void dot_block(const uint8_t* qx, int64_t KP, const int8_t* w, int64_t K,
                             int64_t n, int32_t out_sums[NB][R]) {
  const int64_t full = K / 64;
  const __mmask64 tail = K % 64 ? (~0ULL >> (64 - K % 64)) : 0;
  __m512i acc[NB][R];
  for (int j = 0; j < NB; ++j)
    for (int r = 0; r < R; ++r) acc[j][r] = _mm512_setzero_si512();
  for (int64_t c = 0; c <= full; ++c) {
    const bool last = c == full;
    if (last && !tail) break;
    const __mmask64 m = last ? tail : ~0ULL;
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512i xv = _mm512_loadu_si512(qx + r * KP + c * 64);
#pragma GCC unroll 4
      for (int j = 0; j < NB; ++j)
        acc[j][r] = _mm512_dpbusd_epi32(
            acc[j][r], xv, _mm512_maskz_loadu_epi8(m, w + (n + j) * K + c * 64));
    }
  }
  for (int j = 0; j < NB; ++j)
    for (int r = 0; r < R; ++r) out_sums[j][r] = _mm512_reduce_add_epi32(acc[j][r]);
}

template <int R>
static void dot_rows(const uint8_t* qx, int64_t KP, const int8_t* w, int64_t K,
                     const int32_t* col_sums, const float* mult, const float* row_max,
                     const float* bias, int32_t zp, int64_t n0, int64_t n1, float* out,
                     int64_t N) {
  constexpr int NB = R == 1 ? 4 : R == 2 ? 2 : 1;
  auto finish = [&](int64_t n, const int32_t* sums) {
    for (int r = 0; r < R; ++r) {
      // fbgemm's requantization: the zero point's share out in int32, then one multiply.
      float y = static_cast<float>(sums[r] - zp * col_sums[n]) * mult[n];
      y = y * row_max[r];
      if (bias) y = y + bias[n];
      out[r * N + n] = y;
    }
  };
  int64_t n = n0;
  for (; n + NB <= n1; n += NB) {
    int32_t sums[NB][R];
    dot_block<R, NB>(qx, KP, w, K, n, sums);
    for (int j = 0; j < NB; ++j) finish(n + j, sums[j]);
  }
  for (; n < n1; ++n) {
    int32_t sums[1][R];
    dot_block<R, 1>(qx, KP, w, K, n, sums);
    finish(n, sums[0]);
  }
}

// One row normalized to max |x| = 1 and quantized as fbgemm does it, one fp32 rounding a
// step: x * inv_smooth, / max |.|, then fused (x * (1 / input_scale) + zero point), rounded
// to nearest even, clamped to [0, 255]. Returns the row's max |x * inv_smooth|.
static float quantize_row(const float* x, const float* inv, int64_t K, float inv_scale,
                          float zpf, float* xs, uint8_t* q) {
  __m512 mx = _mm512_setzero_ps();
  for (int64_t k = 0; k < K; k += 16) {
    const __mmask16 m = K - k >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (K - k)) - 1);
    __m512 v = _mm512_maskz_loadu_ps(m, x + k);
    if (inv) v = _mm512_mul_ps(v, _mm512_maskz_loadu_ps(m, inv + k));
    _mm512_mask_storeu_ps(xs + k, m, v);
    mx = _mm512_max_ps(mx, _mm512_abs_ps(v));
  }
  const float row_max = std::max(_mm512_reduce_max_ps(mx), 1e-12f);
  const __m512 rm = _mm512_set1_ps(row_max), is = _mm512_set1_ps(inv_scale),
               z = _mm512_set1_ps(zpf), lo = _mm512_setzero_ps(), hi = _mm512_set1_ps(255.f);
  for (int64_t k = 0; k < K; k += 16) {
    const __mmask16 m = K - k >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (K - k)) - 1);
    __m512 v = _mm512_fmadd_ps(_mm512_div_ps(_mm512_maskz_loadu_ps(m, xs + k), rm), is, z);
    v = _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    _mm512_mask_cvtusepi32_storeu_epi8(q + k, m, _mm512_cvtps_epu32(v));
  }
  return row_max;
}

// x [M, K] fp32 -> [M, N] fp32, as fbgemm's linear over rows normalized to max |x| = 1.
at::Tensor int8_gemv(at::Tensor x, at::Tensor w, at::Tensor col_sums,
                     at::Tensor mult, at::Tensor inv_smooth, at::Tensor bias,
                     double input_scale, int64_t zero_point) {
  TORCH_CHECK(x.scalar_type() == at::kFloat && x.dim() == 2, "x: 2-d fp32");
  x = x.contiguous();
  const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
  TORCH_CHECK(w.scalar_type() == at::kChar && w.size(1) == K && w.is_contiguous(), "w");
  auto out = at::empty({M, N}, x.options());
  const int64_t KP = (K + 63) / 64 * 64;  // zero padding: the masked tail adds nothing
  std::vector<uint8_t> qx(M * KP, 0);
  std::vector<float> row_max(M), xs(K);
  const float* xp = x.data_ptr<float>();
  const float* inv = inv_smooth.numel() ? inv_smooth.data_ptr<float>() : nullptr;
  const float inv_scale = 1.f / static_cast<float>(input_scale);
  for (int64_t m = 0; m < M; ++m)
    row_max[m] = quantize_row(xp + m * K, inv, K, inv_scale, static_cast<float>(zero_point),
                              xs.data(), qx.data() + m * KP);
  const int8_t* wp = w.data_ptr<int8_t>();
  const int32_t* cs = col_sums.data_ptr<int32_t>();
  const float* mu = mult.data_ptr<float>();
  const float* bp = bias.numel() ? bias.data_ptr<float>() : nullptr;
  float* op = out.data_ptr<float>();
  const int32_t zp = static_cast<int32_t>(zero_point);
  for (int64_t m0 = 0; m0 < M; m0 += 8) {
    const int R = static_cast<int>(std::min<int64_t>(8, M - m0));
    const uint8_t* q0 = qx.data() + m0 * KP;
    const float* rm = row_max.data() + m0;
    float* o0 = op + m0 * N;
    at::parallel_for(0, N, 64, [&](int64_t n0, int64_t n1) {
      switch (R) {
#define ROWS(r) case r: dot_rows<r>(q0, KP, wp, K, cs, mu, rm, bp, zp, n0, n1, o0, N); break;
        ROWS(1) ROWS(2) ROWS(3) ROWS(4) ROWS(5) ROWS(6) ROWS(7) ROWS(8)
#undef ROWS
      }
    });
  }
  return out;
}

// x [M, K] fp32 -> (q [M, K] int8, row_max [M]): each row quantized as quantize_row does
// it, to fbgemm's uint8 with zero point 128, stored as q - 128.
std::vector<at::Tensor> int8_quantize(at::Tensor x, at::Tensor inv_smooth,
                                      double input_scale, int64_t zero_point) {
  TORCH_CHECK(zero_point == 128, "int8_quantize: 8-bit activations (zero point 128) only");
  TORCH_CHECK(x.scalar_type() == at::kFloat && x.dim() == 2, "x: 2-d fp32");
  x = x.contiguous();
  const int64_t M = x.size(0), K = x.size(1);
  auto q = at::empty({M, K}, x.options().dtype(at::kChar));
  auto row_max = at::empty({M}, x.options());
  const float* xp = x.data_ptr<float>();
  const float* inv = inv_smooth.numel() ? inv_smooth.data_ptr<float>() : nullptr;
  const float inv_scale = 1.f / static_cast<float>(input_scale);
  int8_t* qp = q.data_ptr<int8_t>();
  float* rp = row_max.data_ptr<float>();
  at::parallel_for(0, M, 16, [&](int64_t m0, int64_t m1) {
    std::vector<float> xs(K);
    std::vector<uint8_t> qu(K);
    for (int64_t m = m0; m < m1; ++m) {
      rp[m] = quantize_row(xp + m * K, inv, K, inv_scale, 128.f, xs.data(), qu.data());
      int8_t* dst = qp + m * K;
#pragma omp simd
      for (int64_t k = 0; k < K; ++k) dst[k] = static_cast<int8_t>(qu[k] - 128);
    }
  });
  return {q, row_max};
}

// acc [M, N] int32 -> fp32 acc * mult[n], then * row_max[m], then + bias[n] (none where
// bias is empty): int8_gemv's requantization, each step its own fp32 rounding.
at::Tensor int8_requantize(at::Tensor acc, at::Tensor mult, at::Tensor row_max,
                           at::Tensor bias) {
  TORCH_CHECK(acc.scalar_type() == at::kInt && acc.is_contiguous(), "acc: contiguous int32");
  const int64_t M = acc.size(0), N = acc.size(1);
  auto out = at::empty({M, N}, row_max.options());
  const int32_t* ap = acc.data_ptr<int32_t>();
  const float* mu = mult.data_ptr<float>();
  const float* rp = row_max.data_ptr<float>();
  const float* bp = bias.numel() ? bias.data_ptr<float>() : nullptr;
  float* op = out.data_ptr<float>();
  at::parallel_for(0, M, std::max<int64_t>(1, 16384 / N), [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      const int32_t* a = ap + m * N;
      float* o = op + m * N;
      const float r = rp[m];
      if (bp) {
#pragma omp simd
        for (int64_t n = 0; n < N; ++n) o[n] = static_cast<float>(a[n]) * mu[n] * r + bp[n];
      } else {
#pragma omp simd
        for (int64_t n = 0; n < N; ++n) o[n] = static_cast<float>(a[n]) * mu[n] * r;
      }
    }
  });
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("int8_gemv", torch::wrap_pybind_function(int8_gemv));
  m.def("int8_quantize", torch::wrap_pybind_function(int8_quantize));
  m.def("int8_requantize", torch::wrap_pybind_function(int8_requantize));
}
