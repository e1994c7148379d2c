"""launchSecurity (pkg/instancetype/apply/launchsecurity.go): instancetype wins unless the VM set it."""
from __future__ import annotations

from typing import Any

from instancetype.engine.jsondata import copy_json

from ._util import domain


def apply(it: dict[str, Any], spec: dict[str, Any], metadata: dict[str, Any], root: str, preference: dict[str, Any] | None = None) -> list[str]:
    ls = it.get("launchSecurity")
    if ls is None:
        return []
    dom = domain(spec)
    if dom.get("launchSecurity") is not None:
        return [f"{root}.domain.launchSecurity"]
    dom["launchSecurity"] = copy_json(ls)
    return []
