"""The engine's tokenizer: `tokenizers` plus the chat template, without importing transformers.

transformers takes seconds to import and pulls in much more than the engine needs; this class
reproduces exactly what `AutoTokenizer` does for the calls the engine makes (encode, decode,
apply_chat_template), reading the same `tokenizer.json` and `tokenizer_config.json`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer as _HFTokenizer

_SPECIAL_KEYS = ("bos_token", "eos_token", "unk_token", "pad_token")


def _token_text(value: Any) -> str | None:
    # tokenizer_config may store a special token as a plain string or as an AddedToken dict.
    if isinstance(value, Mapping):
        return value.get("content")
    return value


@lru_cache(maxsize=16)
def _compile_template(source: str) -> Any:
    """Compile a chat template in the environment transformers uses, so output is identical."""
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x: Any, ensure_ascii: bool = False, indent: int | None = None,
               separators: Any = None, sort_keys: bool = False) -> str:
        # Jinja's own tojson HTML-escapes; templates expect plain JSON as in transformers.
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def strftime_now(fmt: str) -> str:
        return datetime.now().strftime(fmt)

    # Templates from model files are untrusted code: sandboxed, immutable environment.
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env.from_string(source)


class Tokenizer:
    """Encode/decode and chat formatting for one Hugging Face model folder."""

    def __init__(self, tokenizer: _HFTokenizer, config: Mapping[str, Any],
                 generation_config: Mapping[str, Any] | None = None) -> None:
        self._tok = tokenizer
        self.config = dict(config)
        self.generation_config = dict(generation_config or {})
        self.chat_template: str | None = self._pick_template(config.get("chat_template"))
        self.add_bos_token = bool(config.get("add_bos_token", False))
        self.special_tokens = {k: _token_text(config.get(k)) for k in _SPECIAL_KEYS}
        self._ids = {k: self._id_of(v) for k, v in self.special_tokens.items()}
        # tokenizer.json may already add BOS in its post-processor; only add it ourselves if not.
        self._post_adds_bos = self._post_processor_adds_bos()

    @classmethod
    def from_pretrained(cls, folder: str | os.PathLike[str]) -> Tokenizer:
        folder = Path(folder)
        path = folder / "tokenizer.json"
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} not found: a model folder needs tokenizer.json "
                "(prepare GGUF files with llm_engine.utils.model_path.resolve_model)")
        config = _read_json(folder / "tokenizer_config.json")
        gen = _read_json(folder / "generation_config.json")
        template_file = folder / "chat_template.jinja"
        if "chat_template" not in config and template_file.is_file():
            config["chat_template"] = template_file.read_text(encoding="utf-8")
        return cls(_HFTokenizer.from_file(str(path)), config, gen)

    @staticmethod
    def _pick_template(value: Any) -> str | None:
        # Some configs hold a list of named templates; "default" is what transformers picks.
        if isinstance(value, list):
            named = {t["name"]: t["template"] for t in value}
            return named.get("default")
        return value

    def _id_of(self, text: str | None) -> int | None:
        return None if text is None else self._tok.token_to_id(text)

    def _post_processor_adds_bos(self) -> bool:
        bos = self._ids["bos_token"]
        if bos is None:
            return False
        return self._tok.encode("a", add_special_tokens=True).ids[:1] == [bos]

    # --- encode / decode -------------------------------------------------------------------
    def encode(self, text: str, add_special_tokens: bool = True,
               split_special_tokens: bool = False) -> list[int]:
        """Token ids of `text`. `split_special_tokens=True` (transformers' name) encodes text
        such as "<|im_start|>" as plain text, not as the control token: for strings a user or
        a document wrote, which must not be able to open a chat turn."""
        tok = self._plain_tok if split_special_tokens else self._tok
        ids = tok.encode(text, add_special_tokens=add_special_tokens).ids
        bos = self._ids["bos_token"]
        if (add_special_tokens and self.add_bos_token and not self._post_adds_bos
                and bos is not None and ids[:1] != [bos]):
            ids = [bos, *ids]
        return ids

    @cached_property
    def _plain_tok(self) -> _HFTokenizer:
        # A copy, so that the shared tokenizer's setting never changes under another caller.
        tok = _HFTokenizer.from_str(self._tok.to_str())
        tok.encode_special_tokens = True
        return tok

    def encode_batch(self, texts: Sequence[str],
                     add_special_tokens: bool = True) -> list[list[int]]:
        return [self.encode(t, add_special_tokens) for t in texts]

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        return self._tok.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def convert_ids_to_tokens(self, ids: Sequence[int]) -> list[str | None]:
        return [self._tok.id_to_token(i) for i in ids]

    def __len__(self) -> int:
        return self._tok.get_vocab_size(with_added_tokens=True)

    # --- chat ------------------------------------------------------------------------------
    def apply_chat_template(self, messages: Sequence[Mapping[str, Any]],
                            add_generation_prompt: bool = True, tokenize: bool = False,
                            **kwargs: Any) -> str | list[int]:
        """Render `messages` with the model's template (as transformers does); ids if tokenize."""
        if self.chat_template is None:
            raise ValueError("this tokenizer has no chat_template; pass a plain prompt instead")
        if not messages:
            raise ValueError("cannot apply a chat template to an empty conversation")
        # Drop None-valued keys as transformers does; templates test `is defined`.
        chat = [{k: v for k, v in m.items() if v is not None} for m in messages]
        variables = {k: v for k, v in self.special_tokens.items() if v is not None}
        variables.update(kwargs)
        variables.setdefault("tools", None)
        variables.setdefault("documents", None)
        text = _compile_template(self.chat_template).render(
            messages=chat, add_generation_prompt=add_generation_prompt, **variables)
        if tokenize:
            # The template already writes BOS where the model wants it.
            return self.encode(text, add_special_tokens=False)
        return text

    # --- ids -------------------------------------------------------------------------------
    @property
    def bos_token_id(self) -> int | None:
        return self._ids["bos_token"]

    @property
    def eos_token_id(self) -> int | None:
        return self._ids["eos_token"]

    @property
    def pad_token_id(self) -> int | None:
        return self._ids["pad_token"]

    @property
    def unk_token_id(self) -> int | None:
        return self._ids["unk_token"]

    @property
    def vocab_size(self) -> int:
        # transformers' vocab_size excludes added tokens; len(tokenizer) includes them.
        return self._tok.get_vocab_size(with_added_tokens=False)

    @property
    def all_special_ids(self) -> list[int]:
        # Same set and order as transformers: the named specials, then the configured extras.
        extra = (self.config.get("additional_special_tokens")
                 or self.config.get("extra_special_tokens") or [])
        ids = [i for i in self._ids.values() if i is not None]
        ids += [self._id_of(_token_text(t)) for t in extra]
        return [i for i in dict.fromkeys(ids) if i is not None]

    @property
    def stop_token_ids(self) -> list[int]:
        """Ids that end generation: EOS, then generation_config's eos ids (e.g. <|im_end|>)."""
        ids: list[int] = [] if self.eos_token_id is None else [self.eos_token_id]
        gen_eos = self.generation_config.get("eos_token_id")
        if isinstance(gen_eos, int):
            gen_eos = [gen_eos]
        ids += [int(i) for i in gen_eos or []]
        return list(dict.fromkeys(ids))


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))
