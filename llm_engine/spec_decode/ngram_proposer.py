"""Prompt lookup: draft tokens copied from where the sequence's last tokens occurred before."""

from __future__ import annotations

import numpy as np

from llm_engine.spec_decode.config import SpeculativeConfig


class NgramProposer:
    """Finds the longest suffix n-gram (`prompt_lookup_max` down to `prompt_lookup_min`
    tokens) earlier in prompt + output and proposes the tokens that followed it.

    Of equally long matches the latest wins: in a RAG answer the text being copied is
    usually the passage the last tokens came from, and a phrase the answer already repeated
    predicts its next repetition better than the passage's first use of it.
    """

    def __init__(self, config: SpeculativeConfig) -> None:
        self.k = config.num_speculative_tokens
        self.max_n = config.prompt_lookup_max
        self.min_n = config.prompt_lookup_min

    def propose(self, token_ids: list[int], max_drafts: int | None = None) -> list[int]:
        """Up to min(k, max_drafts) draft tokens for the sequence `token_ids`; [] when its
        last `prompt_lookup_min` tokens occur nowhere before."""
        k = self.k if max_drafts is None else min(self.k, max_drafts)
        length = len(token_ids)
        if k <= 0 or length <= self.min_n:
            return []
        tokens = np.asarray(token_ids)
        # Candidate match ends: earlier positions holding the last token, followed by at
        # least one token. Each round keeps those whose match extends one token further back.
        ends = np.flatnonzero(tokens[: length - 1] == tokens[-1])
        best = ends if self.min_n == 1 else ends[:0]
        for m in range(1, min(self.max_n, length - 1)):
            ends = ends[ends >= m]
            ends = ends[tokens[ends - m] == tokens[length - 1 - m]]
            if not len(ends):
                break
            if m + 1 >= self.min_n:
                best = ends
        if not len(best):
            return []
        start = int(best[-1]) + 1
        return tokens[start : start + k].tolist()
