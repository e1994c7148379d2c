"""Networks and interfaces of a VMI spec (KubeVirt pkg/network/admitter: Validator.Validate and
Validator.ValidateCreation with validateSinglePodNetwork, validateSingleNetworkSource,
validateMultusNetworkSource, validateInterfaceStateValue, validateInterfaceBinding,
validateNetworkNameUnique, validateNetworksAssignedToInterfaces, validateInterfaceNameUnique,
validateInterfacesAssignedToNetworks, validateInterfacesFields, validateDiscontinuedBindings)."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from instancetype.engine.vm_validation._common import (
    _E,
    DUPLICATE,
    INVALID,
    NOT_FOUND_FMT,
    NOT_SUPPORTED,
    REQUIRED,
    cause,
    pci_address_ok,
)

_BINDINGS = ("bridge", "masquerade", "sriov", "passtBinding", "slirp", "passt", "macvtap", "binding")
_IFACE_NAME_RE = re.compile(r"^[A-Za-z0-9-_]+$")
_MODELS = ("e1000", "e1000e", "igb", "ne2k_pci", "pcnet", "rtl8139", "virtio")
_STATES = ("", "absent", "down", "up")
_RESERVED_MAC = "02:00:00:00:00:00"     # link.IsReserved: the in-pod bridge's own address
_MAC_RE = re.compile(r"^[0-9A-Fa-f]{2}([:-])[0-9A-Fa-f]{2}(\1[0-9A-Fa-f]{2}){4}$"
                     r"|^[0-9A-Fa-f]{2}([:-])[0-9A-Fa-f]{2}(\3[0-9A-Fa-f]{2}){6}$"
                     r"|^[0-9A-Fa-f]{2}([:-])[0-9A-Fa-f]{2}(\5[0-9A-Fa-f]{2}){18}$"
                     r"|^[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}(\.[0-9A-Fa-f]{4}){0,1}$"
                     r"|^[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}(\.[0-9A-Fa-f]{4}){6}$")
_POD_NETWORK_KEYS = frozenset(("name", "pod"))
_SIMPLE_IFACE_KEYS = frozenset(("name", "masquerade", "bridge", "model"))
_PORT_NAME_RE = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")


def _mac_length(mac: str) -> int | None:
    """net.ParseMAC: the address length in bytes, or None when malformed."""
    if not _MAC_RE.match(mac):
        return None
    return len(re.sub(r"[:.-]", "", mac)) // 2


def _port_name_ok(name: str) -> bool:
    """IsValidPortName: at most 15 characters, lowercase alphanumerics and '-', at least one
    letter, no leading/trailing or double '-'."""
    return (len(name) <= 15 and bool(_PORT_NAME_RE.match(name)) and "--" not in name
            and any(c.isalpha() for c in name))


def validate_networks(field: str, spec: dict[str, Any], permit_bridge_on_pod: bool) -> list[Any]:
    """Validator.Validate: one pass over the networks and one over the interfaces, the causes
    of each rule kept apart and joined in KubeVirt's order."""
    networks: Sequence[Any] = (spec.get("networks") or ())
    ifaces: Sequence[Any] = (((spec.get("domain") or _E).get("devices") or _E).get("interfaces") or ())
    if len(networks) == 1 and len(ifaces) == 1:
        # The common VM: one pod network and its interface with one core binding.
        net, iface = networks[0], ifaces[0]
        if (net.keys() == _POD_NETWORK_KEYS and net["pod"] is not None and iface.get("name") == net["name"]
                and _IFACE_NAME_RE.match(net["name"] or "") and _SIMPLE_IFACE_KEYS.issuperset(iface)
                and (iface.get("masquerade") is None) != (iface.get("bridge") is None)
                and (iface.get("model") is None or iface["model"] in _MODELS)):
            if iface.get("bridge") is not None and not permit_bridge_on_pod:
                return [cause(INVALID, "Bridge on pod network configuration is not enabled under kubevirt-config",
                              f"{field}.domain.devices.interfaces[0].name")]
            return []
    ifaces_at = f"{field}.domain.devices.interfaces"
    by_name: dict[str, Any] = {}
    pods = multus_default = 0
    default_net = None
    source_causes: list[Any] = []
    multus_causes: list[Any] = []
    unique_net_causes: list[Any] = []
    for idx, net in enumerate(networks):
        name = (net.get("name") or "")
        pod, multus = net.get("pod") is not None, net.get("multus")
        if name in by_name:     # validateNetworkNameUnique
            unique_net_causes.append(cause(DUPLICATE, f'Network with name "{name}" already exists, every network must '
                                           f'have a unique name', f"{field}.networks[{idx}].name"))
        else:
            by_name[name] = net
        if pod:
            pods += 1
            default_net = default_net or net
        if multus is not None and (multus or _E).get("default") is True:
            multus_default += 1
            default_net = default_net or net
        if not pod and multus is None:      # validateSingleNetworkSource
            source_causes.append(cause(REQUIRED, "should have a network type", f"{field}.networks[{idx}]"))
        elif pod and multus is not None:
            source_causes.append(cause(REQUIRED, "should have only one network type", f"{field}.networks[{idx}]"))
        if multus is not None and not multus_causes and not ((multus or _E).get("networkName") or ""):
            # validateMultusNetworkSource: the first one only
            multus_causes.append(cause(REQUIRED, "CNI delegating plugin must have a networkName", f"{field}.networks[{idx}]"))
    causes = []
    # validateSinglePodNetwork
    if pods > 1:
        causes.append(cause(DUPLICATE, f"more than one interface is connected to a pod network in {field}.interfaces",
                            f"{field}.interfaces"))
    if multus_default > 1:
        causes.append(cause(INVALID, "Multus CNI should only have one default network", f"{field}.networks"))
    if pods and multus_default:
        causes.append(cause(INVALID, "Pod network cannot be defined when Multus default network is defined",
                            f"{field}.networks"))
    causes += source_causes
    causes += multus_causes
    state_causes, binding_causes, unique_iface_causes, assigned_causes, field_causes = [], [], [], [], []
    iface_names: set[Any] = set()
    for idx, iface in enumerate(ifaces):
        name, state = (iface.get("name") or ""), (iface.get("state") or "")
        net = by_name.get(name)
        if state:     # validateInterfaceStateValue
            at = f"{ifaces_at}[{idx}].state"
            if state not in _STATES:
                state_causes.append(cause(INVALID, f"logical {name} interface state value is unsupported: {state}", at))
            if state == "absent" and iface.get("bridge") is None:
                state_causes.append(cause(INVALID, f'"{name}" interface\'s state "absent" is supported only for bridge '
                                          f'binding', at))
            if state == "absent" and default_net is not None and (default_net.get("name") or "") == name:
                state_causes.append(cause(INVALID, f'"{name}" interface\'s state "absent" is not supported on default '
                                          f'networks', at))
        # validateInterfaceBinding
        if sum(1 for k in _BINDINGS if iface.get(k) is not None) != 1:
            binding_causes.append(cause(INVALID, f"logical {name} interface must have exactly one binding method or "
                                        f"binding plugin", f"{ifaces_at}[{idx}]"))
        on_pod = net is not None and net.get("pod") is not None
        if iface.get("masquerade") is not None:
            if not on_pod:
                binding_causes.append(cause(INVALID, "Masquerade interface only implemented with pod network",
                                            f"{ifaces_at}[{idx}].name"))
            if (iface.get("macAddress") or "").lower() == _RESERVED_MAC:
                binding_causes.append(cause(INVALID, "The requested MAC address is reserved for the in-pod bridge. "
                                            "Please choose another one.", f"{ifaces_at}[{idx}].macAddress"))
        if iface.get("bridge") is not None and on_pod and not permit_bridge_on_pod:
            binding_causes.append(cause(INVALID, "Bridge on pod network configuration is not enabled under "
                                        "kubevirt-config", f"{ifaces_at}[{idx}].name"))
        if name in iface_names:     # validateInterfaceNameUnique
            unique_iface_causes.append(cause(DUPLICATE, "Only one interface can be connected to one specific network",
                                             f"{ifaces_at}[{idx}].name"))
        iface_names.add(name)
        if net is None:     # validateInterfacesAssignedToNetworks
            at = f"{ifaces_at}[{idx}].name"
            assigned_causes.append(cause(INVALID, NOT_FOUND_FMT.format(at, name), at))
        field_causes += _interface_fields(ifaces_at, idx, iface, net or {})
    causes += state_causes
    causes += binding_causes
    causes += unique_net_causes
    # validateNetworksAssignedToInterfaces
    for idx, net in enumerate(networks):
        name = (net.get("name") or "")
        if name not in iface_names:
            at = f"{field}.networks[{idx}].name"
            causes.append(cause(REQUIRED, NOT_FOUND_FMT.format(at, name), at))
    causes += unique_iface_causes
    causes += assigned_causes
    causes += field_causes
    return causes


_PLAIN_IFACE_KEYS = frozenset(("name", "bridge", "masquerade", "sriov", "binding", "passtBinding", "bootOrder"))


def _interface_fields(ifaces_at: str, idx: int, iface: dict[str, Any], net: dict[str, Any]) -> list[Any]:
    """validateInterfacesFields for one interface."""
    if _PLAIN_IFACE_KEYS.issuperset(iface) and _IFACE_NAME_RE.match(iface.get("name") or ""):
        return []   # no model, MAC, PCI address or ports to check
    at = f"{ifaces_at}[{idx}]"
    causes = []
    if not _IFACE_NAME_RE.match(iface.get("name") or ""):
        causes.append(cause(INVALID, "Network interface name can only contain alphabetical characters, numbers, "
                            "dashes (-) or underscores (_)", f"{at}.name"))
    model = (iface.get("model") or "")
    if model and model not in _MODELS:
        causes.append(cause(NOT_SUPPORTED, f"interface {at}.name uses model {model} that is not supported.",
                            f"{at}.model"))
    mac = (iface.get("macAddress") or "")
    if mac:
        n = _mac_length(mac)
        if n is None:
            causes.append(cause(INVALID, f"interface {at}.name has malformed MAC address ({mac}).", f"{at}.macAddress"))
        elif n > 6:
            causes.append(cause(INVALID, f"interface {at}.name has MAC address ({mac}) that is too long.",
                                f"{at}.macAddress"))
    pci = (iface.get("pciAddress") or "")
    if pci and not pci_address_ok(pci):
        causes.append(cause(INVALID, f"interface {at}.name has malformed PCI address ({pci}).", f"{at}.pciAddress"))
    ports = iface.get("ports")
    if net.get("pod") is not None and ports is not None:
        ports = (ports or ())
        names: set[Any] = set()
        for pidx, port in enumerate(ports):     # validateForwardPortName
            pname = (port.get("name") or "")
            if not pname:
                continue
            if pname in names:
                causes.append(cause(DUPLICATE, f"Duplicate name of the port: {pname}", f"{at}.ports[{pidx}].name"))
            if not _port_name_ok(pname):
                causes.append(cause(INVALID, f"Invalid name of the port: {pname}", f"{at}.ports[{pidx}].name"))
            names.add(pname)
        for pidx, port in enumerate(ports):
            number = port.get("port") or 0
            if number == 0:
                causes.append(cause(REQUIRED, "Port field is mandatory.", f"{at}.ports[{pidx}]"))
            if number < 0 or number > 65536:
                causes.append(cause(INVALID, "Port field must be in range 0 < x < 65536.", f"{at}.ports[{pidx}]"))
            protocol = (port.get("protocol") or "")
            if protocol and protocol not in ("TCP", "UDP"):
                causes.append(cause(INVALID, "Unknown protocol, only TCP or UDP allowed", f"{at}.ports[{pidx}].protocol"))
    return causes


def validate_network_creation(field: str, spec: dict[str, Any]) -> list[Any]:
    """Validator.ValidateCreation: validateDiscontinuedBindings."""
    causes = []
    ifaces_at = f"{field}.domain.devices.interfaces"
    for idx, iface in enumerate(((spec.get("domain") or _E).get("devices") or _E).get("interfaces") or ()):
        if iface.get("slirp") is not None:
            causes.append(cause(INVALID, "Slirp interface support has been discontinued since v1.3",
                                f"{ifaces_at}[{idx}].slirp"))
        if iface.get("passt") is not None:
            causes.append(cause(INVALID, "Passt network binding has been discontinued since v1.3",
                                f"{ifaces_at}[{idx}].passt"))
    return causes
