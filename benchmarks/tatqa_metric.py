"""TAT-QA's official answer metric: exact match and numeracy-aware F1.

A re-implementation of the rules of TAT-QA's `tatqa_metric.py` / `tatqa_utils.py`
(NExTplusplus/TAT-QA), kept behaviour-for-behaviour so that our figures compare with the
published ones:

- every answer (gold and predicted) becomes ONE string: its spans sorted, each span that is a
  number rewritten as `'%.4f' % value` where value = round(number, 2) * scale (scale words:
  thousand, million, billion, percent = 0.01); a span that is not a number gets its scale word
  appended; a number written with `%` is divided by 100 and not rounded first;
- a lone unscaled number prediction is also tried unrounded (so `0.2342` matches a gold
  `23.42` percent);
- strings are normalised token by token: lower case, punctuation removed (unless the token is a
  number), numbers canonicalised (`(1200)` -> `-1200`, `5%` -> `0.05`, `3 million` -> 3e6; as
  officially, `(1,200)` stays positive: the parenthesis rule ignores a separator),
  articles dropped;
- exact match compares the normalised strings; F1 is the bag-of-tokens F1 (DROP's), rounded to
  two decimals; for arithmetic and count questions F1 is set to the exact match.

`score(question, prediction, pred_scale)` scores one TAT-QA question dict (with `answer`,
`answer_type`, `scale`); `get_metrics(pred, gold)` is DROP's pair metric.
"""

from __future__ import annotations

import itertools
import math
import re
import string
from collections.abc import Sequence
from typing import NamedTuple

SCALES = ("", "thousand", "million", "billion", "percent")

_NUMBER = re.compile(r"([+-]?\d+(\.\d+)?)|([+-]?\.\d+)")
_NOT_IN_NUMBER = set("'\"\\$€£¥%(),[]")
_PARENTHESISED = re.compile(r"(\([\d.\s]+\))")
_PERCENTAGE = re.compile(r"([\d.\s]+%)")
_NUMBER_WITH_WORD = re.compile(r"([\d.]+\s?[a-zA-Z]+)")
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = set(string.punctuation)


def scale_to_num(scale: str) -> float:
    """Multiplier of a scale word; the first of these words found in `scale` wins."""
    scale = scale.lower()
    for word, value in (("hundred", 100), ("thousand", 1000), ("million", 1_000_000),
                        ("billion", 1_000_000_000), ("percent", 0.01)):
        if word in scale:
            return value
    return 1


def _clean_num(text: str) -> str:
    return "".join(ch for ch in str(text) if ch not in _NOT_IN_NUMBER)


def _first_number(text: str) -> int | float | None:
    match = _NUMBER.search(_clean_num(text))
    if match is None or not match.group(1):
        # The official code takes only the first alternative (signed, with integer part).
        return None
    num = match.group(1)
    return float(num) if "." in num else int(num)


def is_number(text: str) -> bool:
    """True when the first word is a number and a second word, if any, is a scale word."""
    words = " ".join(_clean_num(w) for w in text.split()).split()
    if not words:
        return False
    try:
        num = float(words[0])
    except ValueError:
        return False
    if math.isnan(num):
        return False
    return len(words) < 2 or scale_to_num(words[1]) != 1


def _word_scale(text: str) -> float:
    match = _NUMBER_WITH_WORD.search(text)
    return scale_to_num(match.group(0).lower()) if match else 1


def to_number(text: str) -> int | float | None:
    """The value a number string denotes: sign from parentheses, % as /100, scale words applied."""
    num = _first_number(text)
    if num is None:
        return None
    sign = -1 if _PARENTHESISED.findall(text.strip()) else 1
    percent = 0.01 if _PERCENTAGE.findall(text.strip()) else 1
    return round(num * _word_scale(text) * sign * percent, 4)


def _normalize_token(token: str) -> str:
    token = token.lower()
    if not is_number(token):
        token = "".join(ch for ch in token if ch not in _PUNCTUATION)
    if is_number(token):
        token = str(to_number(token))
    return " ".join(_ARTICLES.sub(" ", token).split())


def normalize_answer(text: str) -> str:
    """Lower case, punctuation and articles removed, numbers canonical, single spaces."""
    parts = [_normalize_token(token) for token in text.split(" ")]
    return " ".join(part for part in parts if part.strip()).strip()


def _bag_f1(predicted: set[str], gold: set[str]) -> float:
    common = len(gold & predicted)
    precision = common / len(predicted) if predicted else 1.0
    recall = common / len(gold) if gold else 1.0
    if precision == 0.0 and recall == 0.0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def _aligned_f1(predicted: list[set[str]], gold: list[set[str]]) -> float:
    """Mean F1 over the best one-to-one pairing of predicted and gold bags (DROP)."""
    if not predicted or not gold:
        return 0.0
    if len(predicted) >= len(gold):
        totals = (sum(_bag_f1(predicted[p], g) for p, g in zip(perm, gold, strict=True))
                  for perm in itertools.permutations(range(len(predicted)), len(gold)))
    else:
        totals = (sum(_bag_f1(p, gold[g]) for p, g in zip(predicted, perm, strict=True))
                  for perm in itertools.permutations(range(len(gold)), len(predicted)))
    return max(totals) / max(len(gold), len(predicted))


def get_metrics(predicted: str | Sequence[str], gold: str | Sequence[str]) -> tuple[float, float]:
    """DROP's exact match and F1 (F1 rounded to two decimals) of a prediction against one gold."""
    pred_spans = [predicted] if isinstance(predicted, str) else list(predicted)
    gold_spans = [gold] if isinstance(gold, str) else list(gold)
    pred_norm = [normalize_answer(s) for s in pred_spans]
    gold_norm = [normalize_answer(s) for s in gold_spans]
    exact = float(set(pred_norm) == set(gold_norm) and len(pred_norm) == len(gold_norm))
    f1 = _aligned_f1([set(s.split()) for s in pred_norm], [set(s.split()) for s in gold_norm])
    return exact, round(f1, 2)


def answer_string(answers: Sequence[object], scale: str) -> str:
    """One comparable string for an answer: spans sorted, numbers scaled to '%.4f'."""
    out = []
    for answer in sorted(str(a) for a in answers):
        value = to_number(answer) if is_number(answer) else None
        if value is None:
            out.append(f"{answer} {scale}" if scale else answer)
        elif "%" in answer:
            out.append(f"{value:.4f}")
        else:
            out.append(f"{round(value, 2) * scale_to_num(scale):.4f}")
    return " ".join(out)


def gold_answers(question: dict) -> list[str]:
    """The gold spans of a TAT-QA question, as the official metric reads them."""
    answer, kind = question["answer"], question["answer_type"]
    if kind in ("span", "multi-span"):
        return [str(a) for a in answer]
    if kind == "count":
        return [str(int(answer))]
    return [str(answer)]


class Score(NamedTuple):
    em: float
    f1: float


def score(question: dict, prediction: str | float | Sequence[str] | None, pred_scale: str = "") -> Score:
    """Exact match and F1 of one prediction (a string or list of spans) on a TAT-QA question."""
    if not prediction:
        return Score(0.0, 0.0)
    gold = gold_answers(question)
    if not gold:
        return Score(0.0, 0.0)
    pred_scale = pred_scale or ""
    preds = [str(p) for p in prediction] if isinstance(prediction, list | tuple) else [str(prediction)]
    candidates = [answer_string(preds, pred_scale)]
    # The official metric also tries a lone unscaled number as is (0.2342 vs 23.42 percent).
    if len(preds) == 1 and not pred_scale and "%" not in preds[0] and is_number(preds[0]):
        value = to_number(preds[0])
        if value is not None:
            candidates.append(f"{value:.4f}")
    gold_string = answer_string(gold, question.get("scale", ""))
    em, f1 = max(get_metrics(c, gold_string) for c in candidates)
    if question["answer_type"] in ("arithmetic", "count"):
        f1 = em
    return Score(em, f1)
