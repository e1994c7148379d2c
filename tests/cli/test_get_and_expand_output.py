"""`expand` prints as `get -o yaml` prints; `get --sort-by`, `get all`, `wait -l/--all` (issue 29)."""
from __future__ import annotations

import yaml

from instancetype.cli.output import yaml_text
from instancetype.jsonutil import sorted_keys

from ._helpers import INSTANCETYPE, VM, run


def test_expand_prints_yaml_in_get_order(target):
    assert run(target, "apply", "-f", "-", stdin=INSTANCETYPE + "---\n" + VM).code == 0
    r = run(target, "expand", "--vm", "vm1")
    assert r.code == 0, r.err
    expanded = yaml.safe_load(r.out)
    assert expanded["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] == 1
    assert r.out == yaml_text(sorted_keys(expanded), width=80)
    got = run(target, "get", "vm", "vm1", "-o", "yaml").out
    assert list(yaml.safe_load(got)) == list(expanded) == sorted(expanded)
