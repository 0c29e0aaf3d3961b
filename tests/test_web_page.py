"""The web page at GET /, driven in headless Chromium against the real server.

Chromium and playwright as web_browser.py sets them up. One server for the module, as in
test_server.py: a small TAT-QA index and short answers. Screenshots go to tmp_path and, if
set, to $FINRAG_SCREENSHOT_DIR. The documents panel is tested in test_web_documents.py.
"""

from __future__ import annotations

import json
import re
import time

import loopback
import pytest
from live_server import dev_contexts, running_app, running_server
from web_browser import chromium, no_4xx_problems, open_page, screenshot

pytestmark = pytest.mark.browser  # and e2e: it starts the server (conftest.py)

N_CONTEXTS = 12


@pytest.fixture(scope="module")
def dev() -> list[dict]:
    return dev_contexts(N_CONTEXTS)


@pytest.fixture(scope="module")
def server(dev, prepared_default, engines_dir, tmp_path_factory):
    # Answers run to max_tokens (no stop strings, no repeat stop) so that the Stop button
    # has a long answer to stop; the stop rules are measured in benchmarks/prose_eval.py.
    with running_server(dev, engines_dir, tmp_path_factory.mktemp("web"),
                        max_tokens=12, answer_stop=[], repeat_ngram=0) as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser, server):
    with open_page(browser, server + "/") as pg:
        yield pg


# One observer on both elements records their changes in the order they happened,
# whatever the network's chunking: "a" for a piece of text appended to the answer, "s"
# for a source added to the list (one letter per mutation record).
WATCH_ANSWER = """() => {
  window.__order = [];
  const answer = document.getElementById('answer');
  const sources = document.getElementById('sources');
  const observer = new MutationObserver((records) => records.forEach((r) => {
    if (r.addedNodes.length) window.__order.push(r.target === sources ? 's' : 'a');
  }));
  observer.observe(answer, {childList: true});
  observer.observe(sources, {childList: true});
}"""


def test_index_is_served_with_a_strict_csp(server) -> None:
    r = loopback.get(server + "/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert 'name="viewport"' in r.text and "http" not in r.text.split("<body")[0]
    # Nothing a strict CSP would block: no inline handlers, styles or scripts.
    assert not re.search(r"\son[a-z]+\s*=|\sstyle\s*=|<script(?![^>]*\ssrc=)", r.text)
    assert loopback.get(server + "/static/app.js").headers["content-type"].startswith(
        "text/javascript")
    assert loopback.get(server + "/static/style.css").status_code == 200
    assert loopback.get(server + "/static/../settings.py").status_code == 404
    assert loopback.get(server + "/static/nope.js").status_code == 404


# No table row and no sentence of these reports is about it: the model answers in prose,
# streamed (dev's own text questions get a short answer cut from the text, not streamed).
OPEN_QUESTION = "What is the outlook for dividends next year?"


def _wire_events(server: str, question: str) -> list[dict]:
    """The server-sent events of a streamed /ask, as the page asks it."""
    with loopback.stream("POST", f"{server}/ask", timeout=300,
                         json={"question": question, "stream": True}) as r:
        assert r.status_code == 200
        return [json.loads(line[6:]) for line in r.iter_lines() if line.startswith("data: ")]


def test_question_streams_then_sources_and_timings(page, server, tmp_path) -> None:
    question = OPEN_QUESTION
    # On the wire: several token events, then the one final event with the sources.
    kinds = [e["type"] for e in _wire_events(server, question)]
    assert kinds[-1] == "final" and kinds[:-1] == ["token"] * (len(kinds) - 1), kinds
    assert len(kinds) >= 3, kinds
    page.evaluate(WATCH_ANSWER)
    page.fill("#question", question)
    page.press("#question", "Enter")  # keyboard: Enter asks
    page.wait_for_selector("#state:text('Done')")
    # On the page: each token appended as it came, all before the sources were rendered
    # (a busy machine may deliver several events in one read; each is still one append).
    order = "".join(page.evaluate("window.__order"))
    streamed = order.partition("s")[0]
    assert "s" in order and len(streamed) >= 2 and set(streamed) == {"a"}, order
    assert page.inner_text("#answer").strip()
    assert page.inner_text("#intent") == "finance question"
    # No short answer in this answer (null fields): the prose alone, nothing empty shown.
    assert page.is_hidden("#short-box")
    stages = page.eval_on_selector_all("#timings li", "els => els.map(e => e.dataset.stage)")
    assert stages == ["intent_ms", "retrieve_ms", "generate_ms", "ttft_ms", "total_ms"]
    assert " ms" in page.inner_text("#timings") or " s" in page.inner_text("#timings")
    sources = page.locator("#sources li")
    assert sources.count() == 3
    # A (paragraph) source opens to its matched chunk, with the score.
    first = sources.filter(has=page.locator("blockquote")).first
    assert not first.locator("blockquote").is_visible()
    first.locator("summary").click()
    assert first.locator("blockquote").is_visible()
    assert len(first.locator("blockquote").inner_text()) > 20
    assert "score" in first.inner_text()
    assert page.is_hidden("#message")
    assert no_4xx_problems(page) == []
    desktop = screenshot(page, tmp_path, "web-desktop.png")

    page.set_viewport_size({"width": 390, "height": 844})
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page is {overflow}px wider than a phone screen"
    phone = screenshot(page, tmp_path, "web-phone.png")
    assert desktop.stat().st_size > 0 and phone.stat().st_size > 0


def _computed(server: str, dev: list[dict], scale: str) -> tuple[str, dict]:
    """A dev arithmetic question the pipeline answers by computing from table cells, with
    `scale`: (question, the server's JSON answer)."""
    for ctx in dev:
        for q in ctx["questions"]:
            if q["answer_type"] != "arithmetic" or q["scale"] != scale:
                continue
            body = loopback.post(f"{server}/ask", json={"question": q["question"]},
                                 timeout=300).json()
            if body.get("short_answer") is not None and body["scale"] == scale \
                    and body["citations"]:
                return q["question"], body
    raise AssertionError(f"no computed {scale} answer in the dev sample")


@pytest.mark.parametrize(("scale", "shown"), [
    ("percent", re.compile(r"^-?\d+(\.\d+)? %$")),
    ("million", re.compile(r"^-?\d{1,3}(,\d{3})*(\.\d+)? million$"))])
def test_short_answer_derivation_and_cited_cells_above_the_prose(page, server, dev, tmp_path,
                                                                  scale, shown) -> None:
    question, body = _computed(server, dev, scale)
    page.fill("#question", question)
    page.press("#question", "Enter")
    page.wait_for_selector("#state:text('Done')")
    value = page.inner_text("#short-answer")
    assert shown.match(value), value
    assert value.split()[0].replace(",", "") == body["short_answer"]
    assert page.inner_text("#derivation").strip() == body["derivation"]
    # The cited cells are highlighted in the source's table, each marked for screen readers.
    cells = {(c["row_index"], c["column_index"]) for c in body["citations"]}
    cited = page.locator("#cited td.cited")
    assert cited.count() == len(cells)
    source = next(s for s in body["sources"] if s["id"] == body["citations"][0]["source_id"])
    rows = source["table"]["rows"]
    expected = sorted(rows[r][c].strip() for r, c in cells)
    got = sorted(t.replace("(cited)", "").strip() for t in cited.all_inner_texts())
    assert got == expected
    assert page.locator("#cited table th[scope=col]").count() >= 1
    assert page.locator("#cited table tbody tr").count() == len(rows) - page.locator(
        "#cited table thead tr").count()
    # Above the prose, in reading order.
    top = page.locator("#short-box").bounding_box()["y"]
    assert top < page.locator("#answer").bounding_box()["y"]
    # The cited source shows its table (highlighted too) instead of the flat text.
    index = [s["id"] for s in body["sources"]].index(source["id"])
    item = page.locator("#sources li").nth(index)
    item.locator("summary").click()
    assert item.locator("table td.cited").count() == len(cells)
    assert no_4xx_problems(page) == []
    screenshot(page, tmp_path, f"web-short-answer-{scale}.png")
    page.set_viewport_size({"width": 390, "height": 844})
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page is {overflow}px wider than a phone screen"
    screenshot(page, tmp_path, f"web-short-answer-{scale}-phone.png")


def test_refusals_show_the_server_message(page, tmp_path) -> None:
    page.fill("#question", "What was the revenue? " * 200)  # 4400 characters > 4000
    page.click("#ask")
    page.wait_for_selector("#message:not([hidden])")
    text = page.inner_text("#message")
    assert "refused" in text and "422" in text and "4000" in text, text
    assert page.is_hidden("#result")
    screenshot(page, tmp_path, "web-refused.png")



def test_dropped_connections_are_reported(page, tmp_path) -> None:
    # Before the response: the connection is reset.
    page.route("**/ask", lambda route: route.abort("connectionreset"))
    page.fill("#question", "What was the revenue in 2019?")
    page.press("#question", "Enter")
    page.wait_for_selector("#message:not([hidden])")
    assert "Could not reach the server" in page.inner_text("#message")
    page.unroute("**/ask")

    # Mid-stream: the real server's response, cut after its first token event.
    def cut(route):
        resp = route.fetch()
        events = resp.text().split("\n\n")
        assert json.loads(events[0][6:])["type"] == "token"
        route.fulfill(status=200, headers={"Content-Type": "text/event-stream"},
                      body=events[0] + "\n\n")

    page.route("**/ask", cut)
    page.press("#question", "Enter")
    page.wait_for_selector("#state:text('Interrupted')")
    assert "dropped in the middle of the answer" in page.inner_text("#message")
    assert page.inner_text("#answer").strip()  # the partial answer stays
    assert page.is_hidden("#sources-box") and page.is_hidden("#meta")
    assert not page.is_disabled("#ask")
    screenshot(page, tmp_path, "web-dropped.png")
    page.unroute("**/ask")

    # The reader stops a long answer: the request is aborted, the partial text stays.
    page.click("#options summary")
    page.fill("#max-tokens", "200")
    page.fill("#question", OPEN_QUESTION)
    page.press("#question", "Enter")
    page.wait_for_selector("#answer:not(:empty)")
    page.click("#stop")
    page.wait_for_selector("#state:text('Stopped')")
    assert "Stopped" in page.inner_text("#message") and page.inner_text("#answer").strip()
    assert page.is_hidden("#sources-box") and not page.is_disabled("#ask")


# -- a server with an API key, whose engine loop dies last -------------------------------
KEY = "web-page-key-0123456789"


@pytest.fixture(scope="module")
def keyed(dev, prepared_default, engines_dir, tmp_path_factory):
    with running_app(dev, engines_dir, tmp_path_factory.mktemp("web-keyed"), max_tokens=12,
                     api_key=KEY) as (base, app):
        yield base, app.state.pipeline


def _record_keys(pg) -> None:
    pg.sent_keys = []  # the Authorization header of every /ask the page sent
    pg.doc_keys = []  # and of every documents API request
    pg.on("request", lambda r: r.url.endswith("/ask")
          and pg.sent_keys.append(r.headers.get("authorization")))
    pg.on("request", lambda r: "/v1/documents" in r.url
          and pg.doc_keys.append(r.headers.get("authorization")))


@pytest.fixture
def keyed_page(browser, keyed):
    with open_page(browser, keyed[0] + "/", _record_keys) as pg:
        yield pg


def test_401_asks_for_a_key_kept_in_session_storage(keyed_page) -> None:
    page = keyed_page
    # The documents list needs the key too: its 401 shows the (empty) key field at once.
    page.wait_for_selector("#doc-message:has-text('401')")
    assert page.is_visible("#key-box") and page.input_value("#api-key") == ""
    page.fill("#question", "hello!")
    page.press("#question", "Enter")
    # the key box is open already (the documents list's 401): wait for the answer's own 401
    page.wait_for_selector("#message:has-text('401')")
    assert page.is_visible("#key-box")
    text = page.inner_text("#message")
    # The real server's 401 message, shown by the page.
    assert "needs an API key" in text and "401" in text and "Authorization: Bearer" in text, text
    page.fill("#api-key", "not-the-key-0123456789")
    page.press("#question", "Enter")
    page.wait_for_selector("#message:has-text('was not accepted')")
    page.fill("#api-key", KEY)
    page.press("#question", "Enter")
    page.wait_for_selector("#state:text('Done')")
    assert page.sent_keys == [None, "Bearer not-the-key-0123456789", f"Bearer {KEY}"]
    # The documents list, asked again with the key once it is entered, answers now.
    page.wait_for_selector("#doc-message", state="hidden")
    assert page.doc_keys[0] is None and page.doc_keys[-1] == f"Bearer {KEY}", page.doc_keys
    assert page.evaluate("sessionStorage.getItem('finrag.apiKey')") == KEY
    assert page.evaluate("localStorage.length") == 0
    assert page.inner_text("#intent") == "small talk"
    assert page.inner_text("#answer").strip()


def test_a_dead_engine_shows_the_server_503(keyed, keyed_page) -> None:
    """Last: the keyed server's engine loop is killed, as test_server_faults does."""
    base, pipe = keyed
    auth = {"Authorization": f"Bearer {KEY}"}

    def broken_schedule():
        raise RuntimeError("injected scheduler fault")

    pipe.engine.engine.scheduler.schedule = broken_schedule
    # The loop dies at its next step, which this request starts.
    r = loopback.post(f"{base}/v1/completions", json={"prompt": "x", "max_tokens": 2},
                      headers=auth, timeout=120)
    assert r.status_code in (500, 503), r.text
    deadline = time.monotonic() + 60  # a hang guard, not a speed bound
    while (health := loopback.get(f"{base}/health", timeout=30)).status_code != 503:
        assert time.monotonic() < deadline, health.text
        time.sleep(0.05)
    page = keyed_page
    page.evaluate(f"sessionStorage.setItem('finrag.apiKey', {json.dumps(KEY)})")
    page.fill("#question", "What was the revenue in 2019?")
    page.press("#question", "Enter")
    page.wait_for_selector("#message:not([hidden])")
    text = page.inner_text("#message")
    assert "unavailable" in text and "503" in text, text
    assert "injected scheduler fault" in text and "restart" in text, text
    assert page.sent_keys == [f"Bearer {KEY}"]
    assert page.is_hidden("#result") and not page.is_disabled("#ask")
