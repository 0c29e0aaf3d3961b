"""The HTTP edge's one table from error types to status codes; anything else is a 500
with a request id (never a blanket ValueError -> 400)."""

from __future__ import annotations

import logging

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from llm_engine import EngineDeadError, InvalidRequestError, RequestFailedError, SamplingParams
from pipeline.server.errors import ERROR_STATUS, install_error_handlers, status_of
from pipeline.server.streaming import stream_error


def _app() -> TestClient:
    app = FastAPI()
    install_error_handlers(app)
    raises = {"invalid": InvalidRequestError("prompt too long: shorten it"),
              "failed": RequestFailedError("the engine failed this request"),
              "dead": EngineDeadError("the engine loop died"),
              "value": ValueError("a bug's message"), "key": KeyError("secret")}
    def raising(exc: Exception):
        async def route() -> None:
            raise exc
        return route

    for name, exc in raises.items():
        app.add_api_route(f"/{name}", raising(exc))
        app.add_api_route(f"/v1/{name}", raising(exc))
    return TestClient(app, raise_server_exceptions=False)


@pytest.mark.parametrize("name,status", [("invalid", 400), ("failed", 500), ("dead", 503)])
def test_typed_errors_get_their_status_and_message(name: str, status: int) -> None:
    client = _app()
    r = client.get(f"/{name}")
    assert r.status_code == status and r.json()["detail"] == str(
        {"invalid": "prompt too long: shorten it", "failed": "the engine failed this request",
         "dead": "the engine loop died"}[name])
    v1 = client.get(f"/v1/{name}").json()["error"]
    assert v1["code"] == status


def test_other_errors_are_500_with_a_request_id_in_the_log(caplog) -> None:
    client = _app()
    with caplog.at_level(logging.ERROR, logger="pipeline.server.errors"):
        r = client.get("/value")
        given = client.get("/key", headers={"X-Request-Id": "abc-123"})
    assert r.status_code == 500  # a ValueError is no longer taken for the client's fault
    rid = r.headers["x-request-id"]
    assert len(rid) == 32 and rid in r.json()["detail"] and "a bug's message" not in r.text
    assert given.status_code == 500 and given.headers["x-request-id"] == "abc-123"
    assert "request id abc-123" in given.json()["detail"]
    logged = [rec for rec in caplog.records if rec.getMessage().startswith("request ")]
    assert [rec.getMessage() for rec in logged] == [f"request {rid} failed",
                                                     "request abc-123 failed"]
    assert logged[0].exc_info[0] is ValueError


def test_engine_request_errors_are_typed_and_still_value_errors() -> None:
    with pytest.raises(InvalidRequestError, match="top_p must be"):
        SamplingParams(top_p=0)
    assert issubclass(InvalidRequestError, ValueError)
    assert status_of(InvalidRequestError("x")) == ERROR_STATUS[InvalidRequestError] == 400
    assert status_of(ValueError("x")) is None


def test_stream_errors_say_the_typed_message_or_the_request_id(caplog) -> None:
    assert stream_error(RequestFailedError("engine failed"), "r1") == "engine failed"
    with caplog.at_level(logging.ERROR, logger="pipeline.server.errors"):
        msg = stream_error(RuntimeError("oops"), "r2")
    assert "request id r2" in msg and "oops" not in msg
    assert caplog.records[-1].getMessage() == "request r2 failed"
