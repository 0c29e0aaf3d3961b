#!/usr/bin/env bash
# GPU check of the retriever, under 7 minutes on one GPU:
#   ONNX Runtime CUDA FP16 vs torch CUDA encode throughput, faiss-gpu search, TensorRT (retrexec),
#   dense and 2:4-sparse (--sparsity=force).
# Run from the repo root:  bash benchmarks/gpu_check_retriever.sh [OUT_DIR]
# Each part is skipped (with a line saying why) when its library is missing.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-engines/retriever-gpu}
mkdir -p "$OUT"
echo "reproduce: bash benchmarks/gpu_check_retriever.sh $OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "nvidia-smi missing"
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')"

[ -f "$OUT/model.fp16.onnx" ] || timeout 180 python3 -m onnx_export --outDir="$OUT" --fp16 || exit 1

timeout 120 python3 - "$OUT" <<'PY'
import sys, time
from pathlib import Path
import numpy as np, torch, onnxruntime as ort
from onnx_export.calibration import read_samples
from retriever_trt.embedders.torch_embedder import TorchEmbedder
from retriever_trt.embedders.ort_embedder import OnnxRuntimeEmbedder
from retriever_trt.embedders.profiles import Profile, Shape
out = Path(sys.argv[1])
data = Path("..") / "shared" / "data" / "tatqa" / "tatqa_dataset_dev.json"
texts = read_samples(data)[:2000] if data.is_file() else [f"revenue grew {i}%" for i in range(2000)]
def bench(name, enc):
    enc(texts[:128]); t = time.perf_counter(); v = enc(texts); dt = time.perf_counter() - t
    print(f"{name:24s} {len(texts) / dt:9.1f} sentences/s"); return v
ref = None
if torch.cuda.is_available():
    te = TorchEmbedder(batch_size=128); te.model = te.model.cuda().half()
    @torch.inference_mode()
    def tenc(ts):
        from onnx_export.encoder import tokenize_batch
        outs = []
        for i in range(0, len(ts), 128):
            ids, m = tokenize_batch(te.tokenizer, ts[i:i + 128])
            ids, m = torch.from_numpy(ids).cuda(), torch.from_numpy(m).cuda()
            h = te.model(input_ids=ids, attention_mask=m).last_hidden_state.float()
            w = m.unsqueeze(-1).float(); p = (h * w).sum(1) / w.sum(1)
            outs.append(torch.nn.functional.normalize(p, dim=-1).cpu().numpy())
        return np.concatenate(outs)
    ref = bench("torch CUDA FP16", tenc)
if "CUDAExecutionProvider" in ort.get_available_providers():
    prof = Profile(Shape(1, 1), Shape(128, 128), Shape(128, 256))
    e = OnnxRuntimeEmbedder(out / "model.fp16.onnx", providers=["cuda"], profile=prof)
    v = bench("ORT CUDA FP16", e.encode)
    if ref is not None:
        print(f"ORT CUDA FP16 vs torch: min cosine {(v * ref).sum(-1).min():.5f}")
else:
    print("ORT CUDA: skipped (CUDAExecutionProvider missing: pip install finrag[gpu])")
PY

timeout 60 python3 - <<'PY'
import time, numpy as np
try:
    import faiss
except ImportError:
    raise SystemExit("faiss: not importable")
if not hasattr(faiss, "StandardGpuResources") or faiss.get_num_gpus() == 0:
    raise SystemExit("faiss-gpu: skipped (CPU-only faiss or no GPU)")
rng = np.random.default_rng(0)
xb = rng.standard_normal((200_000, 384), dtype=np.float32); faiss.normalize_L2(xb)
xq = xb[:10_000].copy()
cpu = faiss.IndexFlatIP(384); cpu.add(xb)
gpu = faiss.index_cpu_to_gpu(faiss.StandardGpuResources(), 0, cpu)
for name, idx in (("faiss CPU Flat", cpu), ("faiss GPU Flat", gpu)):
    t = time.perf_counter(); _, i = idx.search(xq[:2000] if "CPU" in name else xq, 10)
    n = 2000 if "CPU" in name else 10_000
    print(f"{name:24s} {n / (time.perf_counter() - t):9.0f} queries/s (200k x 384, k=10)")
PY

if python3 -c "import tensorrt" 2>/dev/null; then
  timeout 240 python3 -m retriever_trt.build.retrexec --onnx="$OUT/model.onnx" --fp16 \
    --saveEngine="$OUT/model.fp16.plan" --timingCacheFile="$OUT/timing.cache" \
    --minShapes=input_ids:1x16,attention_mask:1x16 --optShapes=input_ids:64x128,attention_mask:64x128 \
    --maxShapes=input_ids:128x256,attention_mask:128x256 --memPoolSize=workspace:2G --duration=3
  # The same build from weights pruned to 2:4 (--sparsity=force: SPARSE_WEIGHTS on the
  # pruned model.fp16.sparse24.onnx): the summary's "Sparsity:" line counts the layers
  # TensorRT ran sparse; its throughput beside the dense build's above is the speed-up.
  timeout 240 python3 -m retriever_trt.build.retrexec --onnx="$OUT/model.onnx" --fp16 --sparsity=force \
    --saveEngine="$OUT/model.fp16.sparse24.plan" --timingCacheFile="$OUT/timing.cache" \
    --minShapes=input_ids:1x16,attention_mask:1x16 --optShapes=input_ids:64x128,attention_mask:64x128 \
    --maxShapes=input_ids:128x256,attention_mask:128x256 --workspace=2048 --duration=3
else
  echo "TensorRT: skipped (pip install finrag[gpu])"
fi
