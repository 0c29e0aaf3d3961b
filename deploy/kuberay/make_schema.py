"""Writes deploy/kuberay/rayservice.schema.json: KubeRay's RayService CRD schema, trimmed.

    python deploy/kuberay/make_schema.py ray.io_rayservices.yaml   # the CRD file of KubeRay

From the CRD's v1 openAPIV3Schema it drops `status` and the descriptions, and stands each
pod `template` (a Kubernetes PodTemplateSpec, most of the CRD's megabyte) in for an open
object: tests/test_kuberay.py checks pod templates against the Kubernetes schema itself.
Objects with declared properties get additionalProperties: false, so that a misspelt
field is an error, as `kubectl apply --validate=strict` makes it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

OUT = Path(__file__).with_name("rayservice.schema.json")
SOURCE = ("https://github.com/ray-project/kuberay/blob/v1.7.0/"
          "ray-operator/config/crd/bases/ray.io_rayservices.yaml")


def trim(node: Any, key: str = "") -> Any:
    if isinstance(node, list):
        return [trim(n) for n in node]
    if not isinstance(node, dict):
        return node
    if key == "template":
        return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    out = {k: trim(v, k) if k != "properties" else {p: trim(s, p) for p, s in v.items()}
           for k, v in node.items() if k != "description"}
    if "properties" in out and not out.get("x-kubernetes-preserve-unknown-fields"):
        out.setdefault("additionalProperties", False)
    return out


def main(crd_path: str) -> None:
    crd = yaml.safe_load(Path(crd_path).read_text())
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
    schema = version["schema"]["openAPIV3Schema"]
    schema["properties"].pop("status", None)
    schema = trim(schema)
    schema["properties"]["metadata"] = {"type": "object"}
    doc = {"$comment": f"Trimmed from {SOURCE} (KubeRay v1.7.0, Apache-2.0) by "
                       "deploy/kuberay/make_schema.py", **schema}
    tmp = OUT.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n")
    tmp.replace(OUT)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main(sys.argv[1])
