"""Answers over real SEC filings: the filings question set through POST /ask of a real server.

    python benchmarks/filings_eval.py [--questions FILE] [--half {a,b,all}] [--limit N]
        [--concurrency C] [--scoped] [--corpus {html,pdf,pdf-only}] [--pdf-dir DIR]...
        [--twins-only] [--rules]
        [--out results.jsonl] [--url http://127.0.0.1:8000]

The 25 filings of ../shared/data/filings (benchmarks/data/filings_questions.jsonl asks
about them; benchmarks/filings_gold.py built and verified its gold) are linked into a
corpus folder under engines/ — with `--corpus pdf` the four that have a PDF twin in pdf/
are linked as PDF instead of HTML; with `--corpus pdf-only` those four PDFs alone, and only
their filings' questions are asked (the gold is the same filing's numbers); `--pdf-dir DIR`
(repeatable) adds a folder of more twins, e.g. /work/pdfshelf's 21 Chromium prints, and
`--twins-only` keeps only the filings with a twin and their questions, so `--corpus html
--twins-only` asks the pdf-only questions of the same filings' HTML; a `--filings` folder's
own PDFs are filings too, so `--filings SHELF --corpus pdf-only --questions FILE` asks a
shelf of PDF 10-Ks (benchmarks/pdf_dev_shelf.py's) — and indexed
with `finrag index --corpus DIR --out DIR2` into engines/filings-index-<mode>-<hash> (the
hash covers the file list and the code of retriever_trt/, so the index is rebuilt only
when one changes). Then `finrag serve --index DIR2` starts on a free loopback port and
every question goes to POST /ask, `--concurrency` at a time: unscoped by default (the
question alone must find its filing), with --scoped under filters {"doc_id": <the gold
filing>}. With --url the questions go to a server already running (its index is yours to
build). With --rules no index or server: the filing answer rules alone, in process
(benchmarks/filings_rules.py).

`--questions` reads another set of the same format over the same filings: the held-out set
benchmarks/data/filings_heldout.jsonl (hand-written, kinds segment, quarter, jargon, ratio,
compare, cover, absent, text; benchmarks/filings_heldout_check.py verifies it). Its compare
questions name two filings (`doc_ids`: either is the right filing; --scoped filters to the
first) and its absent questions have a null gold.

Printed: the share of wrong numbers shown (a number where the gold is null or a different
number) over all questions, first; EM and right-filing rate overall, by type (the types of
the set read), lookups against computations, by form
and by half (and on the PDF filings' questions with a PDF corpus), refusals (no retrieval:
no sources), the share of absent questions answered with no number, 5xx and other failed
requests, latency p50/p95, and the command. Scoring: benchmarks/filings_score.py.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from enum import Enum
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
# This checkout's code, not whichever finrag is installed (--rules runs it in process).
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from filings_gold import FILINGS, QUESTIONS, load_questions  # noqa: E402
from filings_rules import rules_answers  # noqa: E402
from filings_score import (  # noqa: E402
    gives_number,
    is_right,
    same_filing,
    used_filing,
    wrong_number,
)
from reproduce import print_command  # noqa: E402
from serving import free_port  # noqa: E402

# The types answered by computing from more than one figure (of either set).
COMPUTED_TYPES = ("change", "margin", "ratio", "compare")
ABSENT = "absent"  # the held-out kind whose gold is null: the filing does not hold the figure
READY_TIMEOUT_S = 1800     # a first start may build engines/ (models, ONNX) before /ready
REQUEST_TIMEOUT_S = 600
HTTP_SERVER_ERROR = 500


class Corpus(str, Enum):
    """What is indexed: the HTML filings; the same with the PDF twins in place of their HTML;
    the PDF twins alone (and only their filings' questions are asked)."""

    HTML = "html"
    PDF = "pdf"
    PDF_ONLY = "pdf-only"

    def __str__(self) -> str:  # as --help lists the choices
        return self.value


def pdf_twins(filings: Path, pdf_dirs: list[Path]) -> dict[str, Path]:
    """Each filing's PDF twin by stem: those of filings/pdf/, then of each --pdf-dir (an
    earlier folder's twin wins, so the shared four stay what they were), then the PDFs of
    filings/ itself (a shelf of PDF filings: `--filings SHELF --corpus pdf-only`)."""
    twins: dict[str, Path] = {}
    for folder in [filings / "pdf", *pdf_dirs, filings]:
        for pdf in sorted(folder.glob("*.pdf")):
            twins.setdefault(pdf.stem, pdf)
    return twins


def corpus_folder(filings: Path, corpus: Corpus, engines: Path = ROOT / "engines",
                  twins: dict[str, Path] | None = None,
                  stems: set[str] | None = None) -> Path:
    """engines/filings-corpus-<mode>/: links to the filings (no README, no pdf/ duplicates).
    `twins` (default: filings/pdf/'s) stand in for their HTML under a PDF corpus; `stems`,
    when given, keeps only those filings."""
    out = engines / f"filings-corpus-{corpus.value}"
    if twins is None:
        twins = pdf_twins(filings, [])
    if corpus is Corpus.HTML:
        twins = {}
    wanted = {}
    htmls = sorted(filings.glob("*.htm*"))
    shelf = [p for p in sorted(filings.glob("*.pdf")) if p.stem not in {h.stem for h in htmls}]
    for html in [*htmls, *shelf]:
        src = twins.get(html.stem, html)
        if corpus is Corpus.PDF_ONLY and src.suffix != ".pdf":
            continue
        if stems is not None and html.stem not in stems:
            continue
        wanted[src.name] = src.resolve()
    out.mkdir(parents=True, exist_ok=True)
    for old in out.iterdir():
        if old.name not in wanted or old.resolve() != wanted[old.name]:
            old.unlink()
    for name, src in wanted.items():
        if not (out / name).exists():
            (out / name).symlink_to(src)
    return out


def index_folder(corpus: Path) -> Path:
    """The index's folder, named by a hash of what it is built from: the files and the code
    that reads, chunks and encodes them (the answer rules of pipeline/rag read an index at
    serving time, so a change there does not call for a rebuild)."""
    h = hashlib.sha256()
    for f in sorted(corpus.iterdir()):
        h.update(f"{f.name}:{f.stat().st_size}".encode())
    for src in sorted((ROOT / "retriever_trt").rglob("*.py")):
        h.update(src.read_bytes())
    return ROOT / "engines" / f"{corpus.name.replace('corpus', 'index')}-{h.hexdigest()[:10]}"


def finrag(*args: str) -> list[str]:
    return [sys.executable, "-m", "pipeline.cli", *args]


def build_index(corpus: Path, index: Path) -> None:
    if index.is_dir():
        print(f"index: {index} (cached)", file=sys.stderr)
        return
    tmp = index.with_name(index.name + ".partial")
    cmd = finrag("index", "--corpus", str(corpus), "--out", str(tmp))
    print(f"indexing: {shlex.join(cmd)}", file=sys.stderr)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=_env())
    if done.returncode != 0:
        raise SystemExit(f"finrag index failed (exit {done.returncode}): {shlex.join(cmd)}")
    tmp.rename(index)
    print(f"indexed in {time.perf_counter() - t0:.0f}s: {index}", file=sys.stderr)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}


def start_server(index: Path, log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    cmd = finrag("serve", "--index", str(index), "--host", "127.0.0.1", "--port", str(port))
    print(f"serving: {shlex.join(cmd)} (log {log})", file=sys.stderr)
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=_env(), stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"finrag serve exited with {proc.returncode}; see {log}")
        try:
            if httpx.get(f"{base}/ready", timeout=2).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        time.sleep(1)
    proc.terminate()
    raise SystemExit(f"finrag serve was not ready within {READY_TIMEOUT_S}s; see {log}")


async def ask_all(base: str, records: list[dict], concurrency: int, scoped: bool) -> list[dict]:
    gate = asyncio.Semaphore(concurrency)
    done = 0

    async def one(client: httpx.AsyncClient, r: dict) -> dict:
        nonlocal done
        body: dict = {"question": r["question"]}
        if scoped:
            body["filters"] = {"doc_id": r["doc_id"]}
        async with gate:
            t0 = time.perf_counter()
            try:
                resp = await client.post("/ask", json=body)
                status, data = resp.status_code, (resp.json() if resp.status_code == 200 else
                                                  {"error": resp.text[:500]})
            except (httpx.HTTPError, ValueError) as exc:
                status, data = 0, {"error": repr(exc)}
            ms = (time.perf_counter() - t0) * 1000
        done += 1
        if done % 10 == 0 or done == len(records):
            print(f"  {done}/{len(records)} answered", file=sys.stderr)
        return result_row(r, status, data, ms)

    async with httpx.AsyncClient(base_url=base, timeout=REQUEST_TIMEOUT_S) as client:
        return await asyncio.gather(*(one(client, r) for r in records))


def result_row(r: dict, status: int, data: dict, ms: float) -> dict:
    ok = status == 200
    used = used_filing(data) if ok else None
    return {"id": r["id"], "type": r["type"], "form": r["form"], "half": r["half"],
            "doc_id": r["doc_id"], "question": r["question"], "gold": r["answer"],
            "unit": r["unit"], "status": status, "em": ok and is_right(r, data),
            "right_filing": any(same_filing(used, d) for d in r.get("doc_ids") or [r["doc_id"]]),
            "used_filing": used, "wrong_number": ok and wrong_number(r, data),
            "no_number": not (ok and gives_number(data.get("short_answer"))),
            "refused": ok and not data.get("sources"), "intent": data.get("intent"),
            "short_answer": data.get("short_answer"), "scale": data.get("scale"),
            "answer": data.get("answer"), "derivation": data.get("derivation"),
            "filing": data.get("filing"), "error": data.get("error"),
            "latency_ms": round(ms, 1)}


def _pct(rows: list[dict], key: str) -> str:
    return f"{100 * sum(r[key] for r in rows) / len(rows):5.1f}" if rows else "    -"


def types_of(rows: list[dict]) -> list[str]:
    """The question types present, in the order they first appear."""
    return list(dict.fromkeys(r["type"] for r in rows))


def report(rows: list[dict], pdf_stems: set[str]) -> list[str]:
    n = len(rows)
    wrong = sum(r["wrong_number"] for r in rows)
    lines = [f"*** WRONG NUMBERS SHOWN: {wrong}/{n} ({_pct(rows, 'wrong_number').strip()}%) "
             "-- a number given where the gold is null or a different number ***",
             f"{'':<16} {'n':>4} {'EM':>6} {'filing':>7}"]

    def line(name: str, sel: list[dict]) -> None:
        lines.append(f"{name:<16} {len(sel):>4} {_pct(sel, 'em'):>6} {_pct(sel, 'right_filing'):>7}")

    line("overall", rows)
    for t in types_of(rows):
        line(t, [r for r in rows if r["type"] == t])
    line("computations", [r for r in rows if r["type"] in COMPUTED_TYPES])
    for form in sorted({r["form"] for r in rows}):
        line(form, [r for r in rows if r["form"] == form])
    for h in ("a", "b"):
        line(f"half {h}", [r for r in rows if r["half"] == h])
    if pdf_stems:
        line("PDF filings", [r for r in rows if Path(r["doc_id"]).stem in pdf_stems])
        html = [r for r in rows if Path(r["doc_id"]).stem not in pdf_stems]
        if html:
            line("HTML filings", html)
    lat = sorted(r["latency_ms"] for r in rows)
    p95 = statistics.quantiles(lat, n=20)[18] if len(lat) > 1 else lat[0]
    errors = [r for r in rows if r["status"] != 200]
    absent = [r for r in rows if r["type"] == ABSENT]
    if absent:
        lines.append(f"absent questions answered with no number: "
                     f"{sum(r['no_number'] for r in absent)}/{len(absent)} "
                     f"({_pct(absent, 'no_number').strip()}%)")
    lines += [
        f"right filing: {sum(r['right_filing'] for r in rows)}/{n}; refused (no sources): "
        f"{sum(r['refused'] for r in rows)}/{n}; no short answer: "
        f"{sum(r['status'] == 200 and r['short_answer'] in (None, '', []) for r in rows)}/{n}",
        f"5xx: {sum(r['status'] >= HTTP_SERVER_ERROR for r in rows)}; other failed requests: "
        f"{sum(r['status'] < HTTP_SERVER_ERROR for r in errors)}",
        f"latency per question (ms, end to end over HTTP): p50 {statistics.median(lat):.0f}, "
        f"p95 {p95:.0f}",
    ]
    return lines


def sample(records: list[dict], half: str, limit: int | None) -> list[dict]:
    """The half's questions; with `limit`, each type in proportion, in hash order."""
    chosen = [r for r in records if half == "all" or r["half"] == half]
    if limit is None or limit >= len(chosen):
        return chosen
    order = sorted(chosen, key=lambda r: hashlib.sha256(r["id"].encode()).digest())
    by_type = {t: [r for r in order if r["type"] == t] for t in types_of(order)}
    share = {t: len(v) * limit / len(chosen) for t, v in by_type.items()}
    take = {t: int(s) for t, s in share.items()}
    for t in sorted(share, key=lambda t: share[t] - take[t], reverse=True)[: limit - sum(take.values())]:
        take[t] += 1
    return [r for t in by_type for r in by_type[t][: take[t]]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=Path, default=QUESTIONS, help="the question set jsonl")
    ap.add_argument("--filings", type=Path, default=FILINGS, help="the shared filings folder")
    ap.add_argument("--half", choices=("a", "b", "all"), default="all")
    ap.add_argument("--limit", type=int, help="a sample of N questions, stratified by type")
    ap.add_argument("--concurrency", type=int, default=8, help="questions in flight at once")
    ap.add_argument("--scoped", action="store_true", help="filters={doc_id: the gold filing}")
    ap.add_argument("--corpus", type=Corpus, choices=list(Corpus), default=Corpus.HTML,
                    help="html: the HTML filings; pdf: the 4 with a PDF twin as PDF; pdf-only: "
                    "the 4 PDFs alone, and their filings' questions")
    ap.add_argument("--pdf-dir", type=Path, action="append", default=[],
                    help="a folder of more PDF twins (<filing stem>.pdf), repeatable: with "
                    "--corpus pdf or pdf-only they stand in for their HTML like filings/pdf/'s")
    ap.add_argument("--twins-only", action="store_true", help="only the filings with a PDF "
                    "twin and their questions, whatever the corpus (with --corpus html: the "
                    "pdf-only questions over the same filings' HTML)")
    ap.add_argument("--rules", action="store_true", help="the filing answer rules alone, in "
                    "process (no index, no server): benchmarks/filings_rules.py")
    ap.add_argument("--url", help="ask this running server instead of indexing and starting one")
    ap.add_argument("--out", type=Path, help="write per-question results (JSONL) here")
    args = ap.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        raise SystemExit("--limit: give a positive number of questions")
    if args.concurrency < 1:
        raise SystemExit("--concurrency: give at least 1")
    if not args.questions.is_file():
        raise SystemExit(f"--questions {args.questions}: no such file")
    if args.url is None and not args.filings.is_dir():
        raise SystemExit(f"--filings {args.filings}: not a folder (the shared SEC filings live in "
                         "../shared/data/filings)")
    for folder in args.pdf_dir:
        if not folder.is_dir():
            raise SystemExit(f"--pdf-dir {folder}: not a folder")
    twins = pdf_twins(args.filings, args.pdf_dir)
    pdf_stems = set(twins) if args.corpus is not Corpus.HTML else set()
    records = load_questions(args.questions)
    if args.corpus is Corpus.PDF_ONLY or args.twins_only:
        records = [r for r in records if Path(r["doc_id"]).stem in twins]
    records = sample(records, args.half, args.limit)
    t0 = time.perf_counter()
    rows = asked(args, records, twins)
    wall = time.perf_counter() - t0
    how = "answer rules in process" if args.rules else \
        f"{'scoped' if args.scoped else 'unscoped'}, concurrency {args.concurrency}"
    print(f"\nfilings question set, half {args.half}: {len(rows)} questions"
          f"{' (stratified sample)' if args.limit else ''}, corpus {args.corpus.value}, {how}; "
          f"{wall:.0f}s ({len(rows) / wall:.2f} q/s)")
    print("\n".join(report(rows, pdf_stems)))
    if args.out:
        args.out.write_text("".join(json.dumps(r, default=str) + "\n" for r in rows),
                            encoding="utf-8")
        print(f"per-question results: {args.out}")
    print_command(__file__, argv)
    return 0


def asked(args: argparse.Namespace, records: list[dict], twins: dict[str, Path]) -> list[dict]:
    """The result rows: from the answer rules in process, a running server, or one started
    on the corpus's index (built first when not cached)."""
    stems = set(twins) if args.twins_only else None
    if args.rules:
        corpus = corpus_folder(args.filings, args.corpus, twins=twins, stems=stems)
        return [result_row(r, 200, data, ms) for r, data, ms in rules_answers(corpus, records)]
    proc = None
    if args.url:
        base = args.url.rstrip("/")
    else:
        corpus = corpus_folder(args.filings, args.corpus, twins=twins, stems=stems)
        index = index_folder(corpus)
        build_index(corpus, index)
        proc, base = start_server(index, ROOT / "engines" / "filings-serve.log")
    try:
        return asyncio.run(ask_all(base, records, args.concurrency, args.scoped))
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=60)


if __name__ == "__main__":
    sys.exit(main())
