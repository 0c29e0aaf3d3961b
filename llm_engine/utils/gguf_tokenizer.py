"""Rebuild a Hugging Face `tokenizer.json` from the tokenizer a GGUF file describes.

A GGUF carries no `tokenizer.json`: llama.cpp stores the vocabulary, merges, token types and the
*name* of the pre-tokenizer (`tokenizer.ggml.pre`) as metadata and hard-codes the split regexes in
C++. We map those names back to `tokenizers` pre-tokenizers so our ids equal llama.cpp's (and the
original model's). transformers' own GGUF loader treats `smollm` as plain GPT-2 (no per-digit
split); that only gives the same ids because SmolLM2's vocabulary has no multi-digit merges.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, processors

# llama_token_type values (gguf.TokenType); only these two become added tokens.
CONTROL = 3
USER_DEFINED = 4

# Split regexes from llama.cpp's llama-vocab.cpp, keyed by tokenizer.ggml.pre.
_GPT2_PRES = {"default", "gpt2", "gpt-2", "mpt", "olmo", "jais", "trillion"}
# "\p{N}" isolated first, then the GPT-2 regex: what SmolLM/StarCoder's own tokenizer.json do
# with Digits(individual_digits=True) + ByteLevel.
_DIGIT_PRES = {"smollm", "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva"}
_LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_SPLIT_PRES = {
    **dict.fromkeys(
        ("llama3", "llama-v3", "llama-bpe", "falcon3", "smaug-bpe", "dbrx"), _LLAMA3_SPLIT),
    **dict.fromkeys(("qwen2", "deepseek-r1-qwen", "stablelm2", "megrez"), _QWEN2_SPLIT),
}
SUPPORTED_PRES = sorted(_GPT2_PRES | _DIGIT_PRES | set(_SPLIT_PRES))


def _pre_tokenizer(pre: str) -> pre_tokenizers.PreTokenizer:
    if pre in _GPT2_PRES:
        return pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if pre in _DIGIT_PRES:
        return pre_tokenizers.Sequence(
            [
                pre_tokenizers.Digits(individual_digits=True),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
            ]
        )
    if pre in _SPLIT_PRES:
        # Split does the regex, ByteLevel only maps bytes (its own GPT-2 regex would re-split).
        return pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(_SPLIT_PRES[pre]), behavior="isolated", invert=False),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    # Guessing a regex would silently produce ids the model never saw in training.
    raise ValueError(
        f"GGUF pre-tokenizer {pre!r} is not supported (supported: {', '.join(SUPPORTED_PRES)}); "
        "convert the model from its Hugging Face folder instead"
    )


def add_bos_token(meta: dict[str, Any]) -> bool:
    """Whether encode() prepends BOS; llama.cpp defaults it on for SentencePiece vocabularies."""
    default = meta.get("tokenizer.ggml.model") == "llama"
    return bool(meta.get("tokenizer.ggml.add_bos_token", default))


def build_tokenizer(meta: dict[str, Any]) -> Tokenizer:
    """A `tokenizers.Tokenizer` from GGUF `tokenizer.ggml.*` metadata."""
    kind = meta.get("tokenizer.ggml.model")
    tokens: Sequence[str] = meta["tokenizer.ggml.tokens"]
    types: Sequence[int] = meta.get("tokenizer.ggml.token_type") or [1] * len(tokens)
    vocab = {tok: i for i, tok in enumerate(tokens)}
    if len(vocab) != len(tokens):
        raise ValueError("GGUF vocabulary has duplicate tokens; cannot build a BPE tokenizer")
    if kind == "gpt2":
        tok = _byte_level_bpe(meta, vocab)
    elif kind == "llama":
        tok = _sentencepiece_bpe(meta, vocab)
    else:
        raise ValueError(
            f"GGUF tokenizer model {kind!r} is not supported, only 'gpt2' (byte-level BPE) and "
            "'llama' (SentencePiece BPE); use the model's Hugging Face folder instead"
        )

    # llama.cpp matches CONTROL and USER_DEFINED tokens whole in raw text, before any BPE.
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t, ty in zip(tokens, types, strict=True) if ty == CONTROL])
    tok.add_tokens([AddedToken(t, special=False, normalized=False)
                    for t, ty in zip(tokens, types, strict=True) if ty == USER_DEFINED])

    bos_id = meta.get("tokenizer.ggml.bos_token_id")
    eos_id = meta.get("tokenizer.ggml.eos_token_id")
    add_bos = add_bos_token(meta) and bos_id is not None
    add_eos = bool(meta.get("tokenizer.ggml.add_eos_token", False)) and eos_id is not None
    if add_bos or add_eos:
        # The post-processor is where both `tokenizers` and transformers add BOS/EOS, so a plain
        # Tokenizer.from_file user gets the same ids as AutoTokenizer.
        pre = [tokens[bos_id]] if add_bos else []
        post = [tokens[eos_id]] if add_eos else []
        single = pre + ["$A"] + post
        pair = pre + ["$A"] + post + pre + ["$B:1"] + [f"{p}:1" for p in post]
        used = ([bos_id] if add_bos else []) + ([eos_id] if add_eos else [])
        specials = [(tokens[i], i) for i in dict.fromkeys(used)]
        tok.post_processor = processors.TemplateProcessing(
            single=" ".join(single), pair=" ".join(pair), special_tokens=specials
        )
    elif kind == "gpt2":
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return tok


def _byte_level_bpe(meta: dict[str, Any], vocab: dict[str, int]) -> Tokenizer:
    merges = [tuple(m.split(" ", 1)) for m in meta["tokenizer.ggml.merges"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False, byte_fallback=False))
    tok.pre_tokenizer = _pre_tokenizer(str(meta.get("tokenizer.ggml.pre", "default")))
    tok.decoder = decoders.ByteLevel()
    return tok


def _sentencepiece_bpe(meta: dict[str, Any], vocab: dict[str, int]) -> Tokenizer:
    """SentencePiece BPE as Hugging Face's Llama tokenizer spells it (Metaspace, byte fallback)."""
    merges = meta.get("tokenizer.ggml.merges")
    if merges:
        pairs = [tuple(m.split(" ", 1)) for m in merges]
    else:
        # Most SentencePiece GGUFs carry scores, not merges: a piece's score ranks its merge.
        scores = meta.get("tokenizer.ggml.scores") or [-float(i) for i in range(len(vocab))]
        pairs = merges_from_scores(vocab, dict(zip(vocab, scores, strict=True)))
    unk_id = meta.get("tokenizer.ggml.unknown_token_id")
    unk = meta["tokenizer.ggml.tokens"][unk_id] if unk_id is not None else None
    tok = Tokenizer(models.BPE(vocab=vocab, merges=pairs, unk_token=unk, fuse_unk=True,
                               byte_fallback=True))
    prefix = bool(meta.get("tokenizer.ggml.add_space_prefix", True))
    # "first": the prefix space goes before the text only, not after every special token.
    tok.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement="\u2581", prepend_scheme="first" if prefix else "never", split=False)
    steps = [decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()]
    if prefix:
        steps.append(decoders.Strip(content=" ", left=1, right=0))
    tok.decoder = decoders.Sequence(steps)
    return tok


def merges_from_scores(vocab: dict[str, int], scores: dict[str, float]) -> list[tuple[str, str]]:
    """BPE merges implied by a scored vocabulary: every split of a piece into two known pieces,
    best piece score first, ties ordered as transformers' generate_merges orders them."""
    found: list[tuple[str, str, float]] = []
    for piece, score in scores.items():
        local = [(piece[:i], piece[i:], score) for i in range(1, len(piece))
                 if piece[:i] in vocab and piece[i:] in vocab]
        local.sort(key=lambda m: (vocab[m[0]], vocab[m[1]]))
        found.extend(local)
    found.sort(key=lambda m: (m[2], len(m[0]), len(m[1])), reverse=True)
    return [(left, right) for left, right, _ in found]


def special_token(meta: dict[str, Any], key: str) -> str | None:
    """The text of the special token `tokenizer.ggml.<key>_token_id`, or None."""
    idx = meta.get(f"tokenizer.ggml.{key}_token_id")
    tokens = meta["tokenizer.ggml.tokens"]
    return tokens[idx] if idx is not None and 0 <= idx < len(tokens) else None


# Tokens llama.cpp also treats as end-of-generation when they are in the vocabulary.
_EOG_TEXTS = ("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
              "<|eom_id|>", "<EOT>", "<|end_of_text|>")


def stop_token_ids(meta: dict[str, Any]) -> list[int]:
    """EOS first, then EOT/EOM and the well-known end-of-turn tokens the vocabulary has."""
    ids: list[int] = []
    for key in ("eos", "eot", "eom"):
        idx = meta.get(f"tokenizer.ggml.{key}_token_id")
        if idx is not None and idx not in ids:
            ids.append(int(idx))
    tokens = meta["tokenizer.ggml.tokens"]
    types = meta.get("tokenizer.ggml.token_type") or [CONTROL] * len(tokens)
    index = {t: i for i, t in enumerate(tokens) if t in _EOG_TEXTS}
    for text in _EOG_TEXTS:
        i = index.get(text)
        if i is not None and types[i] == CONTROL and i not in ids:
            ids.append(i)
    return ids
