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
from llm_engine.schema_support import unenforced

INSTALL = "structured output needs xgrammar: pip install 'finrag[structured]'"
COMPILE_THREADS = 1


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

    def kind(self) -> str:
        """The constraint's field name (json, regex, choice, grammar or json_object)."""
        return next(k for k in ("json", "regex", "choice", "grammar", "json_object")
                    if getattr(self, k) not in (None, False))

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
        # GrammarService keeps the cache, bounded; xgrammar's own would grow without bound.
        # One thread a compile: a grammar that compiles for a minute (it cannot be stopped)
        # then holds one core, not all of them, and the engine keeps the others.
        self.compiler = xgr.GrammarCompiler(info, max_threads=COMPILE_THREADS,
                                            cache_enabled=False)

    def compile(self, params: StructuredOutputsParams) -> Any:
        """`params`' grammar compiled for this vocabulary (an xgrammar CompiledGrammar);
        InvalidRequestError naming the field when it cannot be, or when the schema holds a
        keyword the grammar would not enforce. Slow for some grammars: GrammarService runs
        it off the engine thread, bounded in time."""
        kind = params.kind()
        if params.json is not None:
            problem = unenforced(params.json, self.regex_problem)
            if problem is not None:
                raise InvalidRequestError(f"structured_outputs.json: {problem}")
        try:
            if params.json is not None:
                return self.compiler.compile_json_schema(json.dumps(params.json),
                                                         any_whitespace=False)
            if params.json_object:
                return self.compiler.compile_builtin_json_grammar()
            if params.regex is not None:
                return self.compiler.compile_regex(params.regex)
            if params.choice is not None:
                return self.compiler.compile_regex(
                    "|".join(f"({re.escape(c)})" for c in params.choice))
            return self.compiler.compile_grammar(params.grammar)
        except (RuntimeError, ValueError, TypeError) as exc:
            raise InvalidRequestError(f"structured_outputs.{kind}: cannot be compiled "
                                      f"({_detail(exc)})") from None

    def regex_problem(self, pattern: str) -> str | None:
        """Why xgrammar cannot turn `pattern` into a grammar (None when it can): the same
        check a `regex` constraint gets, for a schema's `pattern`."""
        try:
            self.xgr.Grammar.from_regex(pattern)
        except (RuntimeError, ValueError, TypeError) as exc:
            return _detail(exc)
        return None

    def matcher(self, compiled: Any) -> Any:
        """A matcher for one sequence (an xgrammar GrammarMatcher)."""
        return self.xgr.GrammarMatcher(compiled)

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


def _detail(exc: BaseException) -> str:
    """xgrammar's message on one line, without the time and C++ source line it starts with."""
    return re.sub(r"^\[[\d:]+\] \S+:\d+: ", "", " ".join(str(exc).split()))[:300]
