"""The web page's documents panel in headless Chromium against the real server: a filing
dropped on the drop zone is indexed (its progress shown) and listed with its metadata, a
question asked with it ticked is answered from it (the filing and the source's page shown),
a collection scopes a question, a refused upload (415, 413) shows the server's message, a
file that fails to index shows why, a delete takes it off the list, and a server that
takes no uploads hides the panel.

The server starts with an empty index folder, as test_documents_api.py's does: the uploads
are all it knows. Chromium and playwright as web_browser.py sets them up."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import loopback
import pytest
from ixbrl_sample import write_filing
from live_server import dev_contexts, running_app
from web_browser import chromium, no_4xx_problems, open_page, phone_overflow, screenshot

from pipeline.server.routes.documents import RETRY_AFTER_S

pytestmark = pytest.mark.browser  # and e2e: it starts the server (conftest.py)

INDEXED_MS = 300_000  # a hang guard for indexing on a busy machine, not a speed bound
MAX_UPLOAD = 200_000  # bytes: a sample filing is about 5 kB
QUESTION = "What was Widget Corp's revenue in 2024?"

# Every value the status attribute of a listed document takes, in order, with whether its
# progress bar was shown then: the indexing state must be seen, not only the end.
WATCH_STATUS = """() => {
  window.__statuses = [];
  const list = document.getElementById('doc-list');
  new MutationObserver((records) => records.forEach((r) => {
    if (r.attributeName !== 'data-status') return;
    const bar = r.target.querySelector('progress');
    window.__statuses.push([r.target.dataset.status, !bar.hidden]);
  })).observe(list, {subtree: true, attributes: true, attributeFilter: ['data-status']});
}"""

# A drop on the drop zone as a user's drag makes it: dragover, then drop, carrying a File.
DROP = """([selector, name, text]) => {
  const zone = document.querySelector(selector);
  const data = new DataTransfer();
  data.items.add(new File([text], name, {type: 'text/html'}));
  for (const type of ['dragenter', 'dragover', 'drop']) {
    zone.dispatchEvent(new DragEvent(type, {dataTransfer: data, bubbles: true, cancelable: true}));
  }
}"""


@pytest.fixture(scope="module")
def server(prepared_default: Path, engines_dir: Path,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Any]]:
    tmp = tmp_path_factory.mktemp("web-documents")
    with running_app(dev_contexts(1), engines_dir, tmp, corpus=None, index=str(tmp / "store"),
                     max_tokens=8, documents_poll_interval=0.2,
                     max_upload_bytes=MAX_UPLOAD) as (base, app):
        yield base, tmp, app


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


def _record_asks(pg) -> None:
    pg.asked = []  # the JSON body of every /ask the page sent
    pg.on("request", lambda r: r.url.endswith("/ask") and pg.asked.append(r.post_data_json))


@pytest.fixture
def page(browser, server):
    with open_page(browser, server[0] + "/", _record_asks) as pg:
        pg.wait_for_selector("#documents:not([hidden])")
        yield pg


def _drop_filing(page, folder: Path, name: str, ticker: str, rev: int) -> dict[str, Any]:
    """Drop a filing on the drop zone; the item it is listed as, once ready."""
    path = write_filing(folder, name, ticker, 2024, rev, rev - 100, 200, 35)
    page.evaluate(DROP, ["#drop-zone", path.name, path.read_text()])
    item = page.locator("#doc-list li", has_text=path.name)
    page.locator("#doc-list li[data-status=ready]", has_text=path.name).wait_for(
        timeout=INDEXED_MS)
    return {"name": path.name, "item": item, "id": item.get_attribute("data-id")}


def _listed(server: str) -> list[str]:
    return [d["id"] for d in loopback.get(f"{server}/v1/documents").json()["data"]]


def test_a_dropped_filing_is_indexed_asked_about_and_deleted(page, server, tmp_path) -> None:
    base, tmp, _app = server
    page.evaluate(WATCH_STATUS)
    widget = _drop_filing(page, tmp, "Widget Corp", "WDGT", 1234)
    statuses = page.evaluate("window.__statuses")
    assert statuses[0] == ["indexing", True] and statuses[-1] == ["ready", False], statuses
    item = widget["item"]
    assert item.locator(".doc-title").inner_text() == "Widget Corp 10-K FY2024"
    meta = item.locator(".doc-meta").inner_text()
    assert "Widget Corp" in meta and "10-K" in meta and "FY2024" in meta and "page" in meta, meta
    gadget = _drop_filing(page, tmp, "Gadget Holdings, Inc.", "GDGT", 5000)
    assert set(_listed(base)) == {widget["id"], gadget["id"]}

    # Ticking the Widget filing scopes the question to it: filters {doc_id: [its id]}.
    page.get_by_label(widget["name"], exact=True).check()
    assert page.input_value("#scope") == "@ticked"
    assert "Widget Corp 10-K FY2024" in page.inner_text("#scope-note")
    page.fill("#question", QUESTION)
    page.press("#question", "Enter")
    page.wait_for_selector("#state:text('Done')")
    assert page.asked[-1]["filters"] == {"doc_id": [widget["id"]]}
    assert page.inner_text("#short-answer").startswith("1,234")
    assert page.inner_text("#filing-title") == "Widget Corp 10-K FY2024"
    filing = page.inner_text("#filing-meta")
    assert "Widget Corp" in filing and "10-K" in filing and "FY2024" in filing
    assert widget["id"] in filing
    # Each source: its title carries the page; opened, it shows its document's id.
    first = page.locator("#sources li").first
    assert "p. " in first.locator("summary .title").inner_text()
    first.locator("summary").click()
    assert widget["id"] in first.locator(".ids").inner_text()
    assert no_4xx_problems(page) == []
    screenshot(page, tmp_path, "web-documents.png")
    assert phone_overflow(page) <= 0, "the page is wider than a phone screen"
    screenshot(page, tmp_path, "web-documents-phone.png")
    page.set_viewport_size({"width": 1280, "height": 900})

    # Deleting takes the ticked filing off the list, and the scope back to every document.
    page.get_by_role("button", name=f"Delete {widget['name']}").click()
    item.wait_for(state="detached")
    assert widget["id"] not in _listed(base)
    assert page.input_value("#scope") == ""
    assert page.inner_text("#scope-note") == "This question covers every document."
    page.get_by_role("button", name=f"Delete {gadget['name']}").click()
    gadget["item"].wait_for(state="detached")


def test_a_collection_scopes_the_question(page, server) -> None:
    base, tmp, _app = server
    page.fill("#collection", "beta")
    gadget = _drop_filing(page, tmp, "Gadget Holdings, Inc.", "GDGT", 5000)
    assert "collection beta" in gadget["item"].locator(".doc-meta").inner_text()
    page.select_option("#scope", label="the collection beta")
    assert page.inner_text("#scope-note") == "This question covers the collection beta."
    page.fill("#question", "What was the revenue in 2024?")
    page.press("#question", "Enter")
    page.wait_for_selector("#state:text('Done')")
    assert page.asked[-1]["filters"] == {"collection": "beta"}
    assert "Gadget" in page.inner_text("#filing-title")
    assert loopback.delete(f"{base}/v1/documents/{gadget['id']}").status_code == 200


def _pick(page, name: str, data: bytes) -> None:
    """Upload through the "Choose files" button's file chooser."""
    with page.expect_file_chooser() as chooser:
        page.click("#pick-files")
    chooser.value.set_files({"name": name, "mimeType": "application/octet-stream",
                             "buffer": data})


@pytest.mark.parametrize(("name", "size", "status"), [("tool.exe", 16, 415),
                                                      ("big.md", MAX_UPLOAD + 1, 413)])
def test_a_refused_upload_shows_the_server_message(page, server, tmp_path, name, size,
                                                   status) -> None:
    data = b"x" * size
    _pick(page, name, data)
    page.wait_for_selector("#doc-message:not([hidden])")
    text = page.inner_text("#doc-message")
    served = loopback.post(f"{server[0]}/v1/documents", files={"file": (name, data)})
    assert served.status_code == status
    assert text.startswith(f"Upload refused ({status}): "), text
    assert served.json()["error"]["message"].rstrip(".") in text, text
    assert page.locator("#doc-list li").count() == 0
    assert no_4xx_problems(page) == []
    screenshot(page, tmp_path, f"web-documents-{status}.png")


def test_too_many_files_at_once_are_told_when_to_retry(page, server) -> None:
    room = server[2].state.pipeline.documents.config.max_pending
    with page.expect_file_chooser() as chooser:
        page.click("#pick-files")
    chooser.value.set_files([{"name": f"note{i}.md", "mimeType": "text/markdown",
                              "buffer": f"Note {i} on working capital.".encode()}
                             for i in range(room + 1)])
    page.wait_for_selector("#doc-message.warn:not([hidden])")
    text = page.inner_text("#doc-message")
    assert text.startswith("Upload refused (429): ") and f"Try again in {RETRY_AFTER_S} s." in text, text
    assert page.locator("#doc-list li").count() == 0  # a request's files: all or none


def test_a_file_that_fails_to_index_shows_why(page, server) -> None:
    _pick(page, "report.pdf", b"not a PDF, only words")
    item = page.locator("#doc-list li[data-status=failed]", has_text="report.pdf")
    item.wait_for(timeout=INDEXED_MS)
    assert "report.pdf" in item.locator(".doc-error").inner_text()
    assert item.locator("input[type=checkbox]").is_disabled()  # nothing to ask about
    assert item.locator("progress").is_hidden()
    item.get_by_role("button", name="Delete report.pdf").click()
    item.wait_for(state="detached")


def test_a_server_without_uploads_hides_the_panel(browser, server) -> None:
    def no_uploads(pg) -> None:
        pg.route("**/v1/documents", lambda route: route.fulfill(
            status=404, content_type="application/json",
            body=json.dumps({"error": {"message": "this server takes no uploads"}})))

    with open_page(browser, server[0] + "/", no_uploads) as pg:
        pg.wait_for_load_state("networkidle")
        assert pg.is_hidden("#documents") and pg.is_hidden("#scope-note")
        assert pg.evaluate("window.finrag.scopeFilters()") is None
        assert no_4xx_problems(pg) == []
