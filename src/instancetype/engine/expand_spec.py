"""virt-api's checks of a VM posted to `expand-vm-spec` (pkg/virt-api/rest/expand.go,
`ExpandSpecRequestHandler`), before the expansion: pure rules, shared by `serve`'s subresource
and the embedded store's `expand --file` (`lifecycle.expand`).

In KubeVirt's order: the body against the VirtualMachine OpenAPI schema (`InvalidVM`, one message
per schema error), then json.Unmarshal into v1.VirtualMachine (a `DecodeError` for what the
schema check does not look at: the type meta and the metadata), then the VM's namespace, which
must be empty or the request's (`NamespaceMismatch`).
"""
from __future__ import annotations

from typing import Any

from instancetype.api.godecode import _json_kind, type_error
from instancetype.errors import DecodeError, Error

# ObjectMeta fields json.Unmarshal reads as strings, and those it reads as map[string]string.
_META_STRINGS = ("name", "generateName", "namespace", "uid", "resourceVersion")
_META_MAPS = ("labels", "annotations")


class InvalidVM(Error):
    """writeValidationErrors: the body is not a valid VirtualMachine; `messages` are the schema's."""

    def __init__(self, messages: list[str]):
        super().__init__("Object is not a valid VirtualMachine")
        self.messages = messages


class NamespaceMismatch(Error):
    """The VM names a namespace other than the request's."""


def go_decode_error(vm: dict[str, Any]) -> DecodeError | None:
    """The first error json.Unmarshal into v1.VirtualMachine meets that the schema check does not
    see: the type meta and the metadata (Validate does not look at them)."""
    for key, value in vm.items():
        if value is None:
            continue
        if key in ("kind", "apiVersion") and not isinstance(value, str):
            return type_error(_json_kind(value), "VirtualMachine", (key,), "string")
        if key != "metadata":
            continue
        if not isinstance(value, dict):
            return type_error(_json_kind(value), "VirtualMachine", ("metadata",), "v1.ObjectMeta")
        for field, x in value.items():
            if x is None:
                continue
            if field in _META_STRINGS and not isinstance(x, str):
                return type_error(_json_kind(x), "VirtualMachine", ("metadata", field), "string")
            if field in _META_MAPS:
                if not isinstance(x, dict):
                    return type_error(_json_kind(x), "VirtualMachine", ("metadata", field), "map[string]string")
                bad = next((v for v in x.values() if v is not None and not isinstance(v, str)), None)
                if bad is not None:
                    return type_error(_json_kind(bad), "VirtualMachine", ("metadata", field), "string")
    return None


def vm_to_expand(vm: dict[str, Any], namespace: str) -> dict[str, Any]:
    """The posted VM checked as virt-api checks it, placed in `namespace` (a new dict; `vm` is not
    changed). Raises `InvalidVM`, `DecodeError` or `NamespaceMismatch`."""
    from instancetype.engine.vm_validation.schema import check_vm_body

    causes = check_vm_body(vm)
    if causes:
        raise InvalidVM([c.message for c in causes])
    decode_error = go_decode_error(vm)
    if decode_error is not None:
        raise decode_error
    meta: Any = vm.get("metadata") or {}
    vm_ns = meta.get("namespace")
    if vm_ns and vm_ns != namespace:
        raise NamespaceMismatch(f"VM namespace must be empty or {namespace}")
    return {**vm, "metadata": {**meta, "namespace": namespace}}
