"""Incremental detokenization never splits a character and equals a full decode."""

from __future__ import annotations

from pathlib import Path

from llm_engine import SamplingParams
from llm_engine.engine.detokenizer import Detokenizer, visible_text
from llm_engine.sequence import Sequence, SequenceStatus
from llm_engine.tokenizer import Tokenizer

TEXT = "Net income: €1,234.5 million (+3.2%) — 净利润 📈 café naïve. Done!"


def test_streamed_deltas_are_whole_characters(prepared_default: Path) -> None:
    tok = Tokenizer.from_pretrained(prepared_default)
    prompt = tok.encode("Report:")
    seq = Sequence("r", None, prompt, SamplingParams())
    detok = Detokenizer(tok)
    detok.start(seq)
    deltas = []
    for t in tok.encode(TEXT, add_special_tokens=False):
        seq.token_ids.append(t)
        deltas.append(detok.step(seq))
    assert all("\ufffd" not in d for d in deltas)
    assert "".join(deltas) == seq.output_text == tok.decode(seq.output_token_ids)
    assert seq.output_text == TEXT
    # Some token completed no character on its own: its delta had to wait.
    assert "" in deltas


def test_visible_text_holds_back_a_possible_stop_string() -> None:
    seq = Sequence("r", None, [1], SamplingParams(stop=["END"]))
    seq.output_text = "value is 12 EN"
    assert visible_text(seq) == "value is 12 "
    seq.status = SequenceStatus.FINISHED
    assert visible_text(seq) == "value is 12 EN"
