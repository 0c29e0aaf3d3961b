// Decode attention that reads the paged K/V cache where it lies. Wrapper and rationale:
// llm_engine/layers/attention/paged_attention_cpu.py. ISA levels: generic, avx2, avx512.

// ATen's and the Python binding's own headers rather than <torch/extension.h>, which parses the
// whole C++ frontend: a kernel then compiles in ~8 s instead of ~20 at a machine's first start.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/utils/pybind.h>
#include <ATen/Parallel.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

// The cache holds fp32, or bf16 as its raw 16 bits: a bf16 value is the top half of the
// fp32 with the same sign, exponent and leading mantissa bits, so widening it is a shift
// that vectorizes on any x86 CPU.
static inline float to_float(float x) { return x; }
static inline float to_float(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Scores of one block's tokens for one query: keys are [D][BS_T]; a compile-time block
// size keeps the BS_T partial sums in registers across the D loop.
template <int BS_T, typename T>
static inline void block_scores(const float* qq, const T* kb, int64_t D, float* pp) {
  float s[BS_T] = {0.f};
  for (int64_t d = 0; d < D; ++d) {
    const float qd = qq[d];
    const T* row = kb + d * BS_T;
#pragma omp simd
    for (int t = 0; t < BS_T; ++t) s[t] += qd * to_float(row[t]);
  }
  for (int t = 0; t < BS_T; ++t) pp[t] = s[t];
}

template <typename T>
static inline void block_scores_any(const float* qq, const T* kb, int64_t D, int64_t BS,
                                    float* pp) {
  std::fill(pp, pp + BS, 0.f);
  for (int64_t d = 0; d < D; ++d) {
    const float qd = qq[d];
    const T* row = kb + d * BS;
#pragma omp simd
    for (int64_t t = 0; t < BS; ++t) pp[t] += qd * to_float(row[t]);
  }
}

// Scores in place -> softmax weights: exp(s - max) / sum, the division as a multiply by the
// reciprocal (weights[t] = e[t] * (1 / sum)).
static inline void softmax_row(float* sg, int64_t L) {
  float mx = -std::numeric_limits<float>::infinity();
  for (int64_t t = 0; t < L; ++t) mx = sg[t] > mx ? sg[t] : mx;
  float sum = 0.f;
  for (int64_t t = 0; t < L; ++t) { sg[t] = std::exp(sg[t] - mx); sum += sg[t]; }
  const float inv = 1.f / sum;
  for (int64_t t = 0; t < L; ++t) sg[t] = sg[t] * inv;
}

// The same scores for the G query heads of one K/V head at once: G independent chains of
// FMAs where one head alone waits on each FMA's latency, and the block's keys read once.
// Each head's sums run in the same order as block_scores', so the results are the same.
// `next`: the keys of the block after this one, fetched into cache meanwhile (blocks lie
// anywhere in the cache, beyond the hardware prefetcher's reach: the loads of each new
// block's first lines stalled the loop).
template <int BS_T, int G_T, typename T>
static inline void group_scores(const float* qq, const T* kb, const T* next, int64_t D,
                                float* pp) {
  float s[G_T][BS_T] = {};
  for (int64_t d = 0; d < D; ++d) {
    const T* row = kb + d * BS_T;
    __builtin_prefetch(next + d * BS_T);
    for (int g = 0; g < G_T; ++g) {
      const float qd = qq[g * D + d];
#pragma omp simd
      for (int t = 0; t < BS_T; ++t) s[g][t] += qd * to_float(row[t]);
    }
  }
  for (int g = 0; g < G_T; ++g)
    for (int t = 0; t < BS_T; ++t) pp[g * BS_T + t] = s[g][t];
}

// out[g] = sum over t of w[g][t] * v[t] for the G heads of one K/V head, walking the values
// block by block and reading each value row once for all G heads. Each head's sums run
// over t in the same order as one head alone would.
template <int G_T, int D_T, typename T>
static inline void group_values(const float* w, int64_t L, const T* vp, const int64_t* bt,
                                int64_t kh, int64_t NB, int64_t BS, float* o) {
  // Cache lines of one block's values, and how many to fetch ahead per token.
  constexpr int64_t LINE = 64 / sizeof(T);
  float acc[G_T][D_T] = {};
  for (int64_t b = 0; b * BS < L; ++b) {
    const T* vb = vp + (kh * NB + bt[b]) * BS * D_T;
    const T* next = (b + 1) * BS < L ? vp + (kh * NB + bt[b + 1]) * BS * D_T : vb;
    const int64_t n = std::min(BS, L - b * BS);
    for (int64_t i = 0; i < n; ++i) {
      const T* vv = vb + i * D_T;
      for (int64_t c = 0; c < D_T; c += LINE) __builtin_prefetch(next + i * D_T + c);
      const int64_t t = b * BS + i;
      for (int g = 0; g < G_T; ++g) {
        const float wg = w[g * L + t];
#pragma omp simd
        for (int d = 0; d < D_T; ++d) acc[g][d] += wg * to_float(vv[d]);
      }
    }
  }
  for (int g = 0; g < G_T; ++g)
    for (int d = 0; d < D_T; ++d) o[g * D_T + d] = acc[g][d];
}

// One (row, K/V head) task with the G heads together: the model's shapes, compiled.
template <int BS_T, int G_T, int D_T, typename T>
static void grouped_task(const float* qq, const T* kp, const T* vp, int64_t kh, int64_t NB,
                         const int64_t* bt, int64_t L, float sc, std::vector<float>& scores,
                         float* o) {
  scores.resize(G_T * L);  // every entry is written below
  float part[G_T * BS_T];
  for (int64_t b = 0; b * BS_T < L; ++b) {
    const T* kb = kp + (kh * NB + bt[b]) * D_T * BS_T;
    const T* next = (b + 1) * BS_T < L ? kp + (kh * NB + bt[b + 1]) * D_T * BS_T : kb;
    const int64_t n = std::min<int64_t>(BS_T, L - b * BS_T);
    group_scores<BS_T, G_T>(qq, kb, next, D_T, part);
    for (int g = 0; g < G_T; ++g)
      for (int64_t t = 0; t < n; ++t) scores[g * L + b * BS_T + t] = part[g * BS_T + t] * sc;
  }
  for (int g = 0; g < G_T; ++g) softmax_row(scores.data() + g * L, L);
  group_values<G_T, D_T>(scores.data(), L, vp, bt, kh, NB, BS_T, o);
}

// q: [R, H, D]; k_cache: [KVH, NB, D, BS]; v_cache: [KVH, NB, BS, D];
// tables: [R, MAXB] int64; lens: [R] int64.
template <typename T>
static void paged_decode_impl(const at::Tensor& q, const T* kp, const T* vp,
                              int64_t KVH, int64_t NB, int64_t BS, const at::Tensor& tables,
                              const at::Tensor& lens, float sc, bool grouped,
                              at::Tensor& out) {
  const int64_t R = q.size(0), H = q.size(1), D = q.size(2);
  const int64_t G = H / KVH, MAXB = tables.size(1);
  const float* qp = q.data_ptr<float>();
  const int64_t* tp = tables.data_ptr<int64_t>();
  const int64_t* lp = lens.data_ptr<int64_t>();
  float* op = out.data_ptr<float>();
  at::parallel_for(0, R * KVH, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scores;
    std::vector<float> part(BS);
    std::vector<float> acc(D);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t r = task / KVH, kh = task % KVH, L = lp[r];
      const int64_t* bt = tp + r * MAXB;
      const float* q0 = qp + (r * H + kh * G) * D;
      float* o0 = op + (r * H + kh * G) * D;
      if (grouped && D == 64 && (BS == 16 || BS == 32) && G >= 1 && G <= 4) {
#define GROUPED(bs, g) grouped_task<bs, g, 64>(q0, kp, vp, kh, NB, bt, L, sc, scores, o0)
        if (BS == 16) {
          if (G == 1) GROUPED(16, 1); else if (G == 2) GROUPED(16, 2);
          else if (G == 3) GROUPED(16, 3); else GROUPED(16, 4);
        } else {
          if (G == 1) GROUPED(32, 1); else if (G == 2) GROUPED(32, 2);
          else if (G == 3) GROUPED(32, 3); else GROUPED(32, 4);
        }
#undef GROUPED
        continue;
      }
      scores.assign(G * L, 0.f);
      // Keys are stored [D][BS] per block: one vector FMA per dimension scores every token
      // of the block at once, with no horizontal sums.
      for (int64_t b = 0; b * BS < L; ++b) {
        const T* kb = kp + (kh * NB + bt[b]) * D * BS;
        const int64_t n = std::min(BS, L - b * BS);
        for (int64_t g = 0; g < G; ++g) {
          float* pp = part.data();
          if (BS == 16) block_scores<16>(q0 + g * D, kb, D, pp);
          else if (BS == 32) block_scores<32>(q0 + g * D, kb, D, pp);
          else block_scores_any(q0 + g * D, kb, D, BS, pp);
          for (int64_t t = 0; t < n; ++t) scores[g * L + b * BS + t] = pp[t] * sc;
        }
      }
      for (int64_t g = 0; g < G; ++g) {
        float* sg = scores.data() + g * L;
        softmax_row(sg, L);
        std::fill(acc.begin(), acc.end(), 0.f);
        for (int64_t t = 0; t < L; ++t) {
          const float w = sg[t];
          const T* vv = vp + ((kh * NB + bt[t / BS]) * BS + t % BS) * D;
#pragma omp simd
          for (int64_t d = 0; d < D; ++d) acc[d] += w * to_float(vv[d]);
        }
        for (int64_t d = 0; d < D; ++d) o0[g * D + d] = acc[d];
      }
    }
  });
}

// grouped: the model's shapes through grouped_task (false: every shape through the per-head
// loop, which the tests hold it to, bit for bit).
at::Tensor paged_decode(at::Tensor q, at::Tensor k_cache, at::Tensor v_cache,
                        at::Tensor tables, at::Tensor lens, double scale, bool grouped) {
  TORCH_CHECK(q.scalar_type() == at::kFloat && q.is_contiguous(), "q: contiguous fp32");
  TORCH_CHECK(k_cache.is_contiguous() && v_cache.is_contiguous(), "caches: contiguous");
  TORCH_CHECK(k_cache.scalar_type() == v_cache.scalar_type(), "caches: one dtype");
  const int64_t KVH = v_cache.size(0), NB = v_cache.size(1), BS = v_cache.size(2);
  auto out = at::empty_like(q);
  const float sc = static_cast<float>(scale);
  if (k_cache.scalar_type() == at::kFloat) {
    paged_decode_impl<float>(q, k_cache.data_ptr<float>(), v_cache.data_ptr<float>(), KVH, NB,
                             BS, tables, lens, sc, grouped, out);
  } else {
    TORCH_CHECK(k_cache.scalar_type() == at::kBFloat16, "caches: fp32 or bf16");
    paged_decode_impl<uint16_t>(
        q, reinterpret_cast<const uint16_t*>(k_cache.data_ptr<at::BFloat16>()),
        reinterpret_cast<const uint16_t*>(v_cache.data_ptr<at::BFloat16>()), KVH, NB, BS,
        tables, lens, sc, grouped, out);
  }
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("paged_decode", torch::wrap_pybind_function(paged_decode));
}
