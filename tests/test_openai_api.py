"""The OpenAI-compatible API as vLLM serves it, through the official `openai` client and raw
HTTP against the real server: structured output, logprobs, n / best_of with shared prompt
blocks, several prompts, tokenize / detokenize / version / ping, request ids, and the
response shapes of vLLM's protocol (tests/fixtures/vllm_protocol.json)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import loopback
import pytest
from prereqs import DEV, require_module

PROTOCOL = json.loads((Path(__file__).parent / "fixtures" / "vllm_protocol.json").read_text())
TYPES = {"string": str, "integer": int, "number": (int, float), "array": list, "object": dict,
         "null": type(None)}
CHAT = [{"role": "user", "content": "Name one financial statement."}]
# A prompt of several KV blocks (16 tokens each), so that n choices can share them.
LONG = ("The company's revenue grew from 98,993 thousand in 2018 to 149,843 thousand in 2019, "
        "driven by new contracts; operating costs rose less quickly, and the operating margin "
        "improved by four points. Summarise the change in revenue:")


def conforms(obj: dict, kind: str) -> None:
    for field, types in PROTOCOL[kind].items():
        assert field in obj, f"{kind}: no {field!r} in {obj}"
        allowed = tuple(t for name in types.split("|") for t in
                        (TYPES[name] if isinstance(TYPES[name], tuple) else (TYPES[name],)))
        assert isinstance(obj[field], allowed), f"{kind}.{field}: {obj[field]!r} is not {types}"


@pytest.fixture(scope="module")
def api(api_server):
    """conftest.py's api_server (test_request_isolation.py's too): (base URL, app)."""
    return api_server


def post(api, path: str, body: dict, **headers: str) -> httpx.Response:
    return loopback.post(f"{api[0]}{path}", json=body, timeout=600, headers=headers)


def test_chat_logprobs_in_vllms_shape(api) -> None:
    r = post(api, "/v1/chat/completions", {"messages": CHAT, "max_tokens": 6, "temperature": 0,
                                           "logprobs": True, "top_logprobs": 3})
    assert r.status_code == 200, r.text
    body = r.json()
    conforms(body, "chat.completion")
    choice = body["choices"][0]
    conforms(choice, "chat.choice")
    conforms(choice["message"], "chat.message")
    conforms(choice["logprobs"], "chat.logprobs")
    content = choice["logprobs"]["content"]
    assert len(content) == body["usage"]["completion_tokens"]
    for item in content:
        conforms(item, "chat.logprob")
        tops = [t["logprob"] for t in item["top_logprobs"]]
        assert len(tops) == 3 and tops == sorted(tops, reverse=True)
        assert item["logprob"] == pytest.approx(tops[0])  # greedy picks the most likely
        assert bytes(item["bytes"]).decode() == item["token"]
    assert "".join(i["token"] for i in content).startswith(choice["message"]["content"][:1])


def test_completion_logprobs_tokens_and_offsets(api) -> None:
    r = post(api, "/v1/completions", {"prompt": "Revenue is", "max_tokens": 5, "temperature": 0,
                                      "logprobs": 2})
    assert r.status_code == 200, r.text
    choice = r.json()["choices"][0]
    conforms(choice, "completion.choice")
    lp = choice["logprobs"]
    conforms(lp, "completion.logprobs")
    assert "".join(lp["tokens"]) == choice["text"]
    assert lp["text_offset"] == [sum(len(t) for t in lp["tokens"][:i])
                                 for i in range(len(lp["tokens"]))]
    assert all(len(t) <= 3 for t in lp["top_logprobs"])  # 2 + the chosen one where it is not


def test_prompt_logprobs_in_vllms_shape(api) -> None:
    ids = post(api, "/tokenize", {"prompt": LONG}).json()["tokens"]
    r = post(api, "/v1/completions", {"prompt": LONG, "max_tokens": 2, "temperature": 0,
                                      "prompt_logprobs": 2, "n": 2})
    assert r.status_code == 200, r.text
    choices = r.json()["choices"]
    for c in choices:
        conforms(c, "completion.choice")
    first = choices[0]["prompt_logprobs"]
    assert choices[1]["prompt_logprobs"] == first  # one prompt, computed once
    assert len(first) == len(ids) and first[0] is None
    tokenizer = api[1].state.pipeline.tokenizer
    for token, entry in zip(ids[1:], first[1:], strict=True):
        assert list(entry)[0] == str(token)  # the prompt's own token first
        for tid, lp in entry.items():
            conforms(lp, "prompt_logprob")
            assert lp["decoded_token"] == tokenizer.decode([int(tid)], skip_special_tokens=False)
        ranked = sorted(entry.values(), key=lambda lp: lp["rank"])
        assert [lp["rank"] for lp in ranked][:2] == [1, 2] and len(entry) in (2, 3)
        assert [lp["logprob"] for lp in ranked] == sorted((lp["logprob"] for lp in ranked),
                                                          reverse=True)
    # Chat: on the response (vLLM's place), null when not asked for.
    chat = post(api, "/v1/chat/completions", {"messages": CHAT, "max_tokens": 2,
                                              "temperature": 0, "prompt_logprobs": 0}).json()
    conforms(chat, "chat.completion")
    n_prompt = chat["usage"]["prompt_tokens"]
    assert len(chat["prompt_logprobs"]) == n_prompt
    assert all(len(e) == 1 and next(iter(e.values()))["rank"] >= 1
               for e in chat["prompt_logprobs"][1:])
    plain = post(api, "/v1/chat/completions", {"messages": CHAT, "max_tokens": 2}).json()
    assert plain["prompt_logprobs"] is None


def test_n_choices_share_the_prompts_blocks(api) -> None:
    engine = api[1].state.pipeline.engine
    before = engine.get_stats()
    r = post(api, "/v1/completions", {"prompt": LONG, "n": 4, "max_tokens": 4,
                                      "temperature": 1.0, "seed": 7})
    assert r.status_code == 200, r.text
    body = r.json()
    conforms(body, "text_completion")
    assert [c["index"] for c in body["choices"]] == [0, 1, 2, 3]
    n_prompt = len(api[1].state.pipeline.tokenizer.encode(LONG))
    assert body["usage"]["prompt_tokens"] == n_prompt  # the prompt counts once
    after = engine.get_stats()
    # The four children asked for the same prompt; at least three of them found its full
    # blocks in the prefix cache instead of computing them again.
    full_blocks_tokens = (n_prompt - 1) // 16 * 16
    assert after.prefix_cache_hits - before.prefix_cache_hits >= 3 * full_blocks_tokens > 0
    # Seeds: child j draws with seed + j, so the same request gives the same choices.
    again = post(api, "/v1/completions", {"prompt": LONG, "n": 4, "max_tokens": 4,
                                          "temperature": 1.0, "seed": 7}).json()
    assert [c["text"] for c in again["choices"]] == [c["text"] for c in body["choices"]]


def test_best_of_returns_the_most_likely(api) -> None:
    body = {"prompt": "The balance sheet shows", "max_tokens": 4, "temperature": 1.0,
            "seed": 3}
    best = post(api, "/v1/completions", {**body, "best_of": 4, "logprobs": 0}).json()
    assert len(best["choices"]) == 1
    every = post(api, "/v1/completions", {**body, "n": 4, "logprobs": 0}).json()
    totals = [sum(c["logprobs"]["token_logprobs"]) for c in every["choices"]]
    chosen = sum(best["choices"][0]["logprobs"]["token_logprobs"])
    assert chosen == pytest.approx(max(totals))


def test_several_prompts_in_one_call(api) -> None:
    prompts = ["Net income is", "Total assets are"]
    r = post(api, "/v1/completions", {"prompt": prompts, "n": 2, "max_tokens": 4,
                                      "temperature": 0})
    assert r.status_code == 200, r.text
    choices = r.json()["choices"]
    assert [c["index"] for c in choices] == [0, 1, 2, 3]
    for i, prompt in enumerate(prompts):
        alone = post(api, "/v1/completions", {"prompt": prompt, "max_tokens": 4,
                                              "temperature": 0}).json()["choices"][0]["text"]
        assert choices[2 * i]["text"] == choices[2 * i + 1]["text"] == alone


def test_stream_with_n_and_continuous_usage(api) -> None:
    body = {"messages": CHAT, "n": 2, "max_tokens": 5, "temperature": 0, "stream": True,
            "stream_options": {"include_usage": True, "continuous_usage_stats": True}}
    chunks = []
    with loopback.stream("POST", f"{api[0]}/v1/chat/completions", json=body, timeout=600) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                chunks.append(json.loads(line[6:]))
    for chunk in chunks:
        conforms(chunk, "chat.completion.chunk")
        for c in chunk["choices"]:
            conforms(c, "chat.chunk_choice")
    texts = {0: "", 1: ""}
    for chunk in chunks:
        for c in chunk["choices"]:
            texts[c["index"]] += c["delta"].get("content") or ""
        assert "usage" in chunk
    assert texts[0] == texts[1] != ""
    final = chunks[-1]
    assert final["choices"] == [] and final["usage"]["completion_tokens"] > 0
    conforms(final["usage"], "usage")


# Sampled generations a schema, all in one request (n): they decode as one batch.
SAMPLES_A_SCHEMA = 8
SCHEMAS = [
    {"type": "object", "properties": {"company": {"type": "string", "maxLength": 20},
                                      "year": {"type": "integer", "minimum": 1990,
                                               "maximum": 2030}},
     "required": ["company", "year"], "additionalProperties": False},
    {"type": "object", "properties": {"direction": {"enum": ["up", "down", "flat"]},
                                      "confident": {"type": "boolean"}},
     "required": ["direction", "confident"], "additionalProperties": False},
    {"type": "object", "properties": {"metrics": {"type": "array", "maxItems": 3,
                                                  "items": {"enum": ["revenue", "ebitda",
                                                                     "margin"]}}},
     "required": ["metrics"], "additionalProperties": False},
    {"type": "object", "properties": {"value": {"type": "integer", "minimum": -999,
                                                "maximum": 999},
                                      "scale": {"enum": ["thousand", "million", "percent"]}},
     "required": ["value", "scale"], "additionalProperties": False},
    {"type": "array", "minItems": 1, "maxItems": 2,
     "items": {"type": "object", "properties": {"q": {"type": "integer", "minimum": 1,
                                                      "maximum": 4}},
               "required": ["q"], "additionalProperties": False}},
]


def test_forty_generations_all_follow_their_schemas(api) -> None:
    """8 sampled generations (n=8, one request) for each of the 5 schemas: every one parses
    and validates, through the official openai client's response_format."""
    jsonschema = require_module("jsonschema", DEV)
    openai = require_module("openai", DEV)
    client = openai.OpenAI(base_url=f"{api[0]}/v1", api_key="unused", timeout=900)
    done = 0
    for k, schema in enumerate(SCHEMAS):
        out = client.chat.completions.create(
            model=api[1].state.pipeline.model_name, messages=CHAT, n=SAMPLES_A_SCHEMA,
            temperature=1.0, seed=100 * k, max_tokens=60,
            response_format={"type": "json_schema",
                             "json_schema": {"name": f"s{k}", "schema": schema}})
        for choice in out.choices:
            assert choice.finish_reason == "stop", choice
            jsonschema.validate(json.loads(choice.message.content), schema)
            done += 1
    assert done == SAMPLES_A_SCHEMA * len(SCHEMAS)


def test_structured_outputs_choice_regex_and_grammar(api) -> None:
    def ask(so: dict) -> str:
        r = post(api, "/v1/completions", {"prompt": "Is revenue up? Answer:", "max_tokens": 12,
                                          "temperature": 1.0, "seed": 1,
                                          "structured_outputs": so})
        assert r.status_code == 200, r.text
        return r.json()["choices"][0]["text"]

    assert ask({"choice": ["yes", "no", "unclear"]}) in ("yes", "no", "unclear")
    import re

    assert re.fullmatch(r"FY20[0-9]{2}", ask({"regex": "FY20[0-9]{2}"}))
    assert ask({"grammar": 'root ::= "Q" [1-4] " " ("up" | "down")'}) in {
        f"Q{q} {d}" for q in "1234" for d in ("up", "down")}


def test_tokenize_detokenize_version_ping(api) -> None:
    tok = post(api, "/tokenize", {"prompt": "Operating margin rose."}).json()
    conforms(tok, "tokenize")
    assert tok["count"] == len(tok["tokens"]) > 0
    assert tok["tokens"] == api[1].state.pipeline.tokenizer.encode("Operating margin rose.")
    back = post(api, "/detokenize", {"tokens": tok["tokens"]}).json()
    conforms(back, "detokenize")
    assert back["prompt"].endswith("Operating margin rose.")
    chat = post(api, "/tokenize", {"messages": CHAT}).json()
    assert chat["count"] > tok["count"]
    assert post(api, "/tokenize", {"prompt": "x", "messages": CHAT}).status_code == 422
    assert post(api, "/detokenize", {"tokens": [10**9]}).status_code == 422
    version = loopback.get(f"{api[0]}/version").json()
    conforms(version, "version")
    assert loopback.get(f"{api[0]}/ping").status_code == 200
    assert loopback.post(f"{api[0]}/ping").status_code == 200


def test_request_id_is_the_response_id(api) -> None:
    r = post(api, "/v1/chat/completions", {"messages": CHAT, "max_tokens": 2},
             **{"X-Request-Id": "client-abc"})
    assert r.headers["x-request-id"] == "client-abc"
    assert r.json()["id"] == "chatcmpl-client-abc"
    # The same client id twice at once still works: engine ids stay unique.
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        codes = list(pool.map(lambda _: post(api, "/v1/completions",
                                             {"prompt": "x", "max_tokens": 2},
                                             **{"X-Request-Id": "same"}).status_code, range(2)))
    assert codes == [200, 200]
    other = post(api, "/v1/completions", {"prompt": "x", "max_tokens": 2}).json()["id"]
    assert other.startswith("cmpl-") and len(other) > len("cmpl-") + 16
