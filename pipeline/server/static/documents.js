// finrag web page, the documents panel: uploads files to POST /v1/documents (dropped on the
// drop zone or chosen with the picker), polls each document until it is indexed, deletes
// documents, and sets which documents or collection a question covers (scopeFilters).
// A server that takes no uploads (or answers the list with anything but 200) hides the panel.
"use strict";

(function () {
  const app = window.finrag;
  const el = app.el;
  const $ = (id) => document.getElementById(id);
  const panel = $("documents"), drop = $("drop-zone"), picker = $("file-input");
  const collectionInput = $("collection"), uploadState = $("upload-state");
  const docMessage = $("doc-message"), list = $("doc-list");
  const scope = $("scope"), scopeNote = $("scope-note");
  const API = "/v1/documents";
  const TICKED = "@ticked", COLLECTION = "c:";
  const POLL_MS = 1000, RETRY_MS = 5000;
  const docs = new Map();  // id -> {record, li, parts, timer}

  function call(path, options) {
    return fetch(path, { ...options, cache: "no-store", headers: app.authHeaders() });
  }
  function showDocMessage(text, kind) {
    docMessage.textContent = text;
    docMessage.className = "message " + (kind || "error");
    docMessage.hidden = false;
  }
  function clearDocMessage() { docMessage.hidden = true; docMessage.textContent = ""; }

  // The server's refusal of a documents request, in words ("Upload refused (415): ...").
  async function refusalText(what, resp) {
    const text = (await app.responseText(resp)) || resp.statusText || "no details";
    if (resp.status === 401) app.showKeyBox();
    const after = resp.headers.get("Retry-After");
    const retry = after ? ` Try again in ${after} s.` : "";
    return `${what} refused (${resp.status}): ${text.replace(/\.$/, "")}.${retry}`;
  }
  async function jsonOf(resp) {
    try { return await resp.json(); } catch (e) { return null; }
  }

  // -- one document in the list ---------------------------------------------------------
  function docParts(record) {
    const box = el("input");
    box.type = "checkbox";
    box.id = "pick-" + record.id;
    box.dataset.docId = record.id;
    const name = el("label", "doc-name", record.name);
    name.htmlFor = box.id;
    const status = el("span", "doc-status");
    status.setAttribute("role", "status");
    const remove = el("button", "secondary small", "Delete");
    remove.type = "button";
    remove.setAttribute("aria-label", "Delete " + record.name);
    const bar = el("progress");
    bar.max = 1;
    bar.setAttribute("aria-label", "Indexing " + record.name);
    return { box, name, status, remove, bar, title: el("p", "doc-title"),
      meta: el("p", "doc-meta"), error: el("p", "doc-error") };
  }
  function docItem(record) {
    const parts = docParts(record);
    const li = el("li", "doc");
    li.dataset.id = record.id;
    const head = el("div", "doc-head");
    head.append(parts.box, parts.name, parts.status, parts.remove);
    li.append(head, parts.bar, parts.title, parts.meta, parts.error);
    parts.box.addEventListener("change", () => ticked(parts.box.checked));
    parts.remove.addEventListener("click", () => deleteDoc(record.id));
    list.append(li);
    return { record, li, parts, timer: null };
  }
  function metaLine(record) {
    const m = record.metadata || {};
    return [m.company, m.form, m.fiscal_year ? "FY" + m.fiscal_year : "",
      m.pages ? m.pages + (m.pages === 1 ? " page" : " pages") : "",
      "collection " + record.collection].filter(Boolean).join(" · ");
  }
  function render(entry) {
    const { record, parts } = entry;
    const status = record.status;
    entry.li.dataset.status = status;
    parts.status.textContent = status;
    parts.bar.hidden = status !== "indexing";
    // progress null: another replica indexes it; an indeterminate bar says "working".
    if (typeof record.progress === "number") parts.bar.value = record.progress;
    else parts.bar.removeAttribute("value");
    parts.box.disabled = status !== "ready";
    if (parts.box.disabled && parts.box.checked) { parts.box.checked = false; refreshScope(); }
    parts.title.textContent = status === "ready" ? record.title || "" : "";
    parts.meta.textContent = status === "ready" ? metaLine(record) : "";
    parts.error.textContent = status === "failed" ? record.error || "indexing failed" : "";
  }

  // A document as the server last showed it: listed (once), drawn, and polled while indexing.
  function show(record) {
    let entry = docs.get(record.id);
    if (!entry) { entry = docItem(record); docs.set(record.id, entry); }
    entry.record = record;
    render(entry);
    clearTimeout(entry.timer);
    entry.timer = record.status === "indexing" ? setTimeout(() => poll(record.id), POLL_MS) : null;
    refreshCollections();
  }
  function forget(id) {
    const entry = docs.get(id);
    if (!entry) return;
    clearTimeout(entry.timer);
    entry.li.remove();
    docs.delete(id);
    refreshCollections();
    refreshScope();
  }

  async function poll(id) {
    const entry = docs.get(id);
    if (!entry) return;
    let resp;
    try {
      resp = await call(`${API}/${encodeURIComponent(id)}`);
    } catch (e) {
      entry.parts.error.textContent = "The server did not answer; trying again.";
      entry.timer = setTimeout(() => poll(id), RETRY_MS);
      return;
    }
    if (resp.status === 404) { forget(id); return; }  // deleted meanwhile
    if (!resp.ok) {
      entry.parts.error.textContent = await refusalText("Status check", resp);
      entry.timer = setTimeout(() => poll(id), RETRY_MS);
      return;
    }
    const record = await jsonOf(resp);
    if (record && docs.has(id)) show(record);
  }

  async function deleteDoc(id) {
    const entry = docs.get(id);
    if (!entry) return;
    entry.parts.remove.disabled = true;
    let resp;
    try {
      resp = await call(`${API}/${encodeURIComponent(id)}`, { method: "DELETE" });
    } catch (e) {
      resp = null;
    }
    if (resp && (resp.ok || resp.status === 404)) { forget(id); return; }
    entry.parts.remove.disabled = false;
    showDocMessage(resp ? await refusalText("Delete", resp)
      : "Could not reach the server to delete " + entry.record.name + ".");
  }

  // -- uploads ----------------------------------------------------------------------------
  function uploadBody(files) {
    const form = new FormData();
    for (const file of files) form.append("file", file, file.name);
    const collection = collectionInput.value.trim();
    if (collection) form.append("collection", collection);
    return form;
  }
  async function upload(files) {
    if (!files.length) return;
    clearDocMessage();
    const names = files.map((f) => f.name).join(", ");
    uploadState.textContent = "Uploading " + names + "…";
    let resp;
    try {
      resp = await call(API, { method: "POST", body: uploadBody(files) });
    } catch (e) {
      showDocMessage("The upload of " + names + " did not reach the server, or the " +
        "connection dropped. Check that finrag is running and try again.");
      return;
    } finally {
      uploadState.textContent = "";
    }
    if (!resp.ok) {
      showDocMessage(await refusalText("Upload", resp), resp.status === 429 ? "warn" : "error");
      return;
    }
    const body = await jsonOf(resp);
    ((body && body.documents) || []).forEach(show);
  }

  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    upload(Array.from(e.dataTransfer ? e.dataTransfer.files : []));
  });
  // A file dropped beside the zone would otherwise replace the page with the file (text
  // dropped into the question is left alone).
  for (const type of ["dragover", "drop"]) {
    window.addEventListener(type, (e) => {
      const files = e.dataTransfer && Array.from(e.dataTransfer.types).includes("Files");
      if (files && !drop.contains(e.target)) e.preventDefault();
    });
  }
  $("pick-files").addEventListener("click", () => picker.click());
  picker.addEventListener("change", () => {
    const files = Array.from(picker.files);
    picker.value = "";  // choosing the same file again is a change too
    upload(files);
  });

  // -- scope: the ticked documents, a collection, or every document ---------------------
  function chosenCollection() {
    return scope.value.startsWith(COLLECTION) ? scope.value.slice(COLLECTION.length) : "";
  }
  function tickedIds() {
    return Array.from(list.querySelectorAll("input[type=checkbox]:checked"),
      (box) => box.dataset.docId);
  }
  function scopeFilters() {
    if (panel.hidden) return null;
    if (scope.value === TICKED) return { doc_id: tickedIds() };
    const collection = chosenCollection();
    return collection ? { collection } : null;
  }
  // Ticking a document makes the question cover the ticked ones; unticking the last one
  // goes back to every document.
  function ticked(on) {
    if (on) scope.value = TICKED;
    refreshScope();
  }
  function refreshScope() {
    const ids = tickedIds();
    if (scope.value === TICKED && !ids.length) scope.value = "";
    scope.querySelector(`option[value="${TICKED}"]`).disabled = !ids.length;
    scopeNote.hidden = panel.hidden;
    scopeNote.textContent = "This question covers " + scopeWords(ids) + ".";
  }
  function scopeWords(ids) {
    if (scope.value === TICKED) {
      const names = ids.map((id) => docs.get(id).record.title || docs.get(id).record.name);
      return (ids.length === 1 ? "the document " : `${ids.length} documents: `) + names.join("; ");
    }
    const collection = chosenCollection();
    return collection ? "the collection " + collection : "every document";
  }
  // Choosing a collection or every document unticks the documents: one scope at a time.
  scope.addEventListener("change", () => {
    if (scope.value !== TICKED) {
      list.querySelectorAll("input[type=checkbox]").forEach((box) => { box.checked = false; });
    }
    refreshScope();
  });
  // The collection choices: those of the listed documents, and the one chosen now. Rebuilt
  // only when they change, since a rebuild closes the list a user may have open.
  let collectionsShown = "";
  function refreshCollections() {
    const chosen = scope.value;
    const names = new Set(Array.from(docs.values(), (d) => d.record.collection));
    if (chosenCollection()) names.add(chosenCollection());
    const sorted = Array.from(names).sort();
    if (sorted.join("\n") === collectionsShown) return;
    collectionsShown = sorted.join("\n");
    scope.querySelectorAll(`option[value^="${COLLECTION}"]`).forEach((o) => o.remove());
    for (const name of sorted) {
      const option = el("option", "", "the collection " + name);
      option.value = COLLECTION + name;
      scope.append(option);
    }
    scope.value = chosen;
  }

  // -- the list, at start and when a key is entered ---------------------------------------
  // The documents the key sees replace those listed before: another key's are dropped.
  function replaceList(records) {
    const seen = new Set(records.map((r) => r.id));
    Array.from(docs.keys()).filter((id) => !seen.has(id)).forEach(forget);
    records.forEach(show);
  }
  async function loadList() {
    let resp, body;
    try {
      resp = await call(API);
    } catch (e) {
      resp = null;
    }
    if (resp && resp.status === 401) {
      panel.hidden = false;
      replaceList([]);
      showDocMessage(await refusalText("The documents list was", resp) + " Enter the API " +
        "key below; the documents are listed once it is accepted.", "warn");
    } else if (resp && resp.ok && (body = await jsonOf(resp))) {
      panel.hidden = false;
      clearDocMessage();
      replaceList(body.data || []);
    } else {
      panel.hidden = true;  // 404 "this server takes no uploads", an older server, or none
    }
    refreshScope();
  }

  app.scopeFilters = scopeFilters;
  $("api-key").addEventListener("change", loadList);
  loadList();
})();
