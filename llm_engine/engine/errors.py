"""What the engine raises, by whose fault.

The request's: `InvalidRequestError` (a `ValueError`, as vLLM raises for bad requests): the
caller must change the request (prompt too long, token ids out of the vocabulary, sampling
parameters out of range). The engine's: a failed step ends only the requests it carried
(`StepFailedError` from `LLMEngine.step`, one `RequestFailedError` per request from
`AsyncLLMEngine.generate`); a dead step loop ends everything (`EngineDeadError`).
"""

from __future__ import annotations


class InvalidRequestError(ValueError):
    """The request cannot be served as given; the message says what to change."""


class StepFailedError(RuntimeError):
    """An engine step raised after scheduling. The requests it carried were finished (their
    KV blocks freed) and are listed in `request_ids`; the engine can go on stepping."""

    def __init__(self, request_ids: list[str], cause: BaseException) -> None:
        self.request_ids = request_ids
        self.cause = cause
        super().__init__(f"engine step failed ({type(cause).__name__}: {cause}); ended "
                         f"{len(request_ids)} request(s): {', '.join(request_ids)}")


class RequestFailedError(RuntimeError):
    """This request was in an engine step that failed; other requests go on."""


class EngineDeadError(RuntimeError):
    """The step loop has stopped; no request can be served until the process restarts."""
