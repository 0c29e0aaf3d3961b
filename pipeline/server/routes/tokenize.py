"""vLLM's utility routes: POST /tokenize, POST /detokenize, GET /version, GET|POST /ping."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from pipeline.server.errors import GET_ERRORS, OUR_ERRORS, ErrorDetail, RequestRejected
from pipeline.server.guards.request_limits import RequestLimits, bounded
from pipeline.server.openai.openai_models import ChatMessage, ModelName, chat_prompt_ids, check_model

router = APIRouter()
# As vLLM's: our error shape, and 404 for a model that is not served.
ERRORS = {**OUR_ERRORS, 404: {"model": ErrorDetail, "description": "no such model"}}


class TokenizeRequest(BaseModel):
    """A prompt, or chat messages (rendered with the model's chat template), as vLLM takes."""

    model_config = ConfigDict(extra="forbid", strict=True)
    model: str | None = ModelName
    prompt: str | None = Field(None, description="text to tokenize")
    messages: list[ChatMessage] | None = Field(None, min_length=1,
                                               description="or a chat to tokenize")
    add_special_tokens: bool = Field(True, description="with prompt: BOS where the model "
                                     "asks for it")
    add_generation_prompt: bool = Field(True, description="with messages: open the "
                                        "assistant's turn (always, here)")
    return_token_strs: bool = False


class TokenizeAnswer(BaseModel):
    count: int
    max_model_len: int
    tokens: list[int]
    token_strs: list[str] | None


class DetokenizeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    model: str | None = ModelName
    tokens: Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=1)] = bounded(
        "max_token_id", ..., description="token ids of the model's vocabulary")


def _pipe(request: Request, model: str | None) -> Any:
    pipe = request.app.state.pipeline
    check_model(model, [pipe.model_name])
    return pipe


@router.post("/tokenize", responses={200: {"model": TokenizeAnswer}, **ERRORS})
async def tokenize(body: TokenizeRequest, request: Request) -> Any:
    pipe = _pipe(request, body.model)
    if (body.prompt is None) == (body.messages is None):
        raise RequestRejected("give prompt or messages (one of them)")
    if body.prompt is not None:
        ids = pipe.tokenizer.encode(body.prompt, add_special_tokens=body.add_special_tokens)
    else:
        ids = chat_prompt_ids(pipe.tokenizer, body.messages)
    strs = pipe.tokenizer.convert_ids_to_tokens(ids) if body.return_token_strs else None
    return {"count": len(ids), "max_model_len": RequestLimits.of(request.app).max_model_len,
            "tokens": ids, "token_strs": strs}


@router.post("/detokenize", responses=ERRORS)
async def detokenize(body: DetokenizeRequest, request: Request) -> Any:
    pipe = _pipe(request, body.model)
    RequestLimits.of(request.app).check(body)
    return {"prompt": pipe.tokenizer.decode(body.tokens, skip_special_tokens=False)}


@router.get("/version", responses=GET_ERRORS)
async def server_version() -> dict[str, str]:
    try:
        return {"version": version("finrag")}
    except PackageNotFoundError:
        return {"version": "unknown"}


@router.get("/ping", response_class=Response, responses={200: {"description": "alive"}})
@router.post("/ping", response_class=Response, responses={200: {"description": "alive"}})
async def ping() -> Response:
    """Liveness for SageMaker-style load balancers, as vLLM's /ping."""
    return Response(status_code=200)
