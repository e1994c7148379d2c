"""Seed 002's `flavor.kubevirt.io/v1alpha1` objects on a cluster, read as the v1beta1 kinds.

`install` serves the flavor kinds as their own CRDs (the objects stay in flavor.kubevirt.io),
whereas the embedded store upgrades them at admission. So that a VM's matcher finds them the same
way in both, a lookup of an instancetype kind that misses in instancetype.kubevirt.io falls back
to the flavor kind of the same role, converted as `api.versions.upgrade` converts it on admission
(one copy of the rule). A namespaced kind is only ever looked up in the VM's own namespace.
"""
from __future__ import annotations

from instancetype.api import kinds, versions

FLAVOR_API_VERSION = f"{kinds.FLAVOR_GROUP}/v1alpha1"
# instancetype kind -> the flavor kind that stands for it
FLAVOR_OF = {new: old for old, new in kinds.FLAVOR_KINDS.items()}


def informer_key(flavor_kind: str) -> str:
    """An informer's name for a flavor kind (two flavor kinds share their name with an
    instancetype kind): `flavor.kubevirt.io/v1alpha1/VirtualMachinePreference`."""
    return f"{FLAVOR_API_VERSION}/{flavor_kind}"


# The informers the controller and `serve` keep of the flavor kinds (their CRDs may be absent).
FLAVOR_INFORMER_KINDS = tuple(informer_key(k) for k in kinds.FLAVOR_KINDS)


def split_key(key: str) -> tuple[str, str | None]:
    """An informer key -> (kind, apiVersion or None for the kind's served version)."""
    api_version, _, kind = key.rpartition("/")
    return (kind, api_version) if api_version else (key, None)


def as_type(obj: dict) -> dict:
    """A flavor.kubevirt.io object as the v1beta1 object admission would have stored."""
    return versions.upgrade(obj)[0]


__all__ = ["FLAVOR_API_VERSION", "FLAVOR_OF", "FLAVOR_INFORMER_KINDS", "informer_key", "split_key", "as_type"]
