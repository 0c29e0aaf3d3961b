"""Small hostile documents built in the tests: a PDF whose page tree points twice at each
child (PDFium counts 2**levels pages in a few kB), PDFs whose streams inflate to far more
than they weigh, and a .docx whose XML does."""

from __future__ import annotations

import io
import zipfile
import zlib

DEFLATE_BLOCK = 1 << 20
PAGE_TEXT = b"BT /F1 12 Tf 72 720 Td (Quarterly revenue and margins) Tj ET"
STROKE = b"\n0 0 m 1 1 l S"


def pdf(objects: list[bytes], root: int = 1) -> bytes:
    """A PDF of `objects` (object k is objects[k - 1]), with its xref table."""
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.write(b"".join(b"%010d 00000 n \n" % o for o in offsets))
    out.write(b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n"
              % (len(objects) + 1, root, xref))
    return out.getvalue()


def stream(data: bytes, flate: bool = False) -> bytes:
    extra = b" /Filter /FlateDecode" if flate else b""
    return b"<< /Length %d%s >>\nstream\n%s\nendstream" % (len(data), extra, data)


def deflated_zeros(size: int) -> bytes:
    """`size` bytes of spaces, deflated (about 1,000 times smaller)."""
    packer, block = zlib.compressobj(9), b" " * DEFLATE_BLOCK
    parts = [packer.compress(block) for _ in range(size // DEFLATE_BLOCK)]
    return b"".join(parts) + packer.flush()


def doubled_page_tree(levels: int, strokes: int = 0) -> bytes:
    """One page, reached 2**levels times: each /Pages node lists its child twice. The page
    draws `strokes` lines besides its text: PDFium parses them again at each reference
    (20,000 cost about 10 ms a page, 0 about 0.15 ms), so the file's reading time does
    not hang on the machine's speed alone."""
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    page = (b"<< /Type /Page /Parent 5 0 R /MediaBox [0 0 612 792] /Contents 3 0 R "
            b"/Resources << /Font << /F1 2 0 R >> >> >>")
    objects = [b"<< /Type /Catalog /Pages %d 0 R >>" % (5 + levels - 1), font,
               stream(PAGE_TEXT + STROKE * strokes), page]
    child = 4
    for level in range(1, levels + 1):
        objects.append(b"<< /Type /Pages /Kids [%d 0 R %d 0 R] /Count %d >>"
                       % (child, child, 2 ** level))
        child = len(objects)
    return pdf(objects)


def inflating_pdf(streams: int, inflated: int) -> bytes:
    """A one-page PDF whose page draws `streams` content streams of `inflated` bytes each."""
    bomb = stream(deflated_zeros(inflated), flate=True)
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    refs = b" ".join(b"%d 0 R" % (5 + k) for k in range(streams + 1))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents [%s] "
               b"/Resources << /Font << /F1 4 0 R >> >> >>" % refs, font, stream(PAGE_TEXT)]
    return pdf(objects + [bomb] * streams)


def inflating_docx(inflated: int) -> bytes:
    """A .docx whose document.xml is `inflated` bytes of one-word paragraphs."""
    paragraph = b"<w:p><w:r><w:t>margin</w:t></w:r></w:p>"
    ns = b'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr("[Content_Types].xml", (
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
            'content-types"><Default Extension="rels" ContentType="application/vnd.openxml'
            'formats-package.relationships+xml"/><Override PartName="/word/document.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.'
            'document.main+xml"/></Types>'))
        z.writestr("_rels/.rels", (
            '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/'
            'package/2006/relationships"><Relationship Id="r1" Type="http://schemas.'
            'openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
            'Target="word/document.xml"/></Relationships>'))
        with z.open("word/document.xml", "w", force_zip64=True) as xml:
            xml.write(b'<?xml version="1.0"?><w:document %s><w:body>' % ns)
            block = paragraph * (DEFLATE_BLOCK // len(paragraph))
            for _ in range(inflated // len(block)):
                xml.write(block)
            xml.write(b"</w:body></w:document>")
    return out.getvalue()
