"""The check that a bad file's DocumentError is one line naming the file and the problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from retriever_trt.documents import DocumentError, load_document


def one_line_error(path: Path, *fragments: str) -> None:
    with pytest.raises(DocumentError) as caught:
        load_document(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    for fragment in fragments:
        assert fragment in message
