"""Where the intent stage sends a question: policy, apart from the scoring in `stages.py`.

`lead` = the best replying label's calibrated log-prob (small talk, out of scope) minus the
best retrieving label's (finance). A confident decision is one `margin` or more either way:
- a question with a finance cue (finance_cues.py: a figure, a year, a currency or percent
  sign, finance or reporting vocabulary) retrieves unless lead >= margin;
- a question without one gets its label's reply unless lead <= -margin: then it retrieves.
Between the two the lexical prior decides, since refusing a finance question costs the
user their answer while a question about nothing in the reports only gets a polite reply.
The default margin (settings.intent_margin) is above the one that refuses the fewest finance
questions of half a of TAT-QA dev on each CPU kind measured (benchmarks/intent_eval.py
--choose-margin; half b reports it held out): the kernels' numerics move that edge.
With `use_cues=False` the margin alone decides (lead >= margin sends away).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pipeline.rag.finance_cues import has_finance_cue


@dataclass(frozen=True)
class RoutingPolicy:
    retrieve: frozenset[str]  # labels whose questions go on to retrieval
    margin: float = 0.0
    use_cues: bool = True

    def __post_init__(self) -> None:
        if not self.retrieve:
            raise ValueError("RoutingPolicy: at least one label must retrieve")
        if self.margin < 0:
            raise ValueError(f"RoutingPolicy: margin must be >= 0, got {self.margin}")

    @classmethod
    def for_labels(cls, labels: Iterable[object], margin: float,
                   use_cues: bool = True) -> RoutingPolicy:
        """Labels with `reply is None` retrieve; the others answer with their reply."""
        return cls(frozenset(lab.name for lab in labels if lab.reply is None), margin, use_cues)

    def lead(self, scores: Mapping[str, float]) -> float:
        """How far the best replying label is ahead of the best retrieving one (-inf: none)."""
        keep = max(v for k, v in scores.items() if k in self.retrieve)
        away = [v for k, v in scores.items() if k not in self.retrieve]
        return max(away) - keep if away else float("-inf")

    def sends_away(self, scores: Mapping[str, float], question: str) -> bool:
        lead = self.lead(scores)
        if lead == float("-inf"):
            return False
        if not self.use_cues or has_finance_cue(question):
            return lead > 0 and lead >= self.margin
        return lead > -self.margin

    def decide(self, scores: Mapping[str, float], question: str) -> str:
        """The label the question is routed by: the best of the side it is sent to."""
        away = self.sends_away(scores, question)
        return max((k for k in scores if (k in self.retrieve) != away), key=scores.__getitem__)
