"""Prompts of the intent and generation stages, built to share their leading tokens.

Both prompts are one chat: the system text, then a user turn that starts with the question
and ends with the stage's own part. The shared head (everything up to and including the
question) is tokenized on its own and the tail after it, so both stages send exactly the
same leading token ids: the generation request finds the intent request's KV blocks in the
prefix cache, and the system text's blocks are shared by every request.

The generation tail (`answer_tail`) is the passages, then the instruction, which repeats the
question next to where the answer starts: a 135M model answers the question it read last
(benchmarks/prose_eval.py). The repeat is in the tail, so the shared head and
its cached blocks stay as they were; it costs the question's tokens once more in prefill.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

LETTERS = string.ascii_uppercase
# A message's place in the rendered template: private-use characters no template writes.
_SLOT = "\ue000{}\ue000"


def system_text(system_prompt: str, labels: Sequence[Any]) -> str:
    kinds = "\n".join(f"{LETTERS[i]}) {label.description}" for i, label in enumerate(labels))
    return f"{system_prompt}\nMessages are of {len(labels)} kinds:\n{kinds}"


def intent_tail(labels: Sequence[Any]) -> str:
    letters = ", ".join(LETTERS[: len(labels) - 1]) + f" or {LETTERS[len(labels) - 1]}"
    return f"Kind ({letters}):"


def clip(text: str, max_chars: int) -> str:
    return text if len(text) <= max_chars else text[:max_chars].rsplit(" ", 1)[0] + " ..."


def passage_text(text: str, max_chars: int) -> str:
    """A passage as the model reads it: a table keeps one row a line, prose one line."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    if not any(" | " in line for line in lines):
        return clip(" ".join(filter(None, lines)), max_chars)
    return clip("\n".join(filter(None, lines)), max_chars)


def answer_tail(passages: Sequence[Any], instruction: str, max_chars: int, question: str) -> str:
    """The passages as plain text, one blank line apart, then the instruction.

    No numbers or markers: a small model copies a numbered list back ("[1] 2019 | 2018 ...")
    instead of answering from it. Which passages were shown is the answer's `sources`.
    "{question}" in the instruction is the question again, next to where the answer starts.
    """
    texts = [passage_text(p.text, max_chars) for p in passages] or ["(no passages found)"]
    ask = instruction.replace("{question}", " ".join(question.split()))
    return "\n\n".join(texts) + "\n\n" + ask


def question_head(question: str) -> str:
    return f"Question: {' '.join(question.split())}\n\n"


def chat_ids(tokenizer: Any, messages: Sequence[tuple[str, Sequence[str]]]) -> list[int]:
    """Token ids of a chat, (role, content pieces) per message, with the assistant turn open.

    Only the template's own markup becomes control tokens; message content is encoded as
    plain text, so "<|im_end|>\n<|im_start|>system" written in a question, a passage or a
    message stays text and cannot open a turn of another role. The template is rendered
    with a placeholder per message, so that content is never searched for in the markup.
    Each piece is encoded on its own (a shared head keeps the same ids in every prompt).
    """
    slots = [_SLOT.format(i) for i in range(len(messages))]
    text = tokenizer.apply_chat_template(
        [{"role": role, "content": slot} for (role, _), slot in zip(messages, slots, strict=True)],
        add_generation_prompt=True)
    ids: list[int] = []
    pos = 0
    for (_, pieces), slot in zip(messages, slots, strict=True):
        at = text.find(slot, pos)
        if at < 0:
            raise ValueError("the model's chat template does not write message content "
                             "verbatim, so it cannot be kept apart from the markup")
        ids += tokenizer.encode(text[pos:at], add_special_tokens=False)
        for piece in pieces:
            ids += tokenizer.encode(piece, add_special_tokens=False, split_special_tokens=True)
        pos = at + len(slot)
    return ids + tokenizer.encode(text[pos:], add_special_tokens=False)


def build_prompt_ids(tokenizer: Any, system: str, question: str, tail: str) -> list[int]:
    """The stage's prompt: the head (system + question) is tokenized apart from the tail."""
    return chat_ids(tokenizer, [("system", [system]), ("user", [question_head(question), tail])])


def option_token_ids(tokenizer: Any, n: int) -> list[int]:
    """The first token of each option letter; letters are single, distinct tokens."""
    ids = [tokenizer.encode(LETTERS[i], add_special_tokens=False)[0] for i in range(n)]
    if len(set(ids)) != n:
        raise ValueError("the option letters do not map to distinct first tokens")
    return ids
