"""KubeVirt's VirtualMachine / VirtualMachineInstance types, field by field (package data
`api/schemas/kubevirt_types.json`, the conformance suite's kv_types.json).

    kubevirt_types() -> dict   {"kv.VirtualMachineSpec": {"template": [type, pointer, omitempty], ...}, ...}

Types are `string`, `bool`, `int`, `time`, `quantity`, `any`, `struct:<name>`, `slice:<type>`,
`map:<type>`. One source for the VM admission's schema check
(engine/vm_validation/schema.py) and for the VirtualMachine CRD cluster mode installs.
"""
from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any


@lru_cache(maxsize=1)
def kubevirt_types() -> dict[str, Any]:
    types: dict[str, Any] = json.loads(
        resources.files("instancetype.api").joinpath("schemas/kubevirt_types.json").read_text())
    return types


# Fields without `omitempty` that KubeVirt v1.9's OpenAPI schema nevertheless leaves optional
# (`+optional` markers): its webhooks' schema check admits a VM without them (the conformance
# suite's vm-admission and admit-vm cases: inputs without `type`), and its CRD, generated from
# the same definitions, does not require them either. Every other non-pointer field without
# `omitempty` is required.
NOT_REQUIRED = frozenset({
    ("kv.Input", "type"), ("kv.Machine", "type"), ("kv.KernelBootContainer", "image"),
    ("kv.VirtualMachineInstanceStatus", "runtimeUser"),
    ("k8s.TypedLocalObjectReference", "apiGroup"), ("k8s.TypedObjectReference", "apiGroup"),
})
