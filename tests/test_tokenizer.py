"""Our Tokenizer against transformers' AutoTokenizer (on the prepared folder and on the GGUF)."""

from __future__ import annotations

from pathlib import Path

import pytest

from llm_engine.tokenizer import Tokenizer
from llm_engine.utils.gguf_convert import convert_gguf

TEXTS = [
    "What was Apple's total revenue in fiscal 2019?",
    "$1,234.56",
    "2019 vs 2018: -3.5%",
    "EBITDA margin rose 120bps to 23.4% (FY23), up from 22.2%; EPS $(0.15).",
    "1234567890 12,345,678.90 1e-3 0.000001",
    "café naïve Ærø — “quoted” 中文 财务报表 日本語 😀🚀💰 👩‍👩‍👧",
    "   leading spaces, trailing   ",
    "tabs\tand\t\tmore\ttabs",
    "line one\nline two\n\n\nline five\r\nwindows",
    "  \n  \n",
    "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
    "<|endoftext|>text after eos",
    "I'm sure they'll say it's fine; we've done what we'd do.",
    "",
]

CHATS = [
    [{"role": "user", "content": "What is the debt-to-equity ratio?"}],
    [
        {"role": "system", "content": "You answer finance questions from the given passages."},
        {"role": "user", "content": "Revenue 2019: $5.2B; 2018: $4.9B. Growth?"},
        {"role": "assistant", "content": "About 6.1%."},
        {"role": "user", "content": "And in percent points?"},
    ],
    [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "Explain EBITDA 中文 😀"},
    ],
]


@pytest.fixture(scope="module")
def ours(prepared_default: Path) -> Tokenizer:
    return Tokenizer.from_pretrained(prepared_default)


@pytest.fixture(scope="module")
def hf_folder(prepared_default: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(prepared_default)


@pytest.fixture(scope="module")
def hf_gguf(default_gguf: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(default_gguf.parent, gguf_file=default_gguf.name)


@pytest.mark.parametrize("text", TEXTS)
def test_encode_matches_transformers(ours: Tokenizer, hf_folder, hf_gguf, text: str):
    ids = ours.encode(text)
    assert ids == hf_folder.encode(text)
    assert ids == hf_gguf.encode(text)
    assert ours.encode(text, add_special_tokens=False) == hf_folder.encode(
        text, add_special_tokens=False)


@pytest.mark.parametrize("text", TEXTS)
def test_decode_round_trip(ours: Tokenizer, hf_folder, text: str):
    ids = ours.encode(text)
    assert ours.decode(ids, skip_special_tokens=False) == text
    assert ours.decode(ids) == hf_folder.decode(ids, skip_special_tokens=True)
    assert ours.decode(ids, skip_special_tokens=False) == hf_folder.decode(ids)


def test_llama_cpp_splitting(ours: Tokenizer):
    # llama.cpp's smollm pre-tokenizer isolates every digit and keeps special tokens whole.
    assert len(ours.encode("1234567")) == 7
    assert ours.encode("<|im_start|>") == [1]
    assert ours.convert_ids_to_tokens([1, 2]) == ["<|im_start|>", "<|im_end|>"]
    assert ours.encode("a<|im_end|>b")[1] == 2


@pytest.mark.parametrize("chat", CHATS)
@pytest.mark.parametrize("gen", [True, False])
def test_chat_template_matches_transformers(ours: Tokenizer, hf_folder, hf_gguf, chat, gen: bool):
    text = ours.apply_chat_template(chat, add_generation_prompt=gen)
    assert text == hf_folder.apply_chat_template(chat, add_generation_prompt=gen, tokenize=False)
    assert text == hf_gguf.apply_chat_template(chat, add_generation_prompt=gen, tokenize=False)
    ids = ours.apply_chat_template(chat, add_generation_prompt=gen, tokenize=True)
    assert ids == hf_folder.encode(text, add_special_tokens=False)
    if gen:
        assert text.endswith("<|im_start|>assistant\n")


def test_default_system_prompt(ours: Tokenizer):
    text = ours.apply_chat_template(CHATS[0])
    assert text.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")


def test_special_ids(ours: Tokenizer, hf_folder):
    assert ours.eos_token_id == hf_folder.eos_token_id == 2  # <|im_end|>
    assert ours.bos_token_id == hf_folder.bos_token_id == 1
    assert ours.pad_token_id == hf_folder.pad_token_id
    assert ours.vocab_size == hf_folder.vocab_size == 49152
    assert len(ours) == len(hf_folder)
    assert ours.all_special_ids == hf_folder.all_special_ids
    assert set(range(17)) <= set(ours.all_special_ids)  # <|im_start|>, <repo_name>, ...
    assert ours.stop_token_ids[0] == 2 and 0 in ours.stop_token_ids  # <|endoftext|> too


def test_errors(tmp_path: Path, ours: Tokenizer):
    with pytest.raises(FileNotFoundError, match="tokenizer.json"):
        Tokenizer.from_pretrained(tmp_path)
    with pytest.raises(ValueError, match="empty"):
        ours.apply_chat_template([])


@pytest.mark.parametrize("pre", ["llama-bpe", "qwen2", "gpt2"])
def test_tiny_bos_and_pretokenizers(tmp_path: Path, write_tiny_gguf, pre: str):
    """add_bos_token=True and split-regex pre-tokenizers, on a tiny vocabulary."""
    from transformers import AutoTokenizer

    src, _ = write_tiny_gguf(tmp_path / "t.gguf", "llama", quant="F32", pre=pre, add_bos=True)
    folder = convert_gguf(src, tmp_path / "hf", progress=False)
    ours = Tokenizer.from_pretrained(folder)
    hf = AutoTokenizer.from_pretrained(folder)
    ref = AutoTokenizer.from_pretrained(src.parent, gguf_file=src.name)
    for text in ["the theater in 1999", "  a\n\n b", "x<think>y", "it's 12345"]:
        ids = ours.encode(text)
        assert ids[0] == 1  # BOS
        assert ids == hf.encode(text) == ref.encode(text), text
        assert ours.encode(text, add_special_tokens=False) == ids[1:]
        assert ours.decode(ids) == text
    chat = [{"role": "user", "content": "hi"}]
    assert ours.apply_chat_template(chat) == hf.apply_chat_template(
        chat, add_generation_prompt=True, tokenize=False)


def test_tiny_sentencepiece(tmp_path: Path, write_tiny_gguf):
    """A 'llama' (SentencePiece) vocabulary: merges from scores, Metaspace, byte fallback."""
    from transformers import AutoTokenizer

    src, _ = write_tiny_gguf(tmp_path / "spm.gguf", "llama", quant="F32", spm=True, add_bos=True)
    folder = convert_gguf(src, tmp_path / "hf", progress=False)
    ours = Tokenizer.from_pretrained(folder)
    hf = AutoTokenizer.from_pretrained(folder)
    ref = AutoTokenizer.from_pretrained(src.parent, gguf_file=src.name)
    texts = ["the theater in 1212", "  a  the\n\nin", "é中😀 at", "x<|im_end|>the", "<think>in",
             " leading", ""]
    for text in texts:
        ids = ours.encode(text)
        assert ids == hf.encode(text) == ref.encode(text), text
        assert ids[:1] == [1]
        assert ours.decode(ids) == hf.decode(ids, skip_special_tokens=True) == ref.decode(
            ids, skip_special_tokens=True), text
    # "▁" prefix, then byte fallback for the unknown character
    assert ours.encode("é", add_special_tokens=False) == [259, 3 + 0xC3, 3 + 0xA9]
    assert ours.decode(ours.encode("the theater")) == "the theater"
