"""One engine configuration: every EngineConfig field is a setting (YAML, FINRAG_*) and a
`finrag serve` flag in vLLM's spelling, with EngineConfig's names and checks."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from llm_engine import EngineConfig
from pipeline import engine_settings, settings_sources
from pipeline import settings as settings_mod
from pipeline.cli import _parser, main
from pipeline.engine_settings import ENGINE_FIELDS, SERVER_ENGINE_DEFAULTS
from pipeline.settings_sources import SettingsError, load_settings


def _serve_options() -> set[str]:
    serve = _parser()._subparsers._group_actions[0].choices["serve"]  # type: ignore[union-attr]
    return {opt for action in serve._actions for opt in action.option_strings}


def test_every_engine_field_is_a_setting_and_a_serve_flag() -> None:
    names = [f.name for f in dataclasses.fields(EngineConfig)]
    assert list(ENGINE_FIELDS) == names
    options = _serve_options()
    for name in names:
        assert "--" + name.replace("_", "-") in options, name
        assert name in settings_mod.FIELDS
    for flag in ("--api-key", "--served-model-name", "--log-level", "--tensor-parallel-size",
                 "--enable-prefix-caching", "--no-enable-prefix-caching", "--max-model-len"):
        assert flag in options


def test_engine_defaults_are_the_engines_but_for_the_declared_server_ones() -> None:
    engine = load_settings(environ={}).engine
    for f in dataclasses.fields(EngineConfig):
        expected = SERVER_ENGINE_DEFAULTS.get(f.name, f.default)
        assert getattr(engine, f.name) == expected, f.name


def test_engine_args_from_yaml_env_and_flags_in_that_order(tmp_path) -> None:
    cfg = tmp_path / "finrag.yaml"
    cfg.write_text("max_num_seqs: 4\nseed: 7\ndtype: float32\nenable_chunked_prefill: false\n")
    env = {"FINRAG_SEED": "8", "FINRAG_ENFORCE_EAGER": "false"}
    args = _parser().parse_args(["serve", "--seed", "9", "--no-enable-prefix-caching",
                                 "--attention-backend", "torch", "--max-model-len", "512",
                                 "--max-num-seqs", "6"])
    overrides = {k: v for k, v in vars(args).items() if k in settings_mod.FIELDS and v is not None}
    engine = load_settings(cfg, overrides, environ=env).engine
    assert isinstance(engine, EngineConfig)
    assert (engine.max_num_seqs, engine.seed, engine.dtype, engine.enable_chunked_prefill,
            engine.enforce_eager, engine.enable_prefix_caching, engine.attention_backend,
            engine.max_model_len) == (6, 9, "float32", False, False, False, "torch", 512)


def test_an_engine_mapping_in_yaml_is_taken_too(tmp_path) -> None:
    cfg = tmp_path / "finrag.yaml"
    cfg.write_text("engine:\n  max_num_seqs: 3\n  block_size: 8\n")
    engine = load_settings(cfg, environ={"FINRAG_BLOCK_SIZE": "32"}).engine
    assert (engine.max_num_seqs, engine.block_size, engine.max_model_len) == (3, 32, 2048)


@pytest.mark.parametrize("overrides,words", [
    ({"block_size": 24}, r"^invalid settings: block_size: must be a power of two"),
    ({"dtype": "int4"}, r"^invalid settings: dtype: must be"),
    ({"max_num_seqs": "many"}, r"^invalid settings: max_num_seqs: .*integer.*'many'"),
    ({"enable_prefix_caching": "perhaps"}, r"^invalid settings: enable_prefix_caching: .*bool"),
])
def test_engine_checks_are_the_engines_one_line(overrides: dict, words: str) -> None:
    with pytest.raises(SettingsError, match=words) as err:
        load_settings(overrides=overrides, environ={})
    assert "\n" not in str(err.value)


def test_a_new_dict_field_takes_json_from_the_flag_and_the_environment(monkeypatch) -> None:
    # What a field such as speculative_config gets with no edit to the settings or the CLI.
    fields = {**ENGINE_FIELDS, "speculative_config": dict[str, Any] | None}
    monkeypatch.setattr(engine_settings, "ENGINE_FIELDS", fields)
    args = _parser().parse_args(["serve", "--speculative-config", '{"num_speculative_tokens": 3}'])
    assert args.speculative_config == {"num_speculative_tokens": 3}
    assert settings_sources.engine_json("speculative_config", '{"a": 1}') == {"a": 1}
    with pytest.raises(SettingsError, match="speculative_config: not valid JSON"):
        settings_sources.engine_json("speculative_config", "{a: 1")
    with pytest.raises(SystemExit):
        _parser().parse_args(["serve", "--speculative-config", "{a"])


def test_version_and_bad_engine_flag(capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("finrag ")
    assert main(["serve", "--tensor-parallel-size", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("finrag: error: invalid settings: tensor_parallel_size: must be >= 1")


def test_an_explicit_null_engine_argument_is_a_value_not_an_absence() -> None:
    from pipeline.cli import _parser, _settings
    from pipeline.settings import Settings

    default = _settings(_parser().parse_args(["serve"]))
    assert default.engine.speculative_config is not None  # the server's drafts are on
    off = _settings(_parser().parse_args(["serve", "--speculative-config", "null"]))
    assert off.engine.speculative_config is None
    # Assigning another setting keeps the engine configuration as built.
    s = Settings()
    s.index = "elsewhere"
    assert s.engine.max_model_len == default.engine.max_model_len
