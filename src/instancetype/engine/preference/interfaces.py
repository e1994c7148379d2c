"""Interface preferences, applied to every `domain.devices.interfaces` entry.

KubeVirt: pkg/instancetype/preference/apply/interface.go (applyInterfacePreferences).
"""
from __future__ import annotations

from typing import Any

from ._util import copy_value, dict_items

# Every member of Go's InterfaceBindingMethod, plus the plugin `binding`: an
# interface with none of them set has no binding yet.
_BINDINGS = ("bridge", "slirp", "masquerade", "sriov", "macvtap", "passt", "passtBinding", "binding")


def _binding_unset(iface: dict[str, Any]) -> bool:
    for b in _BINDINGS:
        if iface.get(b) is not None:
            return False
    return True


def _on_pod_network(name: str, spec: dict[str, Any]) -> bool:
    # Go: the first network with the same name decides.
    for net in dict_items(spec.get("networks")):
        if (net.get("name") or "") == name:
            return net.get("pod") is not None
    return False


def apply_interfaces(pref_devices: dict[str, Any], devs: dict[str, Any], spec: dict[str, Any]) -> None:
    model = pref_devices.get("preferredInterfaceModel")
    masquerade = pref_devices.get("preferredInterfaceMasquerade")
    if not model and masquerade is None:
        return
    for iface in dict_items(devs.get("interfaces")):
        if model and not iface.get("model"):
            iface["model"] = model
        if masquerade is not None and _binding_unset(iface) and _on_pod_network(iface.get("name") or "", spec):
            iface["masquerade"] = copy_value(masquerade)
