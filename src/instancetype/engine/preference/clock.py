"""Clock preferences (the `clock` block). KubeVirt: pkg/instancetype/preference/apply/clock.go."""
from __future__ import annotations

from typing import Any

from ._util import child, copy_value, domain


def apply_clock(pref_clock: dict[str, Any], spec: dict[str, Any]) -> None:
    clock = child(domain(spec), "clock")
    offset = pref_clock.get("preferredClockOffset")
    # The whole offset is replaced, and only when the VM sets no offset at all
    # (Go's Clock inlines ClockOffset: `utc` / `timezone`).
    if type(offset) is dict and clock.get("utc") is None and clock.get("timezone") is None:
        for key in ("utc", "timezone"):
            v = offset.get(key)
            if v is not None:
                clock[key] = copy_value(v)
    timer = pref_clock.get("preferredTimer")
    # No per-timer merge: any VM timer object blocks the preference.
    if timer is not None and clock.get("timer") is None:
        clock["timer"] = copy_value(timer)
