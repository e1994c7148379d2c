"""Seed 003's versioning commands with shared revisions switched on (the KubeVirt object's
`instancetype.kubevirt.io/shared-revisions: "true"`): the same commands, one revision per spec."""
from __future__ import annotations

import base64
import json
import re

from ._helpers import get_json, instancetype, manifest, run, run_process, vm

CSMALL = manifest(instancetype("csmall", version="v1alpha1"))
KUBEVIRT_SHARED = manifest({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
                            "metadata": {"name": "kubevirt", "namespace": "kubevirt",
                                         "annotations": {"instancetype.kubevirt.io/shared-revisions": "true"}}})


def _cluster(tmp_path, name, shared):
    state = tmp_path / name
    (tmp_path / "csmall.yaml").write_text(CSMALL)
    (tmp_path / "vms.yaml").write_text(manifest(vm("vm-cirros-csmall", instancetype="csmall"),
                                                vm("vm-cirros-csmall-2", instancetype="csmall")))
    if shared:
        r = run(state, "apply", "-f", "-", stdin=KUBEVIRT_SHARED)
        assert r.out == "kubevirt.kubevirt.io/kubevirt configured\n", r.err
    r = run(state, "apply", "-f", str(tmp_path / "csmall.yaml"), "-f", str(tmp_path / "vms.yaml"))
    assert r.code == 0, r.err
    for name in ("vm-cirros-csmall", "vm-cirros-csmall-2"):
        assert run(state, "start", name).out == f"VM {name} was scheduled to start\n"
    return state


def test_versioning_commands_with_shared_revisions(tmp_path):
    state = _cluster(tmp_path, "shared.db", shared=True)
    vm1, vm2 = get_json(state, "vm/vm-cirros-csmall"), get_json(state, "vm/vm-cirros-csmall-2")
    name = vm1["spec"]["instancetype"]["revisionName"]
    assert re.fullmatch(r"csmall-vmit-[0-9a-f]{16}", name)
    assert vm1["spec"]["instancetype"] == vm2["spec"]["instancetype"] == {
        "kind": "VirtualMachineInstancetype", "name": "csmall", "revisionName": name}
    cr = get_json(state, f"controllerrevision/{name}")
    assert cr["apiVersion"] == "apps/v1" and cr["kind"] == "ControllerRevision" and cr["revision"] == 0
    assert "ownerReferences" not in cr["metadata"]
    assert cr["metadata"]["labels"]["instancetype.kubevirt.io/shared-revision"] == "true"
    assert cr["metadata"]["labels"]["instancetype.kubevirt.io/object-kind"] == "VirtualMachineInstancetype"
    assert cr["data"]["spec"] == {"cpu": {"guest": 1}, "memory": {"guest": "128Mi"}}
    table = run(state, "get", "controllerrevision").out.splitlines()
    assert table[0].split() == ["NAME", "CONTROLLER", "REVISION", "AGE"]
    # beside the VMs' start revisions (revision-start-vm-<uid>-<generation>, KubeVirt v1.9's)
    assert [row.split()[:3] for row in table[1:] if not row.startswith("revision-start-vm-")] == [[name, "<none>", "0"]]
    described = run(state, "describe", f"controllerrevision/{name}").out
    assert f"Name:         {name}" in described and "instancetype.kubevirt.io/shared-revision=true" in described
    # deleting one VM keeps the revision its sibling pins; deleting the last removes it (seed 003)
    r = run_process(state, "delete", "vm/vm-cirros-csmall")
    assert (r.code, r.out) == (0, 'virtualmachine.kubevirt.io "vm-cirros-csmall" deleted from default namespace\n')
    assert get_json(state, f"controllerrevision/{name}")["metadata"]["uid"] == cr["metadata"]["uid"]
    r = run_process(state, "delete", "vm/vm-cirros-csmall-2")
    assert r.code == 0, r.err
    r = run(state, "get", f"controllerrevision/{name}")
    assert (r.code, r.err) == (1, f'Error from server (NotFound): controllerrevisions.apps "{name}" not found\n')


def test_expand_vm_prints_the_same_with_shared_and_own_revisions(tmp_path):
    shared, own = _cluster(tmp_path, "shared.db", True), _cluster(tmp_path, "own.db", False)
    assert get_json(own, "vm/vm-cirros-csmall")["spec"]["instancetype"]["revisionName"].startswith(
        "vm-cirros-csmall-csmall-")
    for fmt in ("yaml", "json"):
        a = run(shared, "expand", "--vm", "vm-cirros-csmall", "-o", fmt)
        b = run(own, "expand", "--vm", "vm-cirros-csmall", "-o", fmt)
        assert a.code == b.code == 0 and "128Mi" in a.out, a.err + b.err
        assert _unstamped(a.out) == _unstamped(b.out)


def _unstamped(text: str) -> str:
    """The output without what differs between two clusters (uids, times, resourceVersions)."""
    return re.sub(r'("?(?:uid|creationTimestamp|resourceVersion|lastTransitionTime)"?: )"?[^",\n]*"?', r"\1X", text)


def test_seed_003_spec_revision_under_a_shared_name_is_upgraded(tmp_path):
    state = _cluster(tmp_path, "shared.db", shared=True)
    name = get_json(state, "vm/vm-cirros-csmall")["spec"]["instancetype"]["revisionName"]
    assert run(state, "delete", "vm", "vm-cirros-csmall", "vm-cirros-csmall-2").code == 0
    # the seed's KubeVirt v0.56 payload, restored under the shared name, and a VM pinned to it
    spec = base64.b64encode(json.dumps({"cpu": {"guest": 1}, "memory": {"guest": "128Mi"}}).encode()).decode()
    old = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": name},
           "data": {"apiVersion": "", "spec": spec}}
    pinned = vm("restored", instancetype="csmall")
    pinned["spec"]["instancetype"]["revisionName"] = name
    r = run(state, "apply", "-f", "-", stdin=manifest(old, pinned))
    assert r.code == 0, r.err
    assert run(state, "start", "restored").code == 0
    new = get_json(state, "vm/restored")["spec"]["instancetype"]["revisionName"]
    assert new != name                                        # a new revision (data is immutable) ...
    assert run(state, "get", f"controllerrevision/{name}").code == 1     # ... and the old one gone
    cr = get_json(state, f"controllerrevision/{new}")
    assert cr["metadata"]["labels"]["instancetype.kubevirt.io/object-version"] == "v1beta1"
    assert cr["data"]["apiVersion"] == "instancetype.kubevirt.io/v1beta1"
    assert get_json(state, "vmi/restored")["spec"]["domain"]["memory"]["guest"] == "128Mi"
