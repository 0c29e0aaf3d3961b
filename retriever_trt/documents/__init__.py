"""Documents: a loader a format, tables, tagged facts and metadata (see `model.py`)."""

from retriever_trt.documents.loaders import SUFFIXES, load_document
from retriever_trt.documents.model import (
    Block,
    Document,
    DocumentError,
    DocumentMetadata,
    Fact,
    Form,
    Paragraph,
    TableBlock,
)

__all__ = ["SUFFIXES", "Block", "Document", "DocumentError", "DocumentMetadata", "Fact", "Form",
           "Paragraph", "TableBlock", "load_document"]
