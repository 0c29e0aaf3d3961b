"""Counters of speculative decoding, with vLLM's meanings."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SpecDecodeStats:
    num_drafts: int = 0  # verifications: sequence-steps that carried drafts
    num_draft_tokens: int = 0  # draft tokens verified
    num_accepted_tokens: int = 0  # of which accepted (bonus and correction tokens not counted)

    def record(self, drafted: int, accepted: int) -> None:
        self.num_drafts += 1
        self.num_draft_tokens += drafted
        self.num_accepted_tokens += accepted

