"""INT8 weights with dynamically quantized activations (`quantization="int8"`), on CPU.

Each weight matrix is quantized symmetrically per output channel (scale = max |w| / 127
per row) once, after loading, and prepacked for fbgemm, torch's x86 int8 GEMM. At run
time each activation row is scaled to max |x| = 1, fbgemm quantizes them over the fixed
range [-1, 1] (uint8; one step for the call, which is then one per token), multiplies in
int8 with int32 accumulation, and the output rows are scaled back and the bias added.
benchmarks/int8_linear.py measured it against the fp32 GEMM and torch's other int8 paths
(weight-only `_weight_int8pack_mm`, per-token `_int_mm`) on this model's shapes.

Activations are quantized per token, yet within a token a few channels run far larger than
the rest (the RMSNorm gains, the MLP's product), and those set the step for all of them:
that, not the int8 weights, cost most of the perplexity (+3.1% activations alone, +0.5%
weights alone). With `act_max` (each input channel's largest |x| over calibration text,
layers/quantization/calibration.py) the weight is quantized as SmoothQuant does (Xiao et al., 2022):
input channel j is divided by s_j = act_max_j^0.5 / max|W[:, j]|^0.5 and W's column j
multiplied by it, which leaves x @ W.T unchanged and moves half of the outliers' range
into the per-output-channel weight scales. benchmarks/perplexity.py measures the loss.

Where the CPU has AVX-512 VNNI, layers/quantization/int8_vnni_cpu.py takes every call instead, with the
same result bit for bit: calls of at most 8 rows (decode, draft verification) through a
kernel bound by the weight bytes rather than by fbgemm's per-call work, larger ones through
oneDNN's int8 GEMM between its own quantization and requantization. It keeps its own copy of
the int8 weights.
"""

from __future__ import annotations

import warnings

import torch

from llm_engine.layers import cpu_ops
from llm_engine.layers.backends import TORCH_BACKENDS, Backends
from llm_engine.layers.quantization import int8_vnni_cpu

# SmoothQuant's migration strength: 0 leaves activations as they are, 1 moves all of their
# range into the weights. 0.5 measured best of 0.3 / 0.5 / 0.7 on TAT-QA prose.
SMOOTHING_ALPHA = 0.5


def check_quantization(method: str, device: torch.device, dtype: torch.dtype) -> None:
    """Refuse a combination the int8 kernels cannot run, saying what works instead."""
    if device.type != "cpu":
        raise ValueError(f"quantization={method!r} runs on CPU only (fbgemm); on {device.type} "
                         "leave quantization=None")
    if dtype != torch.float32:
        raise ValueError(f"quantization={method!r} needs dtype='float32' or 'auto' (activations "
                         f"stay fp32 between the int8 GEMMs), got {dtype}")
    if "fbgemm" not in torch.backends.quantized.supported_engines:
        raise ValueError(f"quantization={method!r} needs torch's fbgemm engine, which this torch "
                         "build lacks; leave quantization=None")


def auto_quantization(device: torch.device, dtype: torch.dtype) -> str | None:
    """quantization="auto": int8 where it runs (CPU, fp32 activations, fbgemm), else None.

    On CPU int8 is the faster choice at no measured cost in answer quality (TAT-QA EM and F1
    equal to fp32's, perplexity +1.0%: benchmarks/answer_eval.py, perplexity.py)."""
    try:
        check_quantization("int8", device, dtype)
    except ValueError:
        return None
    return "int8"


class Int8Weight:
    """One weight matrix (with its bias) in int8 per output channel, packed for fbgemm."""

    def __init__(self, packed: torch.ScriptObject, scales: torch.Tensor,
                 bias: torch.Tensor | None, inv_smooth: torch.Tensor | None = None,
                 reduce_range: bool | None = None, backends: Backends = TORCH_BACKENDS,
                 qweight: torch.Tensor | None = None) -> None:
        self.packed = packed
        self.scales = scales
        self.bias = bias
        self.inv_smooth = inv_smooth  # 1 / s per input channel, or None without smoothing
        # Without VNNI fbgemm adds pairs of uint8 x int8 products in int16 (vpmaddubsw),
        # which saturates for 8-bit activations; 7-bit ones keep every pair in range, at
        # the cost of a bit of precision. VNNI (vpdpbusd) adds straight into int32.
        # None: the engine's choice (layers/selector.py; 7 bits where unbound).
        self.reduce_range = backends.int8_reduce_range if reduce_range is None else reduce_range
        # [-1, 1] onto uint8 [0, 255] (zero at 128), or [0, 127] (zero at 64) for 7 bits.
        levels = 127 if self.reduce_range else 255
        self.input_scale = 2 / levels
        self.input_zero_point = (levels + 1) // 2
        # The engine's fused row ops (layers/cpu_ops.py) and VNNI kernels, None where it has none.
        self.fused_ops = backends.fused_ops
        self.int8_kernel = backends.int8_kernel
        # The compiled kernels' smoothing and bias arguments, ready once.
        self.kernel_args = (cpu_ops.NONE if inv_smooth is None else inv_smooth,
                            cpu_ops.NONE if bias is None else bias)
        # The same weights unpacked for the VNNI kernels (layers/quantization/int8_vnni_cpu.py), where
        # they run: int8 rows, their sums and fbgemm's requantization multipliers.
        self.vnni: tuple[torch.Tensor, ...] | None = None
        if not self.reduce_range and self.int8_kernel is not None:
            # `qweight`: the quantized weight `packed` was packed from, when the caller has
            # it (quantize does); unpacking gives the same rows, at a copy a layer.
            if qweight is None:
                qweight = torch.ops.quantized.linear_unpack(packed)[0]
            rows = qweight.int_repr().contiguous()
            mult = torch.tensor(self.input_scale, dtype=torch.float32) \
                * qweight.q_per_channel_scales().float()
            self.vnni = (rows, rows.sum(dim=1, dtype=torch.int32), mult.contiguous(),
                         *self.kernel_args)

    @classmethod
    def quantize(cls, weight: torch.Tensor, bias: torch.Tensor | None,
                 act_max: torch.Tensor | None = None,
                 backends: Backends = TORCH_BACKENDS) -> Int8Weight:
        """`act_max`: each input channel's largest |x| seen in calibration (SmoothQuant);
        `backends`: the engine's kernels (fbgemm and torch's ops by default)."""
        weight = weight.detach().float()
        inv_smooth = None
        if act_max is not None:
            smooth = (act_max.float().clamp(min=1e-5) ** SMOOTHING_ALPHA
                      / weight.abs().amax(dim=0).clamp(min=1e-5) ** (1 - SMOOTHING_ALPHA))
            weight = weight * smooth.clamp(min=1e-5)
            inv_smooth = 1 / smooth.clamp(min=1e-5)
        weight = weight.contiguous()
        scales = (weight.abs().amax(dim=1) / 127).clamp(min=1e-12)
        bias = None if bias is None else bias.detach().float().contiguous()
        engine = torch.backends.quantized.engine
        with warnings.catch_warnings():
            # torch deprecates quantized tensors, yet they are the only way into fbgemm's
            # prepack; the packed weight that comes out is no quantized tensor.
            warnings.simplefilter("ignore", UserWarning)
            qweight = torch.quantize_per_channel(
                weight, scales.double(), torch.zeros_like(scales, dtype=torch.int64), 0,
                torch.qint8)
            try:
                # torch's default "x86" engine packs for oneDNN on VNNI CPUs with symmetric
                # weights, and oneDNN grows memory with every distinct row count (see
                # layers/linear.py); fbgemm does not, and is as fast (int8_linear.py).
                torch.backends.quantized.engine = "fbgemm"
                packed = torch.ops.quantized.linear_prepack(qweight, None)
            finally:
                torch.backends.quantized.engine = engine
        return cls(packed, scales, bias, inv_smooth, backends=backends, qweight=qweight)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        # Per-token activation scales through a per-tensor kernel: each row is divided by
        # its own max |x| first and the output rows multiplied back (the GEMM is linear in
        # each row), so a few tokens of huge norm (the first ones of a sequence) no longer
        # crush the resolution of all the others; per tensor, perplexity rose 57%.
        # The rows then lie in [-1, 1], and they are quantized over exactly that range
        # whatever the data, so a token's result does not depend on which tokens share
        # its batch (greedy output alone = in a batch). This is the step and zero point
        # `quantized::linear_dynamic` would choose for a batch spanning [-1, 1], so the
        # results are bit for bit the same, without its pass that finds the range.
        if self.vnni is not None and int8_vnni_cpu.takes(x.shape[0], self.vnni[0].shape[0]):
            return int8_vnni_cpu.linear(self.int8_kernel, x, self.vnni, self.input_scale,
                                        self.input_zero_point)
        if self.fused_ops is not None:  # the torch lines below, one pass each way
            ops, (smooth, bias) = self.fused_ops, self.kernel_args
            x, row_max = ops.int8_rows(x, smooth)
            y = torch.ops.quantized.linear_with_input_q_dq_qweight_dq_output_fp32(
                x, self.input_scale, self.input_zero_point, self.packed)
            ops.rescale_rows_(y, row_max, bias)
            return y
        if self.inv_smooth is not None:
            x = x * self.inv_smooth
        row_max = x.abs().amax(dim=1, keepdim=True).clamp_(min=1e-12)
        y = torch.ops.quantized.linear_with_input_q_dq_qweight_dq_output_fp32(
            x / row_max, self.input_scale, self.input_zero_point, self.packed)
        y.mul_(row_max)
        return y if self.bias is None else y.add_(self.bias)
