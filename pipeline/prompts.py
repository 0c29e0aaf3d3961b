"""Prompts of the intent and generation stages, built to share their leading tokens.

Both prompts are one chat: the system text, then a user turn that starts with the question
and ends with the stage's own part. The shared head (everything up to and including the
question) is tokenized on its own and the tail after it, so both stages send exactly the
same leading token ids: the generation request finds the intent request's KV blocks in the
prefix cache, and the system text's blocks are shared by every request.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

LETTERS = string.ascii_uppercase


def system_text(system_prompt: str, labels: Sequence[Any]) -> str:
    kinds = "\n".join(f"{LETTERS[i]}) {label.description}" for i, label in enumerate(labels))
    return f"{system_prompt}\nMessages are of {len(labels)} kinds:\n{kinds}"


def intent_tail(labels: Sequence[Any]) -> str:
    letters = ", ".join(LETTERS[: len(labels) - 1]) + f" or {LETTERS[len(labels) - 1]}"
    return f"Kind ({letters}):"


def passages_tail(passages: Sequence[Any], instruction: str, max_chars: int) -> str:
    lines = ["Passages:"]
    for i, p in enumerate(passages, 1):
        text = " ".join(p.text.split())
        if len(text) > max_chars:
            text = text[:max_chars].rsplit(" ", 1)[0] + " ..."
        lines.append(f"[{i}] {text}")
    if len(passages) == 0:
        lines.append("(none found)")
    return "\n".join(lines) + "\n\n" + instruction


def question_head(question: str) -> str:
    return f"Question: {' '.join(question.split())}\n\n"


def build_prompt_ids(tokenizer: Any, system: str, question: str, tail: str) -> list[int]:
    """Chat-template token ids whose head (system + question) is tokenized on its own."""
    head = question_head(question)
    text = tokenizer.apply_chat_template(
        [{"role": "system", "content": system}, {"role": "user", "content": head + tail}],
        add_generation_prompt=True)
    cut = text.index(head) + len(head)
    return (tokenizer.encode(text[:cut], add_special_tokens=False)
            + tokenizer.encode(text[cut:], add_special_tokens=False))


def option_token_ids(tokenizer: Any, n: int) -> list[int]:
    """The first token of each option letter; letters are single, distinct tokens."""
    ids = [tokenizer.encode(LETTERS[i], add_special_tokens=False)[0] for i in range(n)]
    if len(set(ids)) != n:
        raise ValueError("the option letters do not map to distinct first tokens")
    return ids
