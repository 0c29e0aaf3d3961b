// finrag web page: asks POST /ask with stream:true and renders the server-sent events.
// No inline handlers and no external resources, so a strict CSP (script-src 'self') holds.
// documents.js (the uploads panel) runs after this file and uses what it puts on
// window.finrag: the API key's header, the server's error text, and the element helper;
// it sets window.finrag.scopeFilters, the `filters` a question is asked with.
"use strict";

(function () {
  const KEY_STORAGE = "finrag.apiKey";
  const $ = (id) => document.getElementById(id);
  const form = $("ask-form"), question = $("question"), askBtn = $("ask"), stopBtn = $("stop");
  const keyBox = $("key-box"), keyInput = $("api-key"), forgetKey = $("forget-key");
  const message = $("message"), result = $("result"), state = $("state"), answer = $("answer");
  const meta = $("meta"), intentEl = $("intent"), usageEl = $("usage");
  const timingsBox = $("timings-box"), timingsEl = $("timings");
  const sourcesBox = $("sources-box"), sourcesEl = $("sources");
  const shortBox = $("short-box"), shortEl = $("short-answer");
  const derivationBox = $("derivation-box"), derivationEl = $("derivation");
  const citedBox = $("cited-box"), citedEl = $("cited");
  const filingBox = $("filing-box"), filingTitle = $("filing-title"), filingMeta = $("filing-meta");
  let controller = null;

  // -- API key: only in sessionStorage, sent whenever present -------------------------
  function storedKey() {
    try { return sessionStorage.getItem(KEY_STORAGE) || ""; } catch (e) { return ""; }
  }
  function setKey(value) {
    try {
      if (value) sessionStorage.setItem(KEY_STORAGE, value);
      else sessionStorage.removeItem(KEY_STORAGE);
    } catch (e) { /* storage disabled: the key lives in the field only */ }
  }
  if (storedKey()) { keyBox.hidden = false; keyInput.value = storedKey(); }
  keyInput.addEventListener("input", () => setKey(keyInput.value.trim()));
  function authHeaders() {
    const key = storedKey();
    return key ? { Authorization: "Bearer " + key } : {};
  }
  function showKeyBox() { keyBox.hidden = false; }
  function askForKey() { showKeyBox(); keyInput.focus(); }
  forgetKey.addEventListener("click", () => { setKey(""); keyInput.value = ""; keyInput.focus(); });

  // -- messages ------------------------------------------------------------------------
  function showMessage(text, kind) {
    message.textContent = text;
    message.className = "message " + (kind || "error");
    message.hidden = false;
  }
  function clearMessage() { message.hidden = true; message.textContent = ""; }

  // -- rendering -------------------------------------------------------------------------
  const STOP = new Set(("the a an and or of in on to for by with from at is was were are be " +
    "what which who how much many did does do this that its it as than").split(" "));
  function queryWords(q) {
    return new Set((q.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}.,%-]*/gu) || [])
      .map((w) => w.replace(/[.,]+$/, "")).filter((w) => w.length > 2 && !STOP.has(w)));
  }
  // The chunk text with the question's words marked; built with DOM nodes, never innerHTML.
  function markedText(text, words) {
    const frag = document.createDocumentFragment();
    const re = /[\p{L}\p{N}][\p{L}\p{N}.,%-]*/gu;
    let last = 0, m;
    while ((m = re.exec(text)) !== null) {
      const w = m[0].replace(/[.,]+$/, "");
      if (words.has(w.toLowerCase())) {
        frag.append(text.slice(last, m.index));
        const mark = document.createElement("mark");
        mark.textContent = w;
        frag.append(mark);
        last = m.index + w.length;
      }
    }
    frag.append(text.slice(last));
    return frag;
  }
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  const TIMING_NAMES = [["intent_ms", "intent"], ["retrieve_ms", "retrieve"],
    ["generate_ms", "generate"], ["ttft_ms", "first token"], ["total_ms", "total"]];
  function fmtMs(v) {
    if (v === null || v === undefined) return "skipped";
    return v >= 1000 ? (v / 1000).toFixed(2) + " s" : Math.round(v) + " ms";
  }
  // -- the short answer, its derivation and the cited cells ------------------------------
  // A plain decimal string ("-1452.4") gets thousands separators; anything else is a span.
  function formatNumber(text) {
    const m = /^(-?)(\d+)(\.\d+)?$/.exec(text);
    return m ? m[1] + m[2].replace(/\B(?=(\d{3})+(?!\d))/g, ",") + (m[3] || "") : text;
  }
  function withScale(value, scale) {
    const v = formatNumber(String(value));
    if (scale === "percent") return v + " %";
    return scale ? v + " " + scale : v;
  }
  // TAT-QA's header rows: the first row, then rows without a row label (at most three).
  function headerRows(rows) {
    let n = 1;
    while (n < Math.min(rows.length - 1, 3) && !(rows[n][0] || "").trim()) n++;
    return n;
  }
  // A source's table; cells whose "row,column" is in `cited` are highlighted and say so.
  function tableEl(rows, cited, caption) {
    const table = el("table", "src-table");
    if (caption) table.append(el("caption", "", caption));
    const nHead = headerRows(rows);
    const thead = el("thead"), tbody = el("tbody");
    rows.forEach((row, r) => {
      const tr = el("tr");
      row.forEach((cell, c) => {
        const head = r < nHead || c === 0;
        const td = el(head ? "th" : "td");
        if (head) td.scope = r < nHead ? "col" : "row";
        td.textContent = cell;
        if (cited.has(r + "," + c)) {
          td.classList.add("cited");
          td.append(el("span", "sr-only", " (cited)"));
        }
        tr.append(td);
      });
      (r < nHead ? thead : tbody).append(tr);
    });
    table.append(thead, tbody);
    const wrap = el("div", "table-wrap");
    wrap.append(table);
    return wrap;
  }
  function citedCells(final, sourceId) {
    return new Set((final.citations || []).filter((c) => c.source_id === sourceId)
      .map((c) => c.row_index + "," + c.column_index));
  }
  function renderShort(final) {
    const value = final.short_answer;
    shortEl.replaceChildren();
    if (Array.isArray(value)) {
      const ul = el("ul", "spans");
      value.forEach((v) => ul.append(el("li", "", withScale(v, final.scale))));
      shortEl.append(ul);
    } else if (value !== null && value !== undefined && value !== "") {
      shortEl.textContent = withScale(value, final.scale);
    }
    const hasShort = shortEl.childNodes.length > 0;
    derivationEl.textContent = final.derivation || "";
    derivationBox.hidden = !final.derivation;
    citedEl.replaceChildren();
    const sources = final.sources || [];
    const byId = new Map(sources.map((s, i) => [s.id, [s, i]]));
    const loose = [];
    for (const id of new Set((final.citations || []).map((c) => c.source_id))) {
      const [src, i] = byId.get(id) || [null, -1];
      if (src && src.table && Array.isArray(src.table.rows) && src.table.rows.length) {
        citedEl.append(tableEl(src.table.rows, citedCells(final, id),
          `Source [${i + 1}]: ${src.title || src.doc_id || id}`));
      } else {
        loose.push(...final.citations.filter((c) => c.source_id === id));
      }
    }
    if (loose.length) {
      const ul = el("ul", "loose-cells");
      loose.forEach((c) => ul.append(c.quote
        ? el("li", "quote", `\u201c${c.quote}\u201d`)
        : el("li", "", `${c.row} · ${c.column}: ${c.value}`)));
      citedEl.append(ul);
    }
    citedBox.hidden = citedEl.childNodes.length === 0;
    shortBox.hidden = !(hasShort || final.derivation || !citedBox.hidden);
  }

  // The filing the answer used: its title (company, form, fiscal year) and document id.
  function renderFiling(filing) {
    filingBox.hidden = !filing;
    if (!filing) return;
    filingTitle.textContent = filing.title || filing.doc_id;
    const year = filing.fiscal_year ? "FY" + filing.fiscal_year : "";
    filingMeta.textContent = [filing.company, filing.form, year, "document " + filing.doc_id]
      .filter(Boolean).join(" · ");
  }

  function renderFinal(final, q) {
    renderFiling(final.filing);
    renderShort(final);
    intentEl.textContent = (final.intent || "unknown").replace(/_/g, " ");
    const u = final.usage || {};
    usageEl.textContent = `${u.prompt_tokens ?? "?"} in · ${u.completion_tokens ?? "?"} out`;
    meta.hidden = false;
    timingsEl.replaceChildren();
    for (const [key, name] of TIMING_NAMES) {
      const li = el("li");
      li.dataset.stage = key;
      li.append(el("span", "", name + " "), fmtMs((final.timings || {})[key]));
      timingsEl.append(li);
    }
    timingsBox.hidden = false;
    sourcesEl.replaceChildren();
    const words = queryWords(q);
    (final.sources || []).forEach((s, i) => {
      const li = el("li");
      const det = el("details");
      const sum = el("summary");
      sum.append(el("span", "n", `[${i + 1}]`), el("span", "title", s.title || s.doc_id || "source"),
        el("span", "score", "score " + Number(s.score).toFixed(3)));
      const body = el("div", "passage");
      body.append(el("p", "ids", `document ${s.doc_id} · chunk ${s.id} · score ${Number(s.score).toFixed(4)}`));
      if (s.table && Array.isArray(s.table.rows) && s.table.rows.length) {
        body.append(tableEl(s.table.rows, citedCells(final, s.id), ""));
      } else {
        const quote = el("blockquote");
        quote.append(markedText(s.text || "", words));
        body.append(quote);
      }
      det.append(sum, body);
      li.append(det);
      sourcesEl.append(li);
    });
    sourcesBox.hidden = !(final.sources && final.sources.length);
  }

  // -- refusals ----------------------------------------------------------------------------
  function detailText(body) {
    if (!body || typeof body !== "object") return "";
    if (typeof body.detail === "string") return body.detail;
    if (Array.isArray(body.detail)) {
      return body.detail.map((d) => (d.loc ? d.loc.filter((p) => p !== "body").join(".") + ": " : "") +
        (d.msg || JSON.stringify(d))).join("; ");
    }
    if (body.error && body.error.message) return body.error.message;
    return "";
  }
  // The server's own words from a refused request's body ("" when it has none).
  async function responseText(resp) {
    try {
      const raw = await resp.text();
      try { return detailText(JSON.parse(raw)); } catch (e) { return raw.slice(0, 500); }
    } catch (e) { return ""; }  // body unreadable
  }
  async function refusal(resp) {
    const text = await responseText(resp);
    if (resp.status === 401 || resp.status === 403) {
      askForKey();
      const had = storedKey() ? "The API key was not accepted" : "This server needs an API key";
      showMessage(`${had} (${resp.status}${text ? ": " + text : ""}). Enter it above and ask again.`);
      return;
    }
    const after = resp.headers.get("Retry-After");
    if ((resp.status === 503 || resp.status === 429) && after) {
      const when = /^\d+$/.test(after) ? `in ${after} s` : `after ${after}`;
      showMessage(`The server is busy (${resp.status}${text ? ": " + text : ""}). Please try again ${when}.`, "warn");
      return;
    }
    if (resp.status === 503) {  // no Retry-After: not load but a server that cannot serve
      showMessage(`The server is unavailable (503${text ? ": " + text : ""}).`);
      return;
    }
    const who = resp.status < 500 ? "The server refused the question" : "The server failed";
    showMessage(`${who} (${resp.status}): ${text || resp.statusText || "no details"}`);
  }

  // -- asking -------------------------------------------------------------------------------
  function setBusy(busy) {
    askBtn.disabled = busy;
    stopBtn.disabled = !busy;
    answer.classList.toggle("streaming", busy);
    form.setAttribute("aria-busy", busy ? "true" : "false");
  }
  function resetResult() {
    answer.textContent = "";
    meta.hidden = true; timingsBox.hidden = true; sourcesBox.hidden = true;
    shortBox.hidden = true; filingBox.hidden = true;
    timingsEl.replaceChildren(); sourcesEl.replaceChildren(); citedEl.replaceChildren();
    result.hidden = false;
  }

  async function ask(q) {
    clearMessage();
    resetResult();
    state.textContent = "Thinking…";
    setBusy(true);
    controller = new AbortController();
    const body = { question: q, stream: true };
    const topK = parseInt($("top-k").value, 10), maxTokens = parseInt($("max-tokens").value, 10);
    if (topK > 0) body.top_k = topK;
    if (maxTokens > 0) body.max_tokens = maxTokens;
    const filters = window.finrag.scopeFilters && window.finrag.scopeFilters();
    if (filters) body.filters = filters;
    const headers = { "Content-Type": "application/json", Accept: "text/event-stream",
      ...authHeaders() };
    let final = null, gotToken = false, failure = null;
    try {
      const resp = await fetch("/ask", { method: "POST", headers, body: JSON.stringify(body),
        signal: controller.signal, cache: "no-store" });
      if (!resp.ok) {
        result.hidden = true;
        await refusal(resp);
        state.textContent = "";
        return;
      }
      state.textContent = "Answering…";
      const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value.replace(/\r\n?/g, "\n");
        let cut;
        while ((cut = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const data = block.split("\n").filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5).replace(/^ /, "")).join("\n");
          if (!data) continue;
          let ev;
          try { ev = JSON.parse(data); } catch (e) { continue; }
          if (ev.type === "token") {
            gotToken = true;
            answer.append(ev.text);
          } else if (ev.type === "final") {
            final = ev;
            renderFinal(ev, q);
          } else if (ev.type === "error" || ev.error) {
            failure = (ev.error && ev.error.message) || ev.message || "the server reported an error";
          }
        }
      }
    } catch (e) {
      if (e && e.name === "AbortError") {
        state.textContent = "Stopped";
        showMessage("Stopped. The partial answer is kept below and is incomplete.", "warn");
        return;
      }
      if (!gotToken && !final) {
        result.hidden = answer.textContent === "";
        showMessage("Could not reach the server, or the connection dropped before the answer " +
          "started. Check that finrag is running and ask again.");
        state.textContent = "";
        return;
      }
    } finally {
      setBusy(false);
      controller = null;
    }
    if (failure) {
      state.textContent = "Failed";
      showMessage("The server stopped with an error: " + failure);
    } else if (!final) {
      state.textContent = "Interrupted";
      showMessage("The connection dropped in the middle of the answer; what arrived is kept " +
        "below and is incomplete. Ask again to retry.");
    } else {
      state.textContent = "Done";
      if (!answer.textContent.trim() && final.intent) answer.textContent = "(no answer text)";
    }
  }

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const q = question.value.trim();
    if (!q) { showMessage("Type a question first.", "warn"); question.focus(); return; }
    if (controller) return;
    ask(q);
  });
  question.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  stopBtn.addEventListener("click", () => { if (controller) controller.abort(); });
  window.finrag = { authHeaders, showKeyBox, responseText, el };
  question.focus();
})();
