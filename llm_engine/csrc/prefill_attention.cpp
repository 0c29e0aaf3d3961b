// Causal prefill attention as paired query blocks of ATen GEMMs on ATen's thread pool. Wrapper
// and rationale: llm_engine/layers/attention/prefill_attention_cpu.py. One build (generic): its work is in
// ATen's own kernels, which pick their ISA at run time.

// ATen's and the Python binding's own headers rather than <torch/extension.h>, which parses the
// whole C++ frontend: a kernel then compiles in ~8 s instead of ~20 at a machine's first start.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/softmax.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/utils/pybind.h>
#include <ATen/Parallel.h>
#include <algorithm>
#include <limits>

// q: [T, H, D] (scaled), at positions past .. past + T - 1; k, v: [past + T, KVH, D].
// Returns [T, H, D].
at::Tensor causal_prefill(at::Tensor q, at::Tensor k, at::Tensor v,
                          int64_t block, int64_t past) {
  const int64_t T = q.size(0), H = q.size(1), D = q.size(2), KVH = k.size(1), G = H / KVH;
  auto qh = q.view({T, KVH, G, D}).transpose(0, 1).reshape({KVH, T * G, D});
  auto keys_t = k.permute({1, 2, 0}).contiguous();  // [KVH, D, T]
  auto values = v.transpose(0, 1).contiguous();     // [KVH, T, D]
  auto out = at::empty({T, KVH, G, D}, q.options());
  const int64_t nb = (T + block - 1) / block, pairs = (nb + 1) / 2;
  auto attend = [&](int64_t kh, int64_t b) {
    const int64_t start = b * block, end = std::min(T, start + block), rows = end - start;
    const int64_t seen = past + end;  // keys of the block's last row
    auto scores = at::mm(qh[kh].narrow(0, start * G, rows * G), keys_t[kh].narrow(1, 0, seen));
    // The causal mask of the diagonal block, written in place: a masked_fill_ of a strided
    // view with a broadcast mask cost as much as the softmax (benchmarks/prefill_attention.py).
    float* sp = scores.data_ptr<float>();
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t g = 0; g < G; ++g)
        std::fill(sp + (i * G + g) * seen + past + start + i + 1, sp + (i * G + g + 1) * seen,
                  -std::numeric_limits<float>::infinity());
    auto probs = at::softmax(scores, -1);
    out.narrow(0, start, rows).select(1, kh).copy_(
        at::mm(probs, values[kh].narrow(0, 0, seen)).view({rows, G, D}));
  };
  // The pool's threads do not inherit the caller's inference mode, and in-place writes to
  // an inference tensor (out) are refused outside it.
  const bool inference = c10::InferenceMode::is_enabled();
  at::parallel_for(0, KVH * pairs, 1, [&](int64_t first, int64_t last) {
    c10::InferenceMode guard(inference);
    for (int64_t task = first; task < last; ++task) {
      const int64_t kh = task / pairs, p = task % pairs;
      attend(kh, p);
      if (nb - 1 - p != p) attend(kh, nb - 1 - p);
    }
  });
  return out.view({T, H, D});
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("causal_prefill", torch::wrap_pybind_function(causal_prefill));
}
