"""Print an object as virtctl does (sigs.k8s.io/yaml: JSON field names, keys sorted)."""
from __future__ import annotations

import yaml

try:
    from yaml import CSafeDumper as _Base
except ImportError:  # PyYAML without libyaml
    from yaml import SafeDumper as _Base  # type: ignore[assignment]  # the same interface, in Python


class _Dumper(_Base):
    pass


def _str(dumper, value: str):
    if not value.isascii():
        # Go's JSON encoding turns every invalid UTF-8 byte (here: surrogateescape'd) into U+FFFD
        value = "".join("\ufffd" if "\udc80" <= c <= "\udcff" else c for c in value)
    # multi-line strings (cloud-init user data) as literal blocks, as Go's yaml prints them
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dump(obj: dict) -> str:
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=True, default_flow_style=False,
                     allow_unicode=True, width=1 << 30)

