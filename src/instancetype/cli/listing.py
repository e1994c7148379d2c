"""What `get` and its watch print alike: YAML as `get -o yaml`, the LABELS column, `No resources found`."""
from __future__ import annotations

from typing import Any

from instancetype.jsonutil import sorted_keys

from .kubectl import Target, fail


def _yaml(obj: Any) -> str:
    """YAML as kubectl's `get -o yaml` prints it: keys sorted, long lines folded at 80 columns."""
    from .output import yaml_text

    return yaml_text(sorted_keys(obj), width=80)


def _labels_text(obj: dict) -> str:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels)) or "<none>"


def _no_resources(targets: list[Target], namespace: str, all_namespaces: bool) -> None:
    if all_namespaces or not any(t.resource.namespaced for t in targets):
        fail("No resources found")
    else:
        fail(f"No resources found in {namespace} namespace.")
