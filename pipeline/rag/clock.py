"""`Clock`: when a question's stages ended, and their timings as /ask reports them."""

from __future__ import annotations

from dataclasses import dataclass


def _ms(a: float, b: float) -> float:
    return round((b - a) * 1000, 3)


@dataclass
class Clock:
    """When (perf_counter) a question's stages ended; None: the stage did not run."""

    start: float
    intent: float = 0.0
    retrieved: float | None = None
    first_token: float | None = None

    def timings(self, end: float) -> dict[str, float | None]:
        """The stages' ms as /ask reports them: no token before the end of a stated
        answer (its whole text comes at once), so its ttft is its total."""
        retrieved = self.retrieved
        return {"intent_ms": _ms(self.start, self.intent),
                "retrieve_ms": None if retrieved is None else _ms(self.intent, retrieved),
                "generate_ms": None if retrieved is None else _ms(retrieved, end),
                "ttft_ms": _ms(self.start, self.first_token or end),
                "total_ms": _ms(self.start, end)}
