"""Embedding runtimes (TensorRT, ONNX Runtime, torch) behind one `Embedder` interface,
`load_embedder` (the runtime that fits a file), the metadata exported files carry, and the
dynamic-shape profiles the runtimes batch by."""
