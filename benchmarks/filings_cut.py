"""Write tests/data/filings: the few SEC filings the tests read, cut to a few MB.

    python3 benchmarks/filings_cut.py [--filings DIR] [--out DIR]

A clone has no ../shared beside it, so the tests read the repository's own copy. Four
inline-XBRL filings are copied whole (WHOLE). Three more are the HTML twins of printed PDFs;
the tests read their cover and statements, so each keeps its first page (the cover, after
the ix:header) and the pages of its statements (HTML_PAGES): every page is the body's
top-level elements up to a page break, the ix:header stays, less the contexts and units
that no kept fact names. The four PDFs keep their cover pages and statements (PDF_PAGES),
copied with pypdfium2 (fonts and text as printed). tests/data/filings/README.md says
which pages were kept.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
from lxml import etree

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from filings_gold import FILINGS  # noqa: E402

OUT = ROOT / "tests" / "data" / "filings"
WHOLE = ("aapl-10-k-2024-11-01.html", "aapl-10-q-2025-08-01.html", "ibm-10-k-2025-02-25.html",
         "nvda-10-k-2025-02-26.html")
# 0-based pages of the HTML (the loader's page numbers are one more): the cover, the
# statements, and Visa's page 88, the only one showing the net income its questions ask.
HTML_PAGES = {
    "jnj-10-q-2025-07-24.html": (0, *range(5, 12)),
    "tsla-10-q-2025-07-24.html": (0, *range(3, 9)),
    "v-10-k-2024-11-13.html": (0, *range(56, 63), 88),
}
# 1-based pages of the PDFs, as the loader and citations number them: the cover (two pages,
# as cover_page.COVER_PAGES reads) and the statements.
PDF_PAGES = {
    "aapl-10-k-2024-11-01.pdf": (1, 2, *range(41, 46)),
    "jnj-10-q-2025-07-24.pdf": (1, 2, *range(11, 20)),
    "tsla-10-q-2025-07-24.pdf": (1, 2, *range(4, 11)),
    "v-10-k-2024-11-13.pdf": (1, 2, *range(88, 96)),
}
XHTML = "{http://www.w3.org/1999/xhtml}"
XBRLI = "{http://www.xbrl.org/2003/instance}"
IX_RESOURCES = "{http://www.xbrl.org/2013/inlineXBRL}resources"
PAGE_BREAK = re.compile(r"page-break-after\s*:\s*always", re.I)


def pages_of(body: Any) -> list[list[Any]]:
    """The body's top-level elements, grouped into pages at each page break."""
    pages: list[list[Any]] = [[]]
    for el in body:
        pages[-1].append(el)
        if PAGE_BREAK.search(el.get("style", "")):
            pages.append([])
    return pages


def prune_resources(root: Any) -> None:
    """Drop the contexts and units that no fact left in the document refers to."""
    used = {a for el in root.iter() for a in (el.get("contextRef"), el.get("unitRef")) if a}
    resources = root.find(f".//{IX_RESOURCES}")
    for el in list(resources):
        if el.tag in (f"{XBRLI}context", f"{XBRLI}unit") and el.get("id") not in used:
            resources.remove(el)


def cut_html(src: Path, dst: Path, keep: tuple[int, ...]) -> int:
    """Write the pages `keep` of `src` to `dst`; returns the source's page count."""
    tree = etree.parse(str(src), etree.XMLParser(huge_tree=True, resolve_entities=False,
                                                  no_network=True))
    pages = pages_of(tree.getroot().find(f"{XHTML}body"))
    for number, page in enumerate(pages):
        for el in page if number not in keep else []:
            el.getparent().remove(el)
    prune_resources(tree.getroot())
    tmp = dst.with_suffix(".tmp")
    tree.write(str(tmp), xml_declaration=True, encoding="ASCII")
    tmp.replace(dst)
    return len(pages)


def cut_pdf(src: Path, dst: Path, keep: tuple[int, ...]) -> int:
    """Write the pages `keep` (1-based) of `src` to `dst`; returns the source's page count."""
    source, out = pdfium.PdfDocument(str(src)), pdfium.PdfDocument.new()
    try:
        out.import_pages(source, [p - 1 for p in keep])
        tmp = dst.with_suffix(".tmp")
        out.save(str(tmp))
        tmp.replace(dst)
        return len(source)
    finally:
        out.close()
        source.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--filings", type=Path, default=FILINGS, help="the shared filings folder")
    ap.add_argument("--out", type=Path, default=OUT, help="where the tests read them")
    args = ap.parse_args(argv)
    if not args.filings.is_dir():
        raise SystemExit(f"--filings {args.filings}: not a folder (the shared SEC filings live "
                         "in ../shared/data/filings)")
    (args.out / "pdf").mkdir(parents=True, exist_ok=True)
    for name in WHOLE:
        shutil.copyfile(args.filings / name, args.out / name)
        print(f"{name}: whole")
    for name, keep in HTML_PAGES.items():
        total = cut_html(args.filings / name, args.out / name, keep)
        print(f"{name}: pages {', '.join(str(p + 1) for p in keep)} of {total}")
    for name, keep in PDF_PAGES.items():
        total = cut_pdf(args.filings / "pdf" / name, args.out / "pdf" / name, keep)
        print(f"pdf/{name}: pages {', '.join(map(str, keep))} of {total}")
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    print(f"{args.out}: {size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
