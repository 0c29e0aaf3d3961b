"""Deployment files: the Kubernetes manifests against the Kubernetes schemas (no cluster runs
here), the Dockerfile's references, the example settings file and the Grafana dashboard."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
from pathlib import Path

import pytest
import yaml
from paths import REPO
from prereqs import DEV, require_module

from pipeline.cli import _parser
from pipeline.settings import FIELDS, Settings
from pipeline.settings_sources import load_settings

K8S = REPO / "deploy" / "k8s"
K8S_VERSION = "1.30.0"


def _validate():
    return require_module("kubernetes_validate", DEV)


def _manifests() -> list[tuple[Path, dict]]:
    docs = []
    for path in sorted(K8S.glob("*.yaml")):
        docs += [(path, d) for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


def test_every_manifest_validates_against_the_kubernetes_schema() -> None:
    kv = _validate()
    kinds = set()
    for path, doc in _manifests():
        if doc["kind"] == "Kustomization":
            listed = {K8S / r for r in doc["resources"]}
            assert listed == set(K8S.glob("*.yaml")) - {path}, "kustomization misses a file"
            continue
        kv.validate(doc, K8S_VERSION, strict=True)
        kinds.add(doc["kind"])
    assert kinds == {"Deployment", "Service", "ConfigMap", "Secret", "PersistentVolumeClaim"}


def test_the_schema_check_can_fail() -> None:
    kv = _validate()
    deployment = next(d for _, d in _manifests() if d["kind"] == "Deployment")
    bad = copy.deepcopy(deployment)
    bad["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"]["pth"] = "/x"
    with pytest.raises(kv.ValidationError):
        kv.validate(bad, K8S_VERSION, strict=True)


def test_deployment_probes_requests_and_wiring() -> None:
    docs = {d["kind"]: d for _, d in _manifests()}
    pod = docs["Deployment"]["spec"]["template"]["spec"]
    c = pod["containers"][0]
    assert c["livenessProbe"]["httpGet"]["path"] == "/health"
    assert c["readinessProbe"]["httpGet"]["path"] == "/ready"
    assert c["startupProbe"]["httpGet"]["path"] == "/health"
    assert c["resources"]["requests"]["cpu"] and c["resources"]["requests"]["memory"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    key = c["env"][0]["valueFrom"]["secretKeyRef"]
    assert key["name"] == docs["Secret"]["metadata"]["name"]
    assert key["key"] in docs["Secret"]["stringData"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["engines"]["persistentVolumeClaim"]["claimName"] == \
        docs["PersistentVolumeClaim"]["metadata"]["name"]
    assert volumes["settings"]["configMap"]["name"] == docs["ConfigMap"]["metadata"]["name"]
    # The settings the ConfigMap carries load, and put engines/ on the mounted volume.
    settings = yaml.safe_load(docs["ConfigMap"]["data"]["settings.yaml"])
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    assert settings["engines_dir"] == mounts["engines"]
    load_settings(None, settings, environ={})
    # The container's command is a real finrag command with real flags.
    args = c["args"]
    assert args[0] == "finrag"
    parsed = _parser().parse_args(args[1:])
    assert parsed.command == "serve" and parsed.config == f"{mounts['settings']}/settings.yaml"
    port = docs["Deployment"]["spec"]["template"]["spec"]["containers"][0]["ports"][0]
    assert settings["port"] == port["containerPort"]


def test_dockerfile_is_non_root_and_installs_as_the_makefile_does() -> None:
    text = (REPO / "Dockerfile").read_text()
    users = re.findall(r"^USER (\S+)", text, re.M)
    assert users and users[-1] not in ("root", "0")
    for src in re.findall(r"^COPY (\S+) ", text, re.M):
        assert (REPO / src).exists(), f"Dockerfile copies {src}, which is not in the repo"
    packages = re.search(r"^MODEL_PACKAGES := (.+)$", (REPO / "Makefile").read_text(), re.M)
    assert packages and f"--no-deps {packages.group(1)}" in text
    pin = re.search(r'"torch==([\d.*]+)"', (REPO / "pyproject.toml").read_text())
    assert pin and re.search(rf"torch=={pin.group(1).replace('*', '')}", text)
    cmd = json.loads(re.search(r"^CMD (\[.+\])$", text, re.M).group(1))
    assert _parser().parse_args(cmd[1:]).command == "serve"


def test_example_settings_list_every_setting_at_its_default() -> None:
    path = REPO / "deploy" / "settings.example.yaml"
    spec = importlib.util.spec_from_file_location("make_example",
                                                  REPO / "deploy" / "make_settings_example.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert path.read_text() == module.render(), \
        "stale: regenerate with python deploy/make_settings_example.py"
    listed = set(yaml.safe_load(path.read_text()))
    assert listed == FIELDS - {"engine"}, f"missing: {FIELDS - listed}"
    assert load_settings(path, environ={}) == Settings()


def test_grafana_dashboard_uses_metrics_the_server_exports() -> None:
    dashboard = json.loads((REPO / "deploy" / "grafana" / "finrag.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    names = {n for e in exprs for n in re.findall(r"\b((?:vllm|finrag|process)[:_][\w:]+)", e)}
    source = "".join(p.read_text() for p in (REPO / "pipeline" / "server").rglob("*.py"))
    for name in names:
        base = re.sub(r"_(bucket|sum|count|total)$", "", name)
        assert base in source or name.startswith("process_"), f"{name} is not exported"
    assert len(exprs) >= 8
