"""Indexing: a corpus read (`ingest.py`), cut into chunks (`chunking.py`) and encoded, each
distinct text once, while reading goes on (`encoding.py`, `streaming_encoder.py`,
`parallel_encoder.py`)."""
