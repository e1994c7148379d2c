"""The last line of the public entry points: bad input ends as an `instancetype.Error`.

The hot paths read plain dicts without checking every type up front (that check would cost as
much as the work). When one of them trips over a badly typed value, the inputs are decoded the
way KubeVirt's Go types decode them, so the error names the field as Go would; only if that finds
nothing is a generic `DecodeError` raised.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from instancetype.api import kinds
from instancetype.errors import DecodeError, Error

_UNEXPECTED = (AttributeError, TypeError, KeyError, IndexError, ValueError, RecursionError)


def _decode_given(instancetype: Any, preference: Any, objects: Any) -> None:
    from instancetype.api import v1beta1
    from instancetype.engine.spec import unwrap

    if instancetype is not None:
        v1beta1.decode_instancetype_spec(unwrap(instancetype))
    if preference is not None:
        v1beta1.decode_preference_spec(unwrap(preference))
    if isinstance(objects, Iterable) and not isinstance(objects, (str, bytes, dict)) \
            and not hasattr(objects, "lookup"):
        for i, obj in enumerate(objects):
            if not isinstance(obj, dict):
                raise DecodeError(f"objects[{i}]: not an object")
            try:
                if obj.get("kind") in kinds.INSTANCETYPE_KINDS:
                    v1beta1.decode_instancetype_spec(obj.get("spec") or {})
                elif obj.get("kind") in kinds.PREFERENCE_KINDS:
                    v1beta1.decode_preference_spec(obj.get("spec") or {})
            except DecodeError as e:
                raise DecodeError(f"objects[{i}]: {e}") from None


# The KubeVirt CR configuration keys the engine reads, with their Go types (KubeVirtConfiguration).
_CONFIG_OBJECTS = {
    "network": ("v1.NetworkConfiguration", {"defaultNetworkInterface": str,
                                            "permitBridgeInterfaceOnPodNetwork": bool}),
    "liveUpdateConfiguration": ("v1.LiveUpdateConfiguration", {"maxCpuSockets": int, "maxHotplugRatio": int}),
    "architectureConfiguration": ("v1.ArchConfiguration", {"defaultArchitecture": str}),
    "instancetype": ("v1.InstancetypeConfiguration", {"referencePolicy": str}),
    "commonInstancetypesDeployment": ("v1.CommonInstancetypesDeployment", {"enabled": bool}),
}
_CONFIG_SCALARS = {"machineType": str, "cpuModel": str, "vmRolloutStrategy": str, "evictionStrategy": str}
_GO_SCALAR = {str: "string", bool: "bool", int: "uint32"}


def _json_kind(v: Any) -> str:
    from instancetype.api.godecode import _json_kind as kind

    return kind(v)


def _config_error(what: Any, path: str, go: str) -> DecodeError:
    return DecodeError(f"config: json: cannot unmarshal {_json_kind(what)} into Go struct field "
                       f"KubeVirtConfiguration.{path} of type {go}", field=f"config.{path}")


def _check_scalar(v: Any, want: type, path: str) -> None:
    ok = isinstance(v, want) and (want is not int or (not isinstance(v, bool) and v >= 0))
    if v is not None and not ok:
        raise _config_error(v, path, _GO_SCALAR[want])


def _decode_config(config: Any) -> None:
    """The parts of the KubeVirt configuration the engine reads, checked as Go decodes them."""
    if config is None or hasattr(config, "machine_type_for"):    # absent, or an already read ClusterConfig
        return
    if not isinstance(config, dict):
        raise DecodeError(f"config: json: cannot unmarshal {_json_kind(config)} into Go value of type "
                          "v1.KubeVirtConfiguration", field="config")
    for key, want in _CONFIG_SCALARS.items():
        _check_scalar(config.get(key), want, key)
    for key, (go, fields) in _CONFIG_OBJECTS.items():
        sub = config.get(key)
        if sub is None:
            continue
        if not isinstance(sub, dict):
            raise _config_error(sub, key, go)
        for name, want in fields.items():
            _check_scalar(sub.get(name), want, f"{key}.{name}")
        if key == "architectureConfiguration":
            for arch, sub2 in sub.items():
                if arch != "defaultArchitecture" and sub2 is not None and not isinstance(sub2, dict):
                    raise _config_error(sub2, f"{key}.{arch}", "v1.ArchSpecificConfiguration")


def public(what: str) -> Callable:
    """Decorate an entry point `fn(vm, ...)`: unexpected exceptions become `DecodeError`s."""

    def wrap(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def entry(vm: Any, *args: Any, **kw: Any) -> Any:
            config = kw.get("config")
            if config is not None:
                _decode_config(config)      # a few dict reads; the configuration is small
            try:
                return fn(vm, *args, **kw)
            except Error:
                raise
            except _UNEXPECTED as e:
                from instancetype.engine.vm_decode import load_vm

                load_vm(vm)
                objects = kw.get("objects", args[0] if args else ())
                _decode_given(kw.get("instancetype"), kw.get("preference"), objects)
                raise DecodeError(f"cannot {what}: {type(e).__name__}: {e}") from None

        return entry

    return wrap
