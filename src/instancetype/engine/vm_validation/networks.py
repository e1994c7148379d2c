"""Networks and interfaces of a VMI spec (KubeVirt pkg/network/admitter: Validator.Validate and
Validator.ValidateCreation with validateSinglePodNetwork, validateSingleNetworkSource,
validateMultusNetworkSource, validateInterfaceStateValue, validateInterfaceBinding,
validateNetworkNameUnique, validateNetworksAssignedToInterfaces, validateInterfaceNameUnique,
validateInterfacesAssignedToNetworks, validateInterfacesFields, validateDiscontinuedBindings)."""
from __future__ import annotations

import re

from instancetype.engine.vm_validation._common import (
    DUPLICATE, INVALID, NOT_FOUND_FMT, NOT_SUPPORTED, REQUIRED, cause, d, items, pci_address_ok, s,
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


def validate_networks(field: str, spec: dict, permit_bridge_on_pod: bool) -> list:
    """Validator.Validate."""
    networks = items(spec.get("networks"))
    ifaces = items(d(d(spec.get("domain")).get("devices")).get("interfaces"))
    by_name: dict = {}
    for net in networks:
        by_name.setdefault(s(net.get("name")), net)
    ifaces_at = f"{field}.domain.devices.interfaces"
    causes = []
    # validateSinglePodNetwork
    pods = [n for n in networks if n.get("pod") is not None]
    multus_default = [n for n in networks if n.get("multus") is not None and d(n["multus"]).get("default") is True]
    if len(pods) > 1:
        causes.append(cause(DUPLICATE, f"more than one interface is connected to a pod network in {field}.interfaces",
                            f"{field}.interfaces"))
    if len(multus_default) > 1:
        causes.append(cause(INVALID, "Multus CNI should only have one default network", f"{field}.networks"))
    if pods and multus_default:
        causes.append(cause(INVALID, "Pod network cannot be defined when Multus default network is defined",
                            f"{field}.networks"))
    # validateSingleNetworkSource
    for idx, net in enumerate(networks):
        pod, multus = net.get("pod") is not None, net.get("multus") is not None
        if not pod and not multus:
            causes.append(cause(REQUIRED, "should have a network type", f"{field}.networks[{idx}]"))
        elif pod and multus:
            causes.append(cause(REQUIRED, "should have only one network type", f"{field}.networks[{idx}]"))
    # validateMultusNetworkSource: the first one only
    for idx, net in enumerate(networks):
        if net.get("multus") is not None and not s(d(net["multus"]).get("networkName")):
            causes.append(cause(REQUIRED, "CNI delegating plugin must have a networkName", f"{field}.networks[{idx}]"))
            break
    # validateInterfaceStateValue
    default_net = pods[0] if pods else (multus_default[0] if multus_default else None)
    for idx, iface in enumerate(ifaces):
        name, state = s(iface.get("name")), s(iface.get("state"))
        at = f"{ifaces_at}[{idx}].state"
        if state not in _STATES:
            causes.append(cause(INVALID, f"logical {name} interface state value is unsupported: {state}", at))
        if state == "absent" and iface.get("bridge") is None:
            causes.append(cause(INVALID, f'"{name}" interface\'s state "absent" is supported only for bridge binding',
                                at))
        if state == "absent" and default_net is not None and s(default_net.get("name")) == name:
            causes.append(cause(INVALID, f'"{name}" interface\'s state "absent" is not supported on default networks',
                                at))
    # validateInterfaceBinding
    for idx, iface in enumerate(ifaces):
        name = s(iface.get("name"))
        net = by_name.get(name, {})
        if sum(1 for k in _BINDINGS if iface.get(k) is not None) != 1:
            causes.append(cause(INVALID, f"logical {name} interface must have exactly one binding method or binding "
                                f"plugin", f"{ifaces_at}[{idx}]"))
        if iface.get("masquerade") is not None:
            if net.get("pod") is None:
                causes.append(cause(INVALID, "Masquerade interface only implemented with pod network",
                                    f"{ifaces_at}[{idx}].name"))
            if s(iface.get("macAddress")).lower() == _RESERVED_MAC:
                causes.append(cause(INVALID, "The requested MAC address is reserved for the in-pod bridge. Please "
                                    "choose another one.", f"{ifaces_at}[{idx}].macAddress"))
        if iface.get("bridge") is not None and net.get("pod") is not None and not permit_bridge_on_pod:
            causes.append(cause(INVALID, "Bridge on pod network configuration is not enabled under kubevirt-config",
                                f"{ifaces_at}[{idx}].name"))
    # validateNetworkNameUnique
    seen: set = set()
    for idx, net in enumerate(networks):
        name = s(net.get("name"))
        if name in seen:
            causes.append(cause(DUPLICATE, f'Network with name "{name}" already exists, every network must have a '
                                f'unique name', f"{field}.networks[{idx}].name"))
        seen.add(name)
    # validateNetworksAssignedToInterfaces
    iface_names = {s(i.get("name")) for i in ifaces}
    for idx, net in enumerate(networks):
        name = s(net.get("name"))
        if name not in iface_names:
            at = f"{field}.networks[{idx}].name"
            causes.append(cause(REQUIRED, NOT_FOUND_FMT.format(at, name), at))
    # validateInterfaceNameUnique
    seen = set()
    for idx, iface in enumerate(ifaces):
        name = s(iface.get("name"))
        if name in seen:
            causes.append(cause(DUPLICATE, "Only one interface can be connected to one specific network",
                                f"{ifaces_at}[{idx}].name"))
        seen.add(name)
    # validateInterfacesAssignedToNetworks
    for idx, iface in enumerate(ifaces):
        name = s(iface.get("name"))
        if name not in by_name:
            at = f"{ifaces_at}[{idx}].name"
            causes.append(cause(INVALID, NOT_FOUND_FMT.format(at, name), at))
    # validateInterfacesFields
    for idx, iface in enumerate(ifaces):
        causes.extend(_interface_fields(ifaces_at, idx, iface, by_name.get(s(iface.get("name")), {})))
    return causes


def _interface_fields(ifaces_at: str, idx: int, iface: dict, net: dict) -> list:
    at = f"{ifaces_at}[{idx}]"
    causes = []
    if not _IFACE_NAME_RE.match(s(iface.get("name"))):
        causes.append(cause(INVALID, "Network interface name can only contain alphabetical characters, numbers, "
                            "dashes (-) or underscores (_)", f"{at}.name"))
    model = s(iface.get("model"))
    if model and model not in _MODELS:
        causes.append(cause(NOT_SUPPORTED, f"interface {at}.name uses model {model} that is not supported.",
                            f"{at}.model"))
    mac = s(iface.get("macAddress"))
    if mac:
        n = _mac_length(mac)
        if n is None:
            causes.append(cause(INVALID, f"interface {at}.name has malformed MAC address ({mac}).", f"{at}.macAddress"))
        elif n > 6:
            causes.append(cause(INVALID, f"interface {at}.name has MAC address ({mac}) that is too long.",
                                f"{at}.macAddress"))
    pci = s(iface.get("pciAddress"))
    if pci and not pci_address_ok(pci):
        causes.append(cause(INVALID, f"interface {at}.name has malformed PCI address ({pci}).", f"{at}.pciAddress"))
    ports = iface.get("ports")
    if net.get("pod") is not None and ports is not None:
        ports = items(ports)
        names: set = set()
        for pidx, port in enumerate(ports):     # validateForwardPortName
            pname = s(port.get("name"))
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
            protocol = s(port.get("protocol"))
            if protocol and protocol not in ("TCP", "UDP"):
                causes.append(cause(INVALID, "Unknown protocol, only TCP or UDP allowed", f"{at}.ports[{pidx}].protocol"))
    return causes


def validate_network_creation(field: str, spec: dict) -> list:
    """Validator.ValidateCreation: validateDiscontinuedBindings."""
    causes = []
    ifaces_at = f"{field}.domain.devices.interfaces"
    for idx, iface in enumerate(items(d(d(spec.get("domain")).get("devices")).get("interfaces"))):
        if iface.get("slirp") is not None:
            causes.append(cause(INVALID, "Slirp interface support has been discontinued since v1.3",
                                f"{ifaces_at}[{idx}].slirp"))
        if iface.get("passt") is not None:
            causes.append(cause(INVALID, "Passt network binding has been discontinued since v1.3",
                                f"{ifaces_at}[{idx}].passt"))
    return causes
