"""The KubeVirt configuration (`spec.configuration` of the KubeVirt CR) checked as Go decodes it.

    check_config(config) -> None        DecodeError naming the field, in Go's json text

Only the keys the engine reads are checked, with their Go types (v1.KubeVirtConfiguration);
virt-config decodes the whole configuration before any webhook or controller reads it, so a
wrongly typed value is refused before anything is derived from it.
"""
from __future__ import annotations

from typing import Any

from instancetype.errors import DecodeError

# The KubeVirt CR configuration keys the engine reads, with their Go types (KubeVirtConfiguration).
_CONFIG_OBJECTS: dict[str, tuple[str, dict[str, type]]] = {
    "network": ("v1.NetworkConfiguration", {"defaultNetworkInterface": str,
                                            "permitBridgeInterfaceOnPodNetwork": bool}),
    "liveUpdateConfiguration": ("v1.LiveUpdateConfiguration", {"maxCpuSockets": int, "maxHotplugRatio": int}),
    "architectureConfiguration": ("v1.ArchConfiguration", {"defaultArchitecture": str}),
    "instancetype": ("v1.InstancetypeConfiguration", {"referencePolicy": str}),
    "commonInstancetypesDeployment": ("v1.CommonInstancetypesDeployment", {"enabled": bool}),
    "developerConfiguration": ("v1.DeveloperConfiguration", {"featureGates": list}),
}
_CONFIG_SCALARS: dict[str, type] = {"machineType": str, "cpuModel": str, "vmRolloutStrategy": str, "evictionStrategy": str}
_GO_SCALAR = {str: "string", bool: "bool", int: "uint32", list: "[]string"}


def _json_type(v: Any) -> str:
    """Go's name of a JSON value's type (api.gotext's, imported only for an error)."""
    from instancetype.api.gotext import json_type

    return json_type(v)


def _config_error(what: Any, path: str, go: str) -> DecodeError:
    return DecodeError(f"config: json: cannot unmarshal {_json_type(what)} into Go struct field "
                       f"KubeVirtConfiguration.{path} of type {go}", field=f"config.{path}")


def _check_scalar(v: Any, want: type, path: str) -> None:
    ok = isinstance(v, want) and (want is not int or (isinstance(v, int) and not isinstance(v, bool) and v >= 0))
    if v is not None and not ok:
        raise _config_error(v, path, _GO_SCALAR[want])
    if want is list and v is not None:      # a []string: each item a string (null reads as "")
        for i, item in enumerate(v):
            if item is not None and not isinstance(item, str):
                raise DecodeError(f"config: json: cannot unmarshal {_json_type(item)} into "
                                  f"KubeVirtConfiguration.{path}.{i} of type string", field=f"config.{path}[{i}]")


def check_config(config: Any) -> None:
    """The parts of the KubeVirt configuration the engine reads, checked as Go decodes them."""
    if config is None:
        return
    if not isinstance(config, dict):
        from instancetype.engine.virt_config import ClusterConfig

        if isinstance(config, ClusterConfig):      # already read
            return
        raise DecodeError(f"config: json: cannot unmarshal {_json_type(config)} into Go value of type "
                          "v1.KubeVirtConfiguration", field="config")
    for key in config:
        if not isinstance(key, str):
            raise DecodeError(f"config: json: object key {key!r} is not a string", field="config")
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
