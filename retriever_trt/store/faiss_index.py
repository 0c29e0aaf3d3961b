"""`VectorIndex`: FAISS inner-product search over L2-normalised embeddings.

The FAISS index factory string is a setting: "Flat" (exact, the default), "HNSW32"
(graph, no training) or "IVF{nlist},PQ{m}" (trained, compressed). With unit vectors the
inner product is the cosine similarity. A GPU copy is used when faiss-gpu sees a GPU.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import faiss
import numpy as np
from tqdm.auto import tqdm

from retriever_trt.embedders.embedder import describe_encoder
from retriever_trt.store.storage import (
    IndexFileError,
    atomic_directory,
    read_manifest,
    rebuild_hint,
    resolve_dir,
    write_manifest,
)

INDEX_FILE = "index.faiss"
KIND = "vector-index"
# The manifest key of the encoder file's sha256 (retriever_trt.embedders.embedder.Embedder.file_sha256).
ENCODER_SHA_KEY = "encoder_sha256"


class EmbedderMismatchError(IndexFileError):
    """The index was built by another embedder (id, precision or dim)."""


def gpu_count() -> int:
    # faiss-cpu has no get_num_gpus on some builds; treat that as "no GPU".
    try:
        return int(faiss.get_num_gpus())
    except AttributeError:
        return 0


def min_training_vectors(factory: str) -> int:
    """Fewest vectors FAISS accepts to train `factory` (0 when it needs no training)."""
    need = 0
    ivf = re.search(r"IVF(\d+)", factory)
    if ivf:
        need = int(ivf.group(1))
    pq = re.search(r"PQ(\d+)(?:x(\d+))?", factory)
    if pq:
        # k-means over 2**nbits centroids per sub-quantizer; nbits defaults to 8.
        need = max(need, 2 ** int(pq.group(2) or 8))
    return need


class VectorIndex:
    """FAISS index with the embedder identity and corpus hash it was built for."""

    def __init__(
        self,
        dim: int,
        factory: str = "Flat",
        model_id: str = "",
        precision: str = "",
        corpus_hash: str = "",
        nprobe: int = 16,
        ef_search: int = 128,
        use_gpu: bool | None = None,
        encoder_sha256: str = "",
    ) -> None:
        self.dim = dim
        self.factory = factory
        self.model_id = model_id
        self.precision = precision
        self.corpus_hash = corpus_hash
        self.encoder_sha256 = encoder_sha256
        self.nprobe = nprobe
        self.ef_search = ef_search
        self.use_gpu = gpu_count() > 0 if use_gpu is None else use_gpu
        self._index = self._new_index()

    @classmethod
    def for_embedder(cls, embedder: Any, factory: str = "Flat", **kwargs: Any) -> VectorIndex:
        return cls(embedder.dim, factory, embedder.model_id, embedder.precision,
                   encoder_sha256=encoder_sha256(embedder), **kwargs)

    def _new_index(self) -> Any:
        try:
            index = faiss.index_factory(self.dim, self.factory, faiss.METRIC_INNER_PRODUCT)
        except RuntimeError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise ValueError(
                f"invalid FAISS factory {self.factory!r} for dim {self.dim}: {first} "
                "(try 'Flat', 'HNSW32' or 'IVF64,PQ16'; PQ's m must divide dim)"
            ) from None
        return self._to_device(index)

    def _to_device(self, index: Any) -> Any:
        if not self.use_gpu:
            return index
        try:
            # The GPU index must not outlive its resources object: keep it on self.
            self._gpu_res = faiss.StandardGpuResources()
            return faiss.index_cpu_to_gpu(self._gpu_res, 0, index)
        except (AttributeError, RuntimeError) as exc:
            # HNSW has no GPU implementation; the CPU index serves instead.
            warnings.warn(f"FAISS {self.factory!r} stays on CPU: {exc}", stacklevel=3)
            return index

    def __len__(self) -> int:
        return int(self._index.ntotal)

    @property
    def on_gpu(self) -> bool:
        return "Gpu" in type(self._index).__name__

    def _check(self, vectors: np.ndarray, what: str) -> np.ndarray:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise ValueError(f"{what} must have shape (n, {self.dim}), got {vectors.shape}")
        return vectors

    def build(self, vectors: np.ndarray, batch_size: int = 8192, progress: bool = False) -> None:
        """Replace the contents with `vectors`, training the index first if it needs it."""
        vectors = self._check(vectors, "vectors")
        self._index = self._new_index()
        if not self._index.is_trained:
            need = min_training_vectors(self.factory)
            if len(vectors) < need:
                raise ValueError(
                    f"FAISS {self.factory!r} needs at least {need} vectors to train, got "
                    f"{len(vectors)} (about {39 * need} train it well); use 'Flat' or "
                    "'HNSW32' for a corpus this small, or fewer IVF lists / PQ bits"
                )
            self._index.train(vectors)
        self.add(vectors, batch_size, progress)

    def add(self, vectors: np.ndarray, batch_size: int = 8192, progress: bool = False) -> None:
        vectors = self._check(vectors, "vectors")
        if not self._index.is_trained:
            raise ValueError(f"FAISS {self.factory!r} is untrained: call build() first")
        starts = range(0, len(vectors), batch_size)
        for start in tqdm(starts, desc="indexing", unit="batch", disable=not progress):
            self._index.add(vectors[start : start + batch_size])

    def _set_search_params(self, k: int) -> None:
        ivf = faiss.try_extract_index_ivf(self._index) if not self.on_gpu else None
        if ivf is not None:
            ivf.nprobe = min(self.nprobe, ivf.nlist)
        elif self.on_gpu and hasattr(self._index, "nprobe"):
            self._index.nprobe = self.nprobe
        hnsw = getattr(faiss.downcast_index(self._index), "hnsw", None)
        if hnsw is not None:
            hnsw.efSearch = max(self.ef_search, k)

    def search(self, queries: np.ndarray, k: int,
               subset: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(scores, ids), each (n, k), best first; ids are -1 where fewer than k exist.
        `subset`: search only these ids (a metadata filter's rows)."""
        queries = self._check(queries, "queries")
        self._set_search_params(k)
        if subset is None:
            return self._index.search(queries, k)
        if self.on_gpu:  # GPU indexes take no selector: rank all, keep the subset's
            scores, ids = self._index.search(queries, len(self))
            keep = np.isin(ids, subset)
            out_s = np.full((len(queries), k), -np.inf, dtype=np.float32)
            out_i = np.full((len(queries), k), -1, dtype=np.int64)
            for row in range(len(queries)):
                got_s, got_i = scores[row][keep[row]][:k], ids[row][keep[row]][:k]
                out_s[row, : len(got_s)], out_i[row, : len(got_i)] = got_s, got_i
            return out_s, out_i
        return self._index.search(queries, k, params=self._selector_params(subset, k))

    def stored_vectors(self) -> np.ndarray:
        """Every vector as the index holds it: exact for Flat and HNSW, decoded from its
        codes (lossy) for PQ. What a saved folder gives another vector store."""
        index = faiss.index_gpu_to_cpu(self._index) if self.on_gpu else self._index
        ivf = faiss.try_extract_index_ivf(index)
        if ivf is not None:  # IVF lists reconstruct by id only through a direct map
            ivf.make_direct_map()
        return index.reconstruct_n(0, len(self))

    # -- the VectorStore protocol (retriever_trt/store/vector_store.py) ------------------------
    def publish(self, vectors: np.ndarray, first_row: int, part: Any) -> None:
        if first_row != len(self):
            raise ValueError(f"rows must follow on: the index holds {len(self)}, got {first_row}")
        self.add(vectors)

    def forget(self, doc_id: str) -> None:
        """Nothing to do: a removed document's vectors stay as tombstones, which searches
        never return since they run with the store's live rows as `subset`."""

    def search_rows(self, queries: np.ndarray, k: int, subset: np.ndarray | None,
                    filt: Any) -> tuple[np.ndarray, np.ndarray]:
        # The store has already turned `filt` into `subset` (its rows).
        return self.search(queries, k, subset)

    def _selector_params(self, subset: np.ndarray, k: int) -> Any:
        """FAISS search parameters restricted to `subset`, keeping nprobe / efSearch."""
        sel = faiss.IDSelectorBatch(np.ascontiguousarray(subset, dtype=np.int64))
        ivf = faiss.try_extract_index_ivf(self._index)
        if ivf is not None:
            return faiss.SearchParametersIVF(sel=sel, nprobe=min(self.nprobe, ivf.nlist))
        if getattr(faiss.downcast_index(self._index), "hnsw", None) is not None:
            return faiss.SearchParametersHNSW(sel=sel, efSearch=max(self.ef_search, k))
        return faiss.SearchParameters(sel=sel)

    def manifest_fields(self) -> dict[str, Any]:
        return {
            "model_id": self.model_id,
            "precision": self.precision,
            "dim": self.dim,
            ENCODER_SHA_KEY: self.encoder_sha256,
            "count": len(self),
            "factory": self.factory,
            "corpus_hash": self.corpus_hash,
            "faiss_version": faiss.__version__,
        }

    def write(self, folder: Path, extra: dict[str, Any] | None = None) -> None:
        """Write index + manifest into an existing folder (no atomicity: see `save`)."""
        cpu = faiss.index_gpu_to_cpu(self._index) if self.on_gpu else self._index
        faiss.write_index(cpu, str(folder / INDEX_FILE))
        write_manifest(folder, KIND, {**self.manifest_fields(), **(extra or {})})

    def save(self, directory: str | Path) -> None:
        with atomic_directory(directory) as tmp:
            self.write(tmp)

    @classmethod
    def load(
        cls, directory: str | Path, expect_embedder: Any = None, use_gpu: bool | None = None
    ) -> VectorIndex:
        folder = resolve_dir(directory)
        manifest = read_manifest(folder, KIND)
        if expect_embedder is not None:
            check_embedder(manifest, expect_embedder, folder)
        try:
            cpu = faiss.read_index(str(folder / INDEX_FILE))
        except RuntimeError as exc:
            raise IndexFileError(
                f"{folder / INDEX_FILE}: unreadable FAISS index ({str(exc).strip()[:200]}); "
                f"{rebuild_hint(folder, manifest.get('corpus'))}"
            ) from None
        index = cls(
            int(manifest["dim"]),
            manifest["factory"],
            manifest["model_id"],
            manifest["precision"],
            manifest["corpus_hash"],
            use_gpu=use_gpu,
            encoder_sha256=manifest.get(ENCODER_SHA_KEY, ""),
        )
        if cpu.d != index.dim or cpu.ntotal != manifest["count"]:
            raise IndexFileError(
                f"{folder / INDEX_FILE}: holds {cpu.ntotal} vectors of dim {cpu.d}, the "
                f"manifest says {manifest['count']} of dim {index.dim}; "
                f"{rebuild_hint(folder, manifest.get('corpus'))}"
            )
        index._index = index._to_device(cpu)
        return index


def encoder_sha256(embedder: Any) -> str:
    """The sha256 of the file `embedder` runs ('' where unknown: a torch folder, a wrapper)."""
    return getattr(embedder, "file_sha256", "") or ""


def embedder_fields(embedder: Any) -> dict[str, Any]:
    """What a saved index or segment records of the encoder that made its vectors."""
    return {"model_id": embedder.model_id, "precision": embedder.precision,
            "dim": int(embedder.dim), ENCODER_SHA_KEY: encoder_sha256(embedder)}


def check_embedder(manifest: dict[str, Any], embedder: Any, folder: Path) -> None:
    """Raise unless `embedder` produces the vector space the saved index was built in: the
    same model id, precision and width and, where both are known, the same file (an index
    saved before the file's hash was recorded is checked on the other three)."""
    saved_sha, given_sha = manifest.get(ENCODER_SHA_KEY) or "", encoder_sha256(embedder)
    saved = (manifest["model_id"], manifest["precision"], int(manifest["dim"]))
    given = (embedder.model_id, embedder.precision, int(embedder.dim))
    if saved != given or (saved_sha and given_sha and saved_sha != given_sha):
        raise EmbedderMismatchError(
            f"{folder}: built with encoder {describe_encoder(*saved, saved_sha)} but loaded "
            f"with {describe_encoder(*given, given_sha)}; index and questions must use one "
            f"encoder: load it with the encoder it was built with (--embedder), or "
            f"{rebuild_hint(folder, manifest.get('corpus'))}"
        )
