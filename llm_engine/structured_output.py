"""Structured output, as vLLM's `StructuredOutputsParams`: a JSON schema, any JSON object, a
regular expression, a choice among strings, or an EBNF grammar constrains what a request
may generate. xgrammar (the engine vLLM uses by default) compiles it against the model's
vocabulary; each step, a sequence's matcher masks the tokens its grammar does not allow
(`apply_masks`, in the sampler, with the batch running) and then accepts the sampled one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from llm_engine.engine.errors import InvalidRequestError

INSTALL = "structured output needs xgrammar: pip install 'finrag[structured]'"


@dataclass
class StructuredOutputsParams:
    """Exactly one of the constraints (vLLM's names)."""

    json: dict[str, Any] | str | None = None
    regex: str | None = None
    choice: list[str] | None = None
    grammar: str | None = None
    json_object: bool | None = None

    def __post_init__(self) -> None:
        given = [k for k in ("json", "regex", "choice", "grammar", "json_object")
                 if getattr(self, k) not in (None, False)]
        if len(given) != 1:
            raise InvalidRequestError("structured_outputs: give exactly one of json, regex, choice, "
                             f"grammar or json_object (got {given or 'none'})")
        if self.choice is not None and (not self.choice or not all(
                isinstance(c, str) and c for c in self.choice)):
            raise InvalidRequestError("structured_outputs.choice: a non-empty list of non-empty strings")
        if isinstance(self.json, str):
            try:
                self.json = json.loads(self.json)
            except ValueError as exc:
                raise InvalidRequestError(f"structured_outputs.json: not valid JSON ({exc})") from None

    def key(self) -> str:
        """What identifies the compiled grammar (the compiler caches by it)."""
        return json.dumps([self.json, self.regex, self.choice, self.grammar, self.json_object],
                          sort_keys=True)


class StructuredOutputManager:
    """Compiles constraints for one model's vocabulary and makes per-sequence matchers."""

    def __init__(self, model_dir: str | Path, vocab_size: int, stop_token_ids: list[int]) -> None:
        try:
            import xgrammar as xgr
        except ImportError as exc:
            raise ImportError(INSTALL) from exc
        from transformers import AutoTokenizer

        self.xgr = xgr
        tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
        self.vocab_size = vocab_size
        info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size,
                                                  stop_token_ids=stop_token_ids)
        self.compiler = xgr.GrammarCompiler(info, cache_enabled=True)

    def new_state(self, params: StructuredOutputsParams) -> Any:
        """A matcher for one sequence (an xgrammar GrammarMatcher)."""
        xgr = self.xgr
        try:
            if params.json is not None:
                compiled = self.compiler.compile_json_schema(json.dumps(params.json),
                                                             any_whitespace=False)
            elif params.json_object:
                compiled = self.compiler.compile_builtin_json_grammar()
            elif params.regex is not None:
                compiled = self.compiler.compile_regex(params.regex)
            elif params.choice is not None:
                compiled = self.compiler.compile_regex(
                    "|".join(f"({re.escape(c)})" for c in params.choice))
            else:
                compiled = self.compiler.compile_grammar(params.grammar)
        except (RuntimeError, ValueError, TypeError) as exc:
            kind = next(k for k in ("json", "regex", "choice", "grammar", "json_object")
                        if getattr(params, k) not in (None, False))
            # xgrammar prefixes its messages with a time and a C++ source line.
            detail = re.sub(r"^\[[\d:]+\] \S+:\d+: ", "", " ".join(str(exc).split()))
            raise InvalidRequestError(f"structured_outputs.{kind}: cannot be compiled "
                                      f"({detail[:300]})") from None
        return xgr.GrammarMatcher(compiled)

    def apply_masks(self, logits: torch.Tensor, matchers: list[Any]) -> None:
        """Mask, in place, each row's tokens that its grammar does not allow next."""
        rows = [i for i, m in enumerate(matchers) if m is not None and not m.is_terminated()]
        if not rows:
            return
        bitmask = self.xgr.allocate_token_bitmask(len(matchers), self.vocab_size)
        for i in rows:
            matchers[i].fill_next_token_bitmask(bitmask, i)
        self.xgr.apply_token_bitmask_inplace(logits, bitmask.to(logits.device),
                                             vocab_size=self.vocab_size, indices=rows)

    @staticmethod
    def accept(matcher: Any, token: int) -> bool:
        """Advance the matcher by the sampled token (one its mask allowed); True when the
        grammar is complete (the request may end)."""
        matcher.accept_token(token)
        return matcher.is_terminated()
