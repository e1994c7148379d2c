"""`expand` prints as `get -o yaml` prints; `get --sort-by`, `get all`, `wait -l/--all` (issue 29)."""
from __future__ import annotations

import yaml

from instancetype.cli.output import yaml_text
from instancetype.jsonutil import sorted_keys

from ._helpers import INSTANCETYPE, VM, run


def test_expand_prints_yaml_in_get_order(target, tmp_path):
    """`expand` (-f, and --vm on the embedded store; on a cluster --vm goes through the aggregated
    API, tests/kube/test_virtctl.py) prints keys as `get -o yaml` does: sorted, as virtctl's YAML."""
    from ._helpers import on_cluster

    assert run(target, "apply", "-f", "-", stdin=INSTANCETYPE + "---\n" + VM).code == 0
    (tmp_path / "all.yaml").write_text(INSTANCETYPE + "---\n" + VM)
    offline = run(target, "expand", "-f", str(tmp_path / "all.yaml"))
    assert offline.code == 0, offline.err
    assert offline.out == yaml_text(sorted_keys(yaml.safe_load(offline.out)), width=80)
    if on_cluster(target):
        return
    r = run(target, "expand", "--vm", "vm1")
    assert r.code == 0, r.err
    expanded = yaml.safe_load(r.out)
    assert expanded["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] == 1
    assert r.out == yaml_text(sorted_keys(expanded), width=80)
    got = run(target, "get", "vm", "vm1", "-o", "yaml").out
    assert list(yaml.safe_load(got)) == list(expanded) == sorted(expanded)


def _types(*specs: tuple[str, int, str]) -> str:
    from ._helpers import instancetype, manifest

    objs = []
    for name, cpu, tier in specs:
        obj = instancetype(name, cpu)
        obj["metadata"]["labels"] = {"tier": tier}
        objs.append(obj)
    return manifest(*objs)


def test_get_sort_by(target):
    assert run(target, "apply", "-f", "-", stdin=_types(("b", 4, "web"), ("c10", 1, "db"), ("c9", 2, "web"))).code == 0
    by_cpu = run(target, "get", "vminstancetype", "--sort-by=.spec.cpu.guest", "-o", "name")
    assert by_cpu.out.split() == [f"virtualmachineinstancetype.instancetype.kubevirt.io/{n}" for n in ("c10", "c9", "b")]
    table = run(target, "get", "vminstancetype", "--sort-by={.metadata.name}", "--no-headers")
    assert [line.split()[0] for line in table.out.splitlines()] == ["b", "c9", "c10"]     # natural order
    r = run(target, "get", "vminstancetype", "--sort-by=.spec.nope")
    assert r.code == 1
    assert r.err == 'error: couldn\'t find any field with path "{.spec.nope}" in the list of objects\n'


def test_get_all_lists_the_kinds_of_the_category_all(target):
    assert run(target, "get", "all").err == "No resources found in default namespace.\n"
    assert run(target, "apply", "-f", "-", stdin=INSTANCETYPE + "---\n" + VM).code == 0
    r = run(target, "get", "all", "-o", "name")
    assert r.code == 0, r.err
    assert r.out.splitlines() == ["virtualmachineinstancetype.instancetype.kubevirt.io/small",
                                  "virtualmachine.kubevirt.io/vm1"]


def test_wait_with_a_selector_or_all(target):
    assert run(target, "apply", "-f", "-", stdin=_types(("w1", 1, "web"), ("w2", 1, "web"), ("d1", 1, "db"))).code == 0
    r = run(target, "wait", "vminstancetype", "-l", "tier=web", "--for=jsonpath={.spec.cpu.guest}=1")
    assert (r.code, sorted(r.out.splitlines())) == (0, [
        "virtualmachineinstancetype.instancetype.kubevirt.io/w1 condition met",
        "virtualmachineinstancetype.instancetype.kubevirt.io/w2 condition met"]), r.err
    r = run(target, "wait", "vminstancetype", "--all", "--for=jsonpath={.spec.cpu.guest}=1")
    assert (r.code, len(r.out.splitlines())) == (0, 3), r.err
    r = run(target, "wait", "vminstancetype", "w1", "-l", "tier=web", "--for=delete")
    assert (r.code, r.err) == (1, "error: name cannot be provided when a selector is specified\n")


def test_version_and_request_logging(target):
    from ._helpers import on_cluster

    r = run(target, "version")
    lines = r.out.splitlines()
    assert r.code == 0 and lines[0].startswith("Client Version: v")
    assert any(line.startswith("Server Version: v1.") for line in lines) == on_cluster(target)
    assert run(target, "version", "--client").out.count("Server Version") == 0
    r = run(target, "get", "vm", "-v=6")
    assert r.code == 0
    logged = [line for line in r.err.splitlines() if "round_trippers.go" in line]
    if on_cluster(target):
        assert logged and all('"Response" verb="GET" url="https://' in line for line in logged), r.err
        assert any('status="200 OK"' in line for line in logged)
    else:
        assert logged == []
