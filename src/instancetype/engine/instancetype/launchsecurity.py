"""launchSecurity (pkg/instancetype/apply/launchsecurity.go): instancetype wins unless the VM set it."""
from __future__ import annotations

from instancetype.jsonutil import clone

from ._util import domain


def apply(it: dict, spec: dict, metadata: dict, root: str, preference: dict | None = None) -> list[str]:
    ls = it.get("launchSecurity")
    if ls is None:
        return []
    dom = domain(spec)
    if dom.get("launchSecurity") is not None:
        return [f"{root}.domain.launchSecurity"]
    dom["launchSecurity"] = clone(ls)
    return []
