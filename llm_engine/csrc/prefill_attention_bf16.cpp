// Causal prefill attention at bf16 with AVX-512 BF16's vdpbf16ps. Wrapper and rationale:
// llm_engine/layers/attention/prefill_attention_bf16_cpu.py.

// ATen's and the Python binding's own headers rather than <torch/extension.h>, which parses the
// whole C++ frontend: a kernel then compiles in ~8 s instead of ~20 at a machine's first start.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/utils/pybind.h>
#include <ATen/Parallel.h>
#include <immintrin.h>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

// Built at the avx512_vnni_bf16 ISA level only (llm_engine/layers/attention/prefill_attention_bf16_cpu.py);
// the engine loads it where the running CPU has AVX-512 BF16.
#if !(defined(__AVX512F__) && defined(__AVX512BF16__))
#error "prefill_attention_bf16.cpp needs AVX-512 F and BF16: build it at the avx512_vnni_bf16 level"
#endif

// e^x for x <= 0 (a score minus its row's max) as 2^n * e^r, |r| <= ln2 / 2, e^r by its
// degree-6 Taylor polynomial: relative error ~1e-7, far below the bf16 rounding of the
// probabilities that follows. x is clamped at -100 (e^-100 is nothing beside the max's 1).
static inline __m512 exp_le0(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-100.f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // ln 2 in two parts, so that n * ln2_hi is exact
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187e-06f), r);
  __m512 p = _mm512_set1_ps(1.f / 720);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
  return _mm512_scalef_ps(p, n);
}

static inline __m512bh pair(const uint16_t* p) {  // two bf16, broadcast to every lane
  int32_t v;
  std::memcpy(&v, p, 4);
  return (__m512bh)_mm512_set1_epi32(v);
}

// Scores of R query rows against keys [0, 32 * chunks): s[r * ld + j].
// kp: [D / 2][Tp][2] bf16 (key j's dims 2p, 2p + 1 side by side).
template <int R>
static void score_tile(const uint16_t* q, int64_t D, const uint16_t* kp, int64_t Tp,
                       int64_t chunks, float* s, int64_t ld) {
  for (int64_t c = 0; c < chunks; ++c) {
    __m512 acc[R][2];
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    const uint16_t* kc = kp + c * 64;
    for (int64_t p = 0; p < D / 2; ++p) {
      const __m512bh b0 = (__m512bh)_mm512_loadu_si512(kc + p * Tp * 2);
      const __m512bh b1 = (__m512bh)_mm512_loadu_si512(kc + p * Tp * 2 + 32);
      for (int r = 0; r < R; ++r) {
        const __m512bh a = pair(q + r * D + 2 * p);
        acc[r][0] = _mm512_dpbf16_ps(acc[r][0], a, b0);
        acc[r][1] = _mm512_dpbf16_ps(acc[r][1], a, b1);
      }
    }
    for (int r = 0; r < R; ++r) {
      _mm512_storeu_ps(s + r * ld + c * 32, acc[r][0]);
      _mm512_storeu_ps(s + r * ld + c * 32 + 16, acc[r][1]);
    }
  }
}

// One row's softmax over its first n scores (its causal keys), as bf16 probabilities that
// are 0 from n to width; *inv = 1 / their fp32 sum (applied to the row's output).
static void softmax_row(const float* s, int64_t n, int64_t width, uint16_t* p, float* inv) {
  __m512 mx = _mm512_set1_ps(-INFINITY);
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 m = n - j >= 16 ? 0xFFFF : (__mmask16)((1u << (n - j)) - 1);
    mx = _mm512_max_ps(mx, _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), m, s + j));
  }
  const __m512 rowmax = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
  __m512 sum = _mm512_setzero_ps();
  for (int64_t j = 0; j < width; j += 32) {
    __m512 e[2];
    for (int h = 0; h < 2; ++h) {
      const int64_t jj = j + 16 * h;
      const __mmask16 m =
          n - jj >= 16 ? 0xFFFF : n <= jj ? 0 : (__mmask16)((1u << (n - jj)) - 1);
      const __m512 x = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, s + jj), rowmax);
      e[h] = _mm512_maskz_mov_ps(m, exp_le0(x));
      sum = _mm512_add_ps(sum, e[h]);
    }
    _mm512_storeu_si512(p + j, (__m512i)_mm512_cvtne2ps_pbh(e[1], e[0]));
  }
  *inv = 1.f / _mm512_reduce_add_ps(sum);
}

// Output rows o + ldo[r] (D = 16 * NV fp32 each) = the probabilities of R rows x the values
// of keys [0, 2 * pairs), times inv[r]. vp: [Tp / 2][D][2] bf16 (key pairs side by side).
template <int R, int NV>
static void value_tile(const uint16_t* p, int64_t ldp, const uint16_t* vp, int64_t pairs,
                       const float* inv, float* o, const int64_t* ldo) {
  __m512 acc[R][NV];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < NV; ++c) acc[r][c] = _mm512_setzero_ps();
  for (int64_t k = 0; k < pairs; ++k) {
    __m512bh b[NV];
    for (int c = 0; c < NV; ++c) b[c] = (__m512bh)_mm512_loadu_si512(vp + (k * NV + c) * 32);
    for (int r = 0; r < R; ++r) {
      const __m512bh a = pair(p + r * ldp + 2 * k);
      for (int c = 0; c < NV; ++c) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], a, b[c]);
    }
  }
  for (int r = 0; r < R; ++r) {
    const __m512 scale = _mm512_set1_ps(inv[r]);
    for (int c = 0; c < NV; ++c)
      _mm512_storeu_ps(o + ldo[r] + 16 * c, _mm512_mul_ps(acc[r][c], scale));
  }
}

// Query rows a tile holds: value_tile keeps R x NV accumulators and NV value vectors in
// the 32 registers (6 x 4 + 4 at head_dim 64, 3 x 8 + 8 at 128).
static constexpr int tile_rows(int64_t nv) { return nv <= 4 ? 6 : 3; }
constexpr int MAX_TILE_ROWS = 6;

// R (at most tile_rows) query rows of one K/V head, rows r seeing keys [0, n[r]), n
// ascending: scores into s, probabilities into p (R x 32 * chunks, in L1), then the output
// rows.
template <int NV>
static void attend_rows(int R, const uint16_t* q, int64_t D, const uint16_t* kp,
                        const uint16_t* vp, int64_t Tp, int64_t chunks, float* s, uint16_t* p,
                        int64_t ld, const int64_t* n, float* o, const int64_t* ldo) {
  switch (R) {
#define SCORE(r) case r: score_tile<r>(q, D, kp, Tp, chunks, s, ld); break;
    SCORE(1) SCORE(2) SCORE(3) SCORE(4) SCORE(5) SCORE(6)
#undef SCORE
  }
  float inv[MAX_TILE_ROWS];
  int64_t nmax = 0;
  for (int r = 0; r < R; ++r) {
    softmax_row(s + r * ld, n[r], chunks * 32, p + r * ld, inv + r);
    nmax = std::max(nmax, n[r]);
  }
  const int64_t pairs = (nmax + 1) / 2;
  switch (R) {
#define VALUE(r) \
  case r: if constexpr (r <= tile_rows(NV)) value_tile<r, NV>(p, ld, vp, pairs, inv, o, ldo); break;
    VALUE(1) VALUE(2) VALUE(3) VALUE(4) VALUE(5) VALUE(6)
#undef VALUE
  }
}

// q: [T, H, D] (scaled), at positions past .. past + T - 1; k, v: [past + T, KVH, D]; all
// fp32. Returns [T, H, D] fp32.
at::Tensor causal_prefill_bf16(at::Tensor q, at::Tensor k, at::Tensor v,
                               int64_t block, int64_t past) {
  const int64_t T = q.size(0), H = q.size(1), D = q.size(2), KVH = k.size(1), G = H / KVH;
  TORCH_CHECK(D == 64 || D == 128, "bf16 prefill attention: head_dim 64 or 128");
  const int64_t L = past + T, Tp = (L + 31) / 32 * 32;
  auto bf = q.options().dtype(at::kBFloat16);
  // [KVH, T * G, D]: row (i, g) is token i's query head g of this K/V head.
  auto qb = q.view({T, KVH, G, D}).transpose(0, 1).reshape({KVH, T * G, D})
                .to(at::kBFloat16).contiguous();
  // Keys and values padded with zeros to Tp tokens, rounded to bf16 to the nearest.
  auto kp = at::zeros({KVH, D, Tp}, bf);
  kp.narrow(2, 0, L).copy_(k.permute({1, 2, 0}));
  kp = kp.view({KVH, D / 2, 2, Tp}).transpose(2, 3).contiguous();  // [KVH, D/2, Tp, 2]
  auto vp = at::zeros({KVH, Tp, D}, bf);
  vp.narrow(1, 0, L).copy_(v.transpose(0, 1));
  vp = vp.view({KVH, Tp / 2, 2, D}).transpose(2, 3).contiguous();  // [KVH, Tp/2, D, 2]
  auto out = at::empty({T, H, D}, q.options());
  const uint16_t* qp = reinterpret_cast<const uint16_t*>(qb.data_ptr<at::BFloat16>());
  const uint16_t* kpp = reinterpret_cast<const uint16_t*>(kp.data_ptr<at::BFloat16>());
  const uint16_t* vpp = reinterpret_cast<const uint16_t*>(vp.data_ptr<at::BFloat16>());
  float* op = out.data_ptr<float>();
  const int64_t nb = (T + block - 1) / block, pairs = (nb + 1) / 2;
  const int maxr = tile_rows(D / 16);
  at::parallel_for(0, KVH * pairs, 1, [&](int64_t first, int64_t last) {
    std::vector<float> s(maxr * Tp);  // one tile's scores and probabilities
    std::vector<uint16_t> p(maxr * Tp);
    auto attend = [&](int64_t kh, int64_t b) {
      const int64_t start = b * block, end = std::min(T, start + block);
      for (int64_t r0 = start * G; r0 < end * G; r0 += maxr) {
        const int R = static_cast<int>(std::min<int64_t>(maxr, end * G - r0));
        int64_t n[MAX_TILE_ROWS], ldo[MAX_TILE_ROWS];
        for (int r = 0; r < R; ++r) {
          const int64_t i = (r0 + r) / G, g = (r0 + r) % G;
          n[r] = past + i + 1;
          ldo[r] = (i * H + kh * G + g) * D;
        }
        const int64_t chunks = (n[R - 1] + 31) / 32;
        const uint16_t* qr = qp + (kh * T * G + r0) * D;
        const uint16_t* kh_k = kpp + kh * (D / 2) * Tp * 2;
        const uint16_t* kh_v = vpp + kh * Tp * D;
        if (D == 64)
          attend_rows<4>(R, qr, D, kh_k, kh_v, Tp, chunks, s.data(), p.data(), Tp, n, op, ldo);
        else
          attend_rows<8>(R, qr, D, kh_k, kh_v, Tp, chunks, s.data(), p.data(), Tp, n, op, ldo);
      }
    };
    for (int64_t task = first; task < last; ++task) {
      const int64_t kh = task / pairs, pr = task % pairs;
      attend(kh, pr);
      if (nb - 1 - pr != pr) attend(kh, nb - 1 - pr);
    }
  });
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("causal_prefill_bf16", torch::wrap_pybind_function(causal_prefill_bf16));
}
