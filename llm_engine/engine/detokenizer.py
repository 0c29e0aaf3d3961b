"""Incremental detokenization and stop strings."""

from __future__ import annotations

from llm_engine.sequence import Sequence
from llm_engine.tokenizer import Tokenizer

# Decoding a token alone can lose the leading space a SentencePiece tokenizer gives it;
# a few tokens of context before it keep the text exact.
_CONTEXT_TOKENS = 5


class Detokenizer:
    """Turns each sequence's new tokens into new text, never splitting a character.

    Per sequence it keeps two offsets into `token_ids`: text up to `read_offset` has been
    emitted; decoding starts at `prefix_offset` so the tokenizer sees some context.
    """

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self._offsets: dict[str, tuple[int, int]] = {}

    def start(self, seq: Sequence) -> None:
        n = seq.num_prompt_tokens
        self._offsets[seq.request_id] = (max(n - _CONTEXT_TOKENS, 0), n)

    def forget(self, seq: Sequence) -> None:
        self._offsets.pop(seq.request_id, None)

    def step(self, seq: Sequence) -> str:
        """Append the text of newly generated tokens to `seq.output_text`; return it."""
        prefix, read = self._offsets[seq.request_id]
        skip = seq.params.skip_special_tokens
        before = self.tokenizer.decode(seq.token_ids[prefix:read], skip_special_tokens=skip)
        after = self.tokenizer.decode(seq.token_ids[prefix:], skip_special_tokens=skip)
        # A trailing U+FFFD means a multi-byte character is still incomplete: wait for it.
        if len(after) <= len(before) or after.endswith("\ufffd"):
            return ""
        delta = after[len(before) :]
        self._offsets[seq.request_id] = (read, seq.num_tokens)
        seq.output_text += delta
        return delta


def find_stop_string(seq: Sequence, new_chars: int) -> str | None:
    """Cut `seq.output_text` at the first stop string that the last `new_chars` completed."""
    stops = seq.params.stop_strings
    if not stops or not new_chars:
        return None
    text = seq.output_text
    longest = max(len(s) for s in stops)
    search_from = max(len(text) - new_chars - longest + 1, 0)
    best: tuple[int, str] | None = None
    for stop in stops:
        idx = text.find(stop, search_from)
        if idx != -1 and (best is None or idx < best[0]):
            best = (idx, stop)
    if best is None:
        return None
    idx, stop = best
    seq.output_text = text[: idx + len(stop)] if seq.params.include_stop_str_in_output else text[:idx]
    return stop


def visible_text(seq: Sequence) -> str:
    """What a stream may show: while running, hold back a possible stop string's start."""
    stops = seq.params.stop_strings
    if seq.is_finished or not stops:
        return seq.output_text
    hold = max(len(s) for s in stops) - 1
    return seq.output_text[: len(seq.output_text) - hold] if hold else seq.output_text
