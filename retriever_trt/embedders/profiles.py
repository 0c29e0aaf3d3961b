"""Dynamic-shape optimization profiles and the batching that honours them.

A profile bounds (batch, sequence) for both inputs, `input_ids` and `attention_mask`,
as trtexec's `--minShapes/--optShapes/--maxShapes` do. Requests are sorted by length,
split into batches the profile allows and padded up to a sequence bucket (powers of two
between min and max), so an engine sees a few shapes again and again; a runtime that takes
any shape (ONNX Runtime on CPU or CUDA) pads a batch only to its longest text instead
(`seq_multiple`). Padding never changes an embedding: padded positions have mask 0 and the
graph pools over the mask.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

INPUTS = ("input_ids", "attention_mask")
SPEC_FORM = "input_ids:BxS,attention_mask:BxS (e.g. input_ids:1x16,attention_mask:1x16)"
_ITEM = re.compile(r"^\s*([A-Za-z_][\w.:/-]*?)\s*:\s*(\d+(?:x\d+)*)\s*$")
log = logging.getLogger(__name__)


class ShapeSpecError(ValueError):
    """A shape spec or profile is malformed or inconsistent."""


class SequenceTooLongError(ValueError):
    """A text is longer than the profile's maximum sequence and overflow='error'."""


@dataclass(frozen=True, order=True)
class Shape:
    batch: int
    seq: int

    def __str__(self) -> str:
        return f"{self.batch}x{self.seq}"

    def within(self, lo: Shape, hi: Shape) -> bool:
        return lo.batch <= self.batch <= hi.batch and lo.seq <= self.seq <= hi.seq


@dataclass(frozen=True)
class Profile:
    min: Shape
    opt: Shape
    max: Shape

    def __post_init__(self) -> None:
        if min(self.min.batch, self.min.seq) < 1:
            raise ShapeSpecError(f"profile dimensions must be ≥ 1, got min {self.min}")
        if not (self.min.batch <= self.max.batch and self.min.seq <= self.max.seq):
            raise ShapeSpecError(f"min shape {self.min} exceeds max shape {self.max}")
        if not self.opt.within(self.min, self.max):
            raise ShapeSpecError(f"opt shape {self.opt} is outside min {self.min}..max {self.max}")

    def allows(self, shape: Shape) -> bool:
        return shape.within(self.min, self.max)

    def seq_buckets(self) -> list[int]:
        """min, the powers of two strictly between min and max, then max."""
        buckets = [self.min.seq]
        p = 1
        while p < self.max.seq:
            if p > self.min.seq:
                buckets.append(p)
            p *= 2
        if self.max.seq != buckets[-1]:
            buckets.append(self.max.seq)
        return buckets

    def bucket(self, seq: int) -> int:
        """The smallest bucket ≥ `seq` (callers truncate to max.seq first)."""
        return next(b for b in self.seq_buckets() if b >= min(seq, self.max.seq))

    def spec(self, which: str) -> str:
        shape = getattr(self, which)
        return ",".join(f"{name}:{shape}" for name in INPUTS)

    @classmethod
    def uniform(cls, shape: Shape) -> Profile:
        return cls(shape, shape, shape)


# ONNX Runtime takes any shape; this default keeps its batches like a TensorRT engine's.
DEFAULT_PROFILE = Profile(Shape(1, 1), Shape(32, 128), Shape(64, 512))


def clamp_profile(profile: Profile, max_seq: int) -> Profile:
    """`profile` with sequences capped at the model's limit (its position table)."""
    if profile.max.seq <= max_seq or profile.min.seq > max_seq:
        return profile
    cap = max_seq
    return Profile(profile.min, Shape(profile.opt.batch, min(profile.opt.seq, cap)),
                   Shape(profile.max.batch, cap))


def parse_shape_spec(spec: str, flag: str = "--shapes") -> Shape:
    """`input_ids:1x16,attention_mask:1x16` → Shape(1, 16); both inputs must agree."""
    shapes: dict[str, tuple[int, ...]] = {}
    for item in spec.split(","):
        m = _ITEM.match(item)
        if not m:
            raise ShapeSpecError(f"{flag}: malformed item {item!r}; expected {SPEC_FORM}")
        name, dims = m.group(1), tuple(int(d) for d in m.group(2).split("x"))
        if name not in INPUTS:
            raise ShapeSpecError(f"{flag}: unknown input {name!r}; inputs are {', '.join(INPUTS)}")
        if len(dims) != 2:
            raise ShapeSpecError(f"{flag}: {name} needs 2 dims (batch x sequence); got {spec!r}")
        if min(dims) < 1:
            raise ShapeSpecError(f"{flag}: dimensions must be ≥ 1 in {item!r}")
        shapes[name] = dims
    if len(set(shapes.values())) != 1:
        raise ShapeSpecError(f"{flag}: input_ids and attention_mask must have the same shape")
    batch, seq = next(iter(shapes.values()))
    return Shape(batch, seq)


def profile_from_specs(min_spec: str | None, opt_spec: str | None,
                       max_spec: str | None) -> Profile | None:
    """A profile from trtexec-style specs; any one missing takes the others' values."""
    given = {k: parse_shape_spec(v, f"--{k}Shapes")
             for k, v in (("min", min_spec), ("opt", opt_spec), ("max", max_spec)) if v}
    if not given:
        return None
    lo = given.get("min", given.get("opt", given.get("max")))
    hi = given.get("max", given.get("opt", lo))
    opt = given.get("opt", hi)
    if not (lo.batch <= hi.batch and lo.seq <= hi.seq):
        raise ShapeSpecError(f"--minShapes {lo} exceeds --maxShapes {hi}; expected min ≤ max")
    if not opt.within(lo, hi):
        raise ShapeSpecError(f"--optShapes {opt} is outside --minShapes {lo}..--maxShapes {hi}")
    return Profile(lo, opt, hi)


@dataclass
class Batch:
    rows: np.ndarray  # indices of the caller's texts, in the order of the batch rows
    input_ids: np.ndarray  # (batch, seq) int64, batch ≥ len(rows) when padded up to min
    attention_mask: np.ndarray
    profile: int  # which profile of the list was chosen


def _pick(profiles: Sequence[Profile], length: int) -> int:
    """The profile with the smallest max sequence that fits `length`, else the longest."""
    fitting = [i for i, p in enumerate(profiles) if p.max.seq >= max(length, 1)]
    if not fitting:
        return max(range(len(profiles)), key=lambda i: profiles[i].max.seq)
    return min(fitting, key=lambda i: (profiles[i].max.seq, -profiles[i].max.batch))


def batch_seq(profile: Profile, longest: int, seq_multiple: int | None) -> int:
    """The sequence a batch whose longest text has `longest` tokens is padded to: the
    profile's bucket, or with `seq_multiple` that length rounded up to a multiple of it,
    within the profile's bounds."""
    longest = min(longest, profile.max.seq)
    if seq_multiple is None:
        return profile.bucket(longest)
    rounded = -(-longest // seq_multiple) * seq_multiple
    return max(profile.min.seq, min(rounded, profile.max.seq))


def make_batches(token_ids: Sequence[Sequence[int]], profiles: Sequence[Profile],
                 overflow: str = "truncate", max_batch: int | None = None,
                 seq_multiple: int | None = None) -> Iterator[Batch]:
    """Sort, split, pad and (if allowed) truncate tokenized texts into profile shapes.

    `seq_multiple`: None pads each batch to a sequence bucket (the few shapes a TensorRT
    engine is tuned for); a runtime that takes any shape pads only to the batch's longest
    text rounded up to this multiple."""
    if overflow not in ("truncate", "error"):
        raise ValueError("overflow must be 'truncate' or 'error'")
    longest = max(p.max.seq for p in profiles)
    lengths = np.array([len(t) for t in token_ids])
    too_long = np.flatnonzero(lengths > longest)
    if too_long.size:
        msg = (f"{too_long.size} text(s) exceed the profile's max sequence {longest} tokens "
               f"(longest {lengths.max()})")
        if overflow == "error":
            raise SequenceTooLongError(msg)
        warnings.warn(msg + "; truncated", stacklevel=3)
    order = np.argsort(lengths, kind="stable")
    i = 0
    while i < len(order):
        pi = _pick(profiles, int(lengths[order[i]]))
        prof = profiles[pi]
        cap = min(prof.max.batch, max_batch or prof.max.batch)
        j = i
        while j < len(order) and j - i < cap and min(lengths[order[j]], longest) <= prof.max.seq:
            j += 1
        rows = order[i:j]
        seq = batch_seq(prof, int(lengths[rows].max()), seq_multiple)
        n = max(len(rows), prof.min.batch)
        ids = np.zeros((n, seq), dtype=np.int64)
        mask = np.zeros((n, seq), dtype=np.int64)
        for r, src in enumerate(rows):
            k = min(len(token_ids[src]), seq)
            ids[r, :k] = token_ids[src][:k]
            mask[r, :k] = 1
        # Rows added to reach min batch repeat the first one: a real input, discarded later.
        ids[len(rows):], mask[len(rows):] = ids[0], mask[0]
        yield Batch(rows, ids, mask, pi)
        i = j
