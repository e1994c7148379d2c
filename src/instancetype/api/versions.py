"""Objects of older API versions, as the API server serves them today.

`flavor.kubevirt.io/v1alpha1` objects (and a VM's `spec.flavor`), and
`instancetype.kubevirt.io/v1alpha1|v1alpha2` objects, are read as v1beta1 with a
deprecation warning. The conversions themselves live in `api.v1alpha`; this module
decides when they apply, so the file loader and the store agree.
"""
from __future__ import annotations

from typing import Any

from . import kinds


def needs_upgrade(obj: dict[str, Any]) -> bool:
    """Is this an old-version object, or a VM naming the flavor API?"""
    api_version = obj.get("apiVersion", "")
    group = kinds.group_of(api_version) if isinstance(api_version, str) else ""
    if group == kinds.FLAVOR_GROUP or (group == kinds.GROUP and api_version != kinds.API_VERSION):
        return True
    if obj.get("kind") == "VirtualMachine":
        spec = obj.get("spec")
        if isinstance(spec, dict):
            if "flavor" in spec:
                return True
            m = spec.get("instancetype")
            if isinstance(m, dict) and "flavor" in str(m.get("kind", "")).lower():
                return True
    return False


def upgrade(obj: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The object as v1beta1 (VMs: `spec.flavor` as `spec.instancetype`), and the warnings."""
    from . import v1alpha

    warnings: list[str] = []
    obj, w = v1alpha.rewrite_flavor(obj)
    warnings.extend(w)
    group = kinds.group_of(obj.get("apiVersion", ""))
    if group == kinds.GROUP and obj.get("kind") in kinds.ALL_TYPE_KINDS:
        obj, w = v1alpha.convert_to_v1beta1(obj)
        warnings.extend(w)
    return obj, warnings
