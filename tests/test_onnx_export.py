"""Export of MiniLM to ONNX: graph contract, checker, numbers against torch, CLI errors."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from retr_support import exported, model_dir

from onnx_export.__main__ import main
from onnx_export.export import EncoderCheckError, check_against_torch
from retriever_trt.embedders.torch_embedder import TorchEmbedder


@pytest.fixture(scope="session")
def art(tmp_path_factory):
    return exported(tmp_path_factory)


@pytest.fixture(scope="session")
def torch_ref():
    return TorchEmbedder(model_dir())


def test_graph_contract(art):
    path = art["dir"] / "model.onnx"
    onnx.checker.check_model(str(path), full_check=True)
    model = onnx.load(str(path), load_external_data=False)
    ins = {i.name: i.type.tensor_type for i in model.graph.input}
    assert set(ins) == {"input_ids", "attention_mask"}
    for t in ins.values():
        assert t.elem_type == onnx.TensorProto.INT64
        assert all(d.dim_param for d in t.shape.dim)  # batch and sequence both dynamic
    (out,) = model.graph.output
    assert out.name == "embeddings"
    assert out.type.tensor_type.shape.dim[1].dim_value == 384
    meta = {p.key: p.value for p in model.metadata_props}
    assert meta["finrag.precision"] == "fp32" and meta["finrag.dim"] == "384"
    # Atomic writes leave no temp files behind.
    assert not [p for p in art["dir"].iterdir() if p.name.endswith(".tmp")]
    assert "vs torch max |diff|" in art["report"]


@pytest.mark.parametrize("batch,length", [(1, 5), (7, 5), (1, 200), (7, 200)])
def test_dynamic_axes_match_torch(art, torch_ref, batch, length):
    sess = ort.InferenceSession(str(art["dir"] / "model.onnx"), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(batch * 1000 + length)
    ids = rng.integers(1000, 30000, size=(batch, length), dtype=np.int64)
    ids[:, 0], ids[:, -1] = 101, 102
    mask = np.ones_like(ids)
    mask[1:, length // 2 :] = 0  # rows after the first are padded: exercises the mask
    got = sess.run(["embeddings"], {"input_ids": ids, "attention_mask": mask})[0]
    with torch.inference_mode():
        ids_t, mask_t = torch.from_numpy(ids), torch.from_numpy(mask)
        hidden = torch_ref.model(input_ids=ids_t, attention_mask=mask_t).last_hidden_state
        w = mask_t.unsqueeze(-1).float()
        ref = torch.nn.functional.normalize((hidden * w).sum(1) / w.sum(1), dim=-1).numpy()
    assert got.shape == (batch, 384)
    assert np.abs(got - ref).max() <= 1e-4
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_check_fails_loudly_with_numbers(art):
    diff, cos = check_against_torch(art["dir"] / "model.onnx", model_dir(), atol=1e-4)
    assert diff <= 1e-4 and cos > 0.9999
    with pytest.raises(EncoderCheckError, match=r"max abs diff .* > 1e-30"):
        check_against_torch(art["dir"] / "model.onnx", model_dir(), atol=1e-30)


# Each error exits 2 with one line and no traceback, through the main() that
# `python -m onnx_export` exits with (the README's export block runs that module as a
# process; a subprocess here for the missing --model repeated the first case for 3.5 s).
@pytest.mark.parametrize("argv,needle", [
    (["--model=/nonexistent/folder", "--outDir=OUT"], "--model=/nonexistent/folder"),
    (["--int8", "--outDir=OUT"], "--int8 needs --calibData"),
    (["--int8", "--calibData=/no/such.txt", "--outDir=OUT"], "/no/such.txt"),
    (["--outDir=OUT", "--calibData=/no/such.txt"], "--calibData is only used with --int8"),
    (["--outDir=OUT", "--calibMethod=kl"], "--calibMethod"),
    (["--fp16"], "--outDir"),
    (["--outDir=OUT", "--bogus"], "--bogus"),
])
def test_cli_errors(tmp_path, capsys, argv, needle):
    argv = [a.replace("OUT", str(tmp_path / "out")) for a in argv]
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse-level errors
        rc = exc.code
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1 and needle in err
    assert not (tmp_path / "out" / "model.onnx").exists()

