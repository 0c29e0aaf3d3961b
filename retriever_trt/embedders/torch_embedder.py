"""The torch reference embedder: the export's torch encoder behind the `Embedder` interface."""

from __future__ import annotations

from onnx_export.encoder import TorchEncoder
from retriever_trt.embedders.embedder import Embedder


class TorchEmbedder(TorchEncoder, Embedder):
    """Reference backend: transformers' encoder in torch, mean pooling, L2 normalisation."""

    precision = "fp32"
