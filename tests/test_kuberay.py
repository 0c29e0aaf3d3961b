"""deploy/kuberay/rayservice.yaml against KubeRay's RayService schema (vendored, trimmed:
deploy/kuberay/make_schema.py), its pod templates against the Kubernetes schema, and its
Serve config against Ray Serve's own schema and finrag's settings. No cluster runs here."""

from __future__ import annotations

import copy
import json
import re

import pytest
import yaml
from paths import REPO
from prereqs import DEV, RAY, require_module

from pipeline.settings_sources import load_settings

KUBERAY = REPO / "deploy" / "kuberay"
K8S_VERSION = "1.30.0"


def _service() -> dict:
    return yaml.safe_load((KUBERAY / "rayservice.yaml").read_text())


def _validator():
    jsonschema = require_module("jsonschema", DEV)
    schema = json.loads((KUBERAY / "rayservice.schema.json").read_text())
    return jsonschema, jsonschema.Draft7Validator(schema)


def _templates(doc: dict) -> list[dict]:
    cluster = doc["spec"]["rayClusterConfig"]
    return [cluster["headGroupSpec"]["template"],
            *(g["template"] for g in cluster["workerGroupSpecs"])]


def test_the_rayservice_validates_against_kuberays_schema() -> None:
    _, validator = _validator()
    doc = _service()
    assert (doc["apiVersion"], doc["kind"]) == ("ray.io/v1", "RayService")
    errors = [e.message for e in validator.iter_errors(doc)]
    assert errors == []


@pytest.mark.parametrize("breaks", ["typo", "type"])
def test_the_schema_check_can_fail(breaks: str) -> None:
    _, validator = _validator()
    bad = copy.deepcopy(_service())
    group = bad["spec"]["rayClusterConfig"]["workerGroupSpecs"][0]
    if breaks == "typo":
        group["maxReplica"] = group.pop("maxReplicas")
    else:
        group["replicas"] = "two"
    assert list(validator.iter_errors(bad))


def test_pod_templates_validate_against_the_kubernetes_schema() -> None:
    kv = require_module("kubernetes_validate", DEV)
    for template in _templates(_service()):
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "finrag"},
               "spec": template["spec"]}
        kv.validate(pod, K8S_VERSION, strict=True)
        assert template["spec"]["containers"][0]["resources"]["requests"]["memory"]


def test_the_serve_config_is_ray_serves_and_its_args_are_finrag_settings() -> None:
    require_module("ray.serve", RAY)
    from ray.serve.schema import ServeDeploySchema

    doc = _service()
    serve_config = yaml.safe_load(doc["spec"]["serveConfigV2"])
    schema = ServeDeploySchema.model_validate(serve_config)
    app = schema.applications[0]
    module, _, name = app.import_path.partition(":")
    from importlib import import_module

    assert callable(getattr(import_module(module), name))
    settings = load_settings(None, app.args, environ={})
    workers = doc["spec"]["rayClusterConfig"]["workerGroupSpecs"][0]
    # One replica a worker: the worker group spans the replicas autoscaling may ask for.
    assert workers["minReplicas"] <= settings.num_replicas
    assert workers["maxReplicas"] >= settings.max_replicas
    pinned = re.search(r'ray\[serve\]==([\d.]+)', (REPO / "pyproject.toml").read_text())
    assert doc["spec"]["rayClusterConfig"]["rayVersion"] == pinned.group(1)
