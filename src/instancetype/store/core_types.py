"""The API server's typed decode and defaulting of the core objects the simulation reads.

    decode_core(res, obj) -> str | None
        In place, on the store's own copy of a create or update; the text of the API server's
        refusal (a 400) when it cannot be decoded, else None.

The API server decodes a Node or a PersistentVolumeClaim into its Go type before anything else
runs, so the simulated node's scheduler and the simulated CDI must never see what a real cluster
cannot hold:
- a `ResourceList` value is a `resource.Quantity` (Quantity.UnmarshalJSON): stored in canonical
  form (`memory: 1.5` is stored as `"1500m"`, `cpu: 4` as `"4"`), and anything that does not parse
  refuses the whole request with the decoder's text:
  `Node in version "v1" cannot be handled as a Node: quantities must match the regular expression ...`
  (k8s.io/apiserver's transformDecodeError around apimachinery's ErrFormatWrong);
- a `ResourceList` that is not an object: Go's `cannot unmarshal` text, in the same wrapper;
- `SetDefaults_NodeStatus` (pkg/apis/core/v1/defaults.go): a node's `allocatable`, when absent,
  is its `capacity`.

A write through a merge patch ends in the same check; the API server words that refusal
differently (`patch: Invalid value: "<the object>": ...`), which is not reproduced.
"""
from __future__ import annotations

from typing import Any

from instancetype.api.gotext import json_type
from instancetype.api.kinds import Resource
from instancetype.api.quantity import Quantity
from instancetype.errors import QuantityError

# The ResourceLists of each kind: (path, the Go struct and field the decoder names on a wrong type)
_RESOURCE_LISTS: dict[str, tuple[tuple[tuple[str, ...], str], ...]] = {
    "Node": ((("status", "capacity"), "NodeStatus.status.capacity"),
             (("status", "allocatable"), "NodeStatus.status.allocatable")),
    "PersistentVolumeClaim": (
        (("spec", "resources", "requests"), "VolumeResourceRequirements.spec.resources.requests"),
        (("spec", "resources", "limits"), "VolumeResourceRequirements.spec.resources.limits"),
        (("status", "capacity"), "PersistentVolumeClaimStatus.status.capacity"),
    ),
}


def rewrites(res: Resource) -> bool:
    """Whether `decode_core` may change an object of this kind in place (its ResourceLists, a
    Node's allocatable): a write that shares parts of the stored object copies them first."""
    return res.kind in _RESOURCE_LISTS


def decode_core(res: Resource, obj: dict[str, Any]) -> str | None:
    """Canonical quantities and the node status default, or the refusal's text (see the module)."""
    lists = _RESOURCE_LISTS.get(res.kind)
    if lists is None:
        return None
    for path, go_field in lists:
        parent: Any = obj
        for key in path[:-1]:
            parent = parent.get(key) if type(parent) is dict else None
        if type(parent) is not dict:
            continue        # (a wrong shape above is not this module's: only ResourceLists are read)
        values = parent.get(path[-1])
        if values is None:
            continue
        if type(values) is not dict:
            return _refusal(res, f"json: cannot unmarshal {json_type(values)} into Go struct field {go_field} "
                                 f"of type v1.ResourceList")
        for name, value in values.items():
            try:
                values[name] = str(Quantity.from_json(value))
            except QuantityError as e:
                return _refusal(res, str(e))
    if res.kind == "Node":
        status = obj.get("status")
        if type(status) is dict and status.get("allocatable") is None and status.get("capacity") is not None:
            status["allocatable"] = dict(status["capacity"])
    return None


def _refusal(res: Resource, reason: str) -> str:
    return f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}: {reason}'
