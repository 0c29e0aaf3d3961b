"""The engines benchmarks/throughput.py compares, behind one call: greedy-generate exactly
`new_tokens` for each of a list of token-id prompts and return how many came out.

finrag (fp32 or int8 weights) gets every prompt at once (continuous batching);
transformers and CTranslate2 take static batches of `batch` prompts (left-padded for
transformers), as a user of theirs would.
"""

from __future__ import annotations

import gc
from pathlib import Path

import torch

from llm_engine import LLM, SamplingParams

REPO = Path(__file__).resolve().parents[1]


class FinragPeer:
    def __init__(self, model_dir: str, **engine_args) -> None:
        self.llm = LLM(model_dir, **engine_args)

    def generate(self, prompts: list[list[int]], new_tokens: int) -> int:
        params = SamplingParams(temperature=0, max_tokens=new_tokens, ignore_eos=True)
        outs = self.llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
        return sum(len(o.outputs[0].token_ids) for o in outs)

    def close(self) -> None:
        # On CUDA the next engine sizes its KV cache from free memory: hand this one's back.
        del self.llm
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


class TransformersPeer:
    def __init__(self, model_dir: str, batch: int, device: torch.device, dtype: torch.dtype) -> None:
        from transformers import AutoModelForCausalLM

        self.model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype).to(device).eval()
        self.batch, self.device = batch, device
        self.pad = self.model.config.pad_token_id or 0

    @torch.inference_mode()
    def generate(self, prompts: list[list[int]], new_tokens: int) -> int:
        total = 0
        for i in range(0, len(prompts), self.batch):
            group = prompts[i : i + self.batch]
            width = max(len(p) for p in group)
            ids = torch.tensor([[self.pad] * (width - len(p)) + p for p in group], device=self.device)
            mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in group],
                                device=self.device)
            out = self.model.generate(ids, attention_mask=mask, max_new_tokens=new_tokens,
                                      min_new_tokens=new_tokens, do_sample=False,
                                      pad_token_id=self.pad)
            total += (out.shape[1] - width) * len(group)
        return total

    def close(self) -> None:
        del self.model
        gc.collect()


class CTranslate2Peer:
    """CTranslate2 with int8 weights, converted once into engines/ct2/<model>-int8."""

    def __init__(self, model_dir: str, batch: int) -> None:
        try:
            import ctranslate2
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise SystemExit(f"CTranslate2 is missing ({exc}): pip install -e '.[bench]'") from exc
        out = REPO / "engines" / "ct2" / f"{Path(model_dir).name}-int8"
        if not (out / "model.bin").is_file():
            from ctranslate2.converters import TransformersConverter

            tmp = out.with_name(out.name + ".tmp")
            print(f"converting {model_dir} to CTranslate2 int8 in {out}", flush=True)
            TransformersConverter(model_dir).convert(str(tmp), quantization="int8", force=True)
            tmp.replace(out)
        self.generator = ctranslate2.Generator(str(out), device="cpu", compute_type="int8",
                                               intra_threads=torch.get_num_threads())
        self.vocab = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
        self.batch = batch

    def generate(self, prompts: list[list[int]], new_tokens: int) -> int:
        tokens = [[self.vocab.id_to_token(i) for i in p] for p in prompts]
        results = self.generator.generate_batch(
            tokens, max_batch_size=self.batch, max_length=new_tokens, min_length=new_tokens,
            sampling_topk=1, include_prompt_in_result=False)
        return sum(len(r.sequences_ids[0]) for r in results)

    def close(self) -> None:
        del self.generator
        gc.collect()
