"""A CPU kernel for decode attention that reads K/V blocks where they lie.

The torch path must first gather every sequence's blocks into a contiguous tensor, which
copies the whole context's K/V each step and then reads it again: on the standard workload
that copy was a third of a decode step. This kernel walks each sequence's block table and
reads the cache in place, one (sequence, K/V head) pair per task on ATen's thread pool,
from an fp32 cache or a bf16 one (kv_cache_dtype="bfloat16"), widened as it is read: at
large batches the kernel is bound by the K/V bytes it reads. It is compiled once with
torch's C++ extension loader; where no compiler is available the engine keeps the torch
path.
"""

from __future__ import annotations

from functools import cache

import torch

from llm_engine.utils import cpu_extension

_SOURCE = r"""
#include <torch/extension.h>
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

// q: [R, H, D]; k_cache: [KVH, NB, D, BS]; v_cache: [KVH, NB, BS, D];
// tables: [R, MAXB] int64; lens: [R] int64.
template <typename T>
static void paged_decode_impl(const torch::Tensor& q, const T* kp, const T* vp,
                              int64_t KVH, int64_t NB, int64_t BS, const torch::Tensor& tables,
                              const torch::Tensor& lens, float sc, torch::Tensor& out) {
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
      scores.assign(G * L, 0.f);
      // Keys are stored [D][BS] per block: one vector FMA per dimension scores every token
      // of the block at once, with no horizontal sums.
      for (int64_t b = 0; b * BS < L; ++b) {
        const T* kb = kp + (kh * NB + bt[b]) * D * BS;
        const int64_t n = std::min(BS, L - b * BS);
        for (int64_t g = 0; g < G; ++g) {
          const float* qq = qp + (r * H + kh * G + g) * D;
          float* pp = part.data();
          if (BS == 16) block_scores<16>(qq, kb, D, pp);
          else if (BS == 32) block_scores<32>(qq, kb, D, pp);
          else block_scores_any(qq, kb, D, BS, pp);
          for (int64_t t = 0; t < n; ++t) scores[g * L + b * BS + t] = pp[t] * sc;
        }
      }
      for (int64_t g = 0; g < G; ++g) {
        float* sg = scores.data() + g * L;
        float mx = -std::numeric_limits<float>::infinity();
        for (int64_t t = 0; t < L; ++t) mx = sg[t] > mx ? sg[t] : mx;
        float sum = 0.f;
        for (int64_t t = 0; t < L; ++t) { sg[t] = std::exp(sg[t] - mx); sum += sg[t]; }
        const float inv = 1.f / sum;
        std::fill(acc.begin(), acc.end(), 0.f);
        for (int64_t t = 0; t < L; ++t) {
          const float w = sg[t] * inv;
          const T* vv = vp + ((kh * NB + bt[t / BS]) * BS + t % BS) * D;
#pragma omp simd
          for (int64_t d = 0; d < D; ++d) acc[d] += w * to_float(vv[d]);
        }
        float* o = op + (r * H + kh * G + g) * D;
        for (int64_t d = 0; d < D; ++d) o[d] = acc[d];
      }
    }
  });
}

torch::Tensor paged_decode(torch::Tensor q, torch::Tensor k_cache, torch::Tensor v_cache,
                           torch::Tensor tables, torch::Tensor lens, double scale) {
  TORCH_CHECK(q.scalar_type() == torch::kFloat32 && q.is_contiguous(), "q: contiguous fp32");
  TORCH_CHECK(k_cache.is_contiguous() && v_cache.is_contiguous(), "caches: contiguous");
  TORCH_CHECK(k_cache.scalar_type() == v_cache.scalar_type(), "caches: one dtype");
  const int64_t KVH = v_cache.size(0), NB = v_cache.size(1), BS = v_cache.size(2);
  auto out = torch::empty_like(q);
  const float sc = static_cast<float>(scale);
  if (k_cache.scalar_type() == torch::kFloat32) {
    paged_decode_impl<float>(q, k_cache.data_ptr<float>(), v_cache.data_ptr<float>(), KVH, NB,
                             BS, tables, lens, sc, out);
  } else {
    TORCH_CHECK(k_cache.scalar_type() == torch::kBFloat16, "caches: fp32 or bf16");
    paged_decode_impl<uint16_t>(
        q, reinterpret_cast<const uint16_t*>(k_cache.data_ptr<at::BFloat16>()),
        reinterpret_cast<const uint16_t*>(v_cache.data_ptr<at::BFloat16>()), KVH, NB, BS,
        tables, lens, sc, out);
  }
  return out;
}
"""

@cache
def load_kernel():
    """The compiled `paged_decode`, or None where it cannot be built (logged once)."""
    module = cpu_extension.build(
        "finrag_paged_attention_cpu_v8", _SOURCE, ["paged_decode"],
        ["-O3", "-fopenmp", "-march=native", "-ffast-math"], "paged-attention",
        "using the torch path")
    return None if module is None else module.paged_decode


def paged_decode(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                 tables: torch.Tensor, lens: torch.Tensor, scale: float) -> torch.Tensor:
    kernel = load_kernel()
    assert kernel is not None, "call load_kernel() first"
    return kernel(q.contiguous(), k_cache, v_cache, tables, lens, scale)
