"""`set instancetype|preference` on both stores (`any_cluster`: `--state` or `--kubeconfig` with a
running controller): one JSON patch, then one line once the controller has decided: live (what
changes), restart required (the controller's v1.9 message), the next start; refusals as the
webhook gives them; dry runs keep nothing. The decisions are the controller's (day 2's steps),
never a second copy in the command."""
from __future__ import annotations

import json

import pytest

from tests.kube.both_stores import cli_args

from ._helpers import manifest, run_main, run_settled


@pytest.fixture
def cluster(any_cluster):
    return any_cluster


_run = run_settled


def _it(name: str, cpu: int, memory: str) -> dict:
    return {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
            "metadata": {"name": name}, "spec": {"cpu": {"guest": cpu}, "memory": {"guest": memory}}}


NEEDS_2GI = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
             "metadata": {"name": "needs2gi"}, "spec": {"requirements": {"memory": {"guest": "2Gi"}}}}


def _vm(name: str, run_strategy: str, *, migratable: bool) -> dict:
    binding = {"masquerade": {}} if migratable else {"bridge": {}}
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": name},
            "spec": {"runStrategy": run_strategy,
                     "instancetype": {"kind": "VirtualMachineInstancetype", "name": "small"},
                     "preference": {"kind": "VirtualMachinePreference", "name": "needs2gi"},
                     "template": {"spec": {"domain": {"devices": {"interfaces": [{"name": "default", **binding}]}},
                                           "networks": [{"name": "default", "pod": {}}]}}}}


TYPES = manifest(_it("small", 1, "2Gi"), _it("large", 2, "4Gi"), _it("tiny", 1, "1Gi"), NEEDS_2GI)


def _get(cluster, kind: str, name: str) -> dict:
    r = run_main([*cli_args(cluster), "get", kind, name, "-o", "json"])
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_a_running_migratable_vm_takes_a_bigger_type_live(cluster):
    assert _run(cluster, "apply", "-f", "-", stdin=TYPES + "---\n" + manifest(_vm("vm1", "Always", migratable=True))).code == 0
    r = _run(cluster, "set", "instancetype", "vm/vm1", "large", "--dry-run=server")
    assert r.out == ("virtualmachine.kubevirt.io/vm1 instancetype set to large: live (sockets 1 -> 2, memory "
                     "2Gi -> 4Gi) (server dry run)\n"), r.err
    assert _get(cluster, "vm", "vm1")["spec"]["instancetype"]["name"] == "small"
    r = _run(cluster, "set", "instancetype", "vm/vm1", "large")
    assert (r.code, r.err) == (0, "")
    assert r.out == ("virtualmachine.kubevirt.io/vm1 instancetype set to large: live (sockets 1 -> 2, memory "
                     "2Gi -> 4Gi)\n")
    vm = _get(cluster, "vm", "vm1")
    assert vm["spec"]["instancetype"]["name"] == "large"
    assert vm["status"]["instancetypeRef"]["name"] == "large"        # pinned in that reconcile


def test_a_vm_that_cannot_migrate_needs_a_restart(cluster):
    assert _run(cluster, "apply", "-f", "-", stdin=TYPES + "---\n" + manifest(_vm("vm1", "Always", migratable=False))).code == 0
    r = _run(cluster, "set", "instancetype", "vm/vm1", "large")
    assert r.code == 0, r.err
    assert r.out.startswith("virtualmachine.kubevirt.io/vm1 instancetype set to large: restart required (")
    conditions = {c["type"]: c for c in _get(cluster, "vm", "vm1")["status"].get("conditions", [])}
    assert conditions["RestartRequired"]["status"] == "True"
    assert conditions["RestartRequired"]["message"] in r.out


def test_a_stopped_vm_takes_it_at_the_next_start_and_dry_runs_keep_nothing(cluster):
    assert _run(cluster, "apply", "-f", "-", stdin=TYPES + "---\n" + manifest(_vm("vm1", "Halted", migratable=True))).code == 0
    for mode in ("client", "server"):
        r = _run(cluster, "set", "instancetype", "vm/vm1", "large", f"--dry-run={mode}")
        assert r.code == 0, r.err
        assert r.out == ("virtualmachine.kubevirt.io/vm1 instancetype set to large: takes effect at the next start "
                         f"({'dry run' if mode == 'client' else 'server dry run'})\n")
        assert _get(cluster, "vm", "vm1")["spec"]["instancetype"]["name"] == "small"
    r = _run(cluster, "set", "instancetype", "vm/vm1", "large")
    assert r.out == "virtualmachine.kubevirt.io/vm1 instancetype set to large: takes effect at the next start\n"


def test_a_refused_resize_is_the_webhooks_refusal(cluster):
    assert _run(cluster, "apply", "-f", "-", stdin=TYPES + "---\n" + manifest(_vm("vm1", "Halted", migratable=True))).code == 0
    r = _run(cluster, "set", "instancetype", "vm/vm1", "tiny")
    assert r.code == 1 and r.out == ""
    assert "insufficient Memory resources of 1Gi provided by instance type, preference requires 2Gi" in r.err
    assert _get(cluster, "vm", "vm1")["spec"]["instancetype"]["name"] == "small"
    r = _run(cluster, "set", "instancetype", "vm/vm1")
    assert r.code == 1 and r.err.startswith("error: set instancetype needs")
