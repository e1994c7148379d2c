"""Seed 003 (user guide): preference overridden by the user, versioning with ControllerRevisions."""
from __future__ import annotations

import base64
import json

from ._helpers import CLOUD_INIT_ECHO, get_json, instancetype, manifest, preference, run, run_process, vm

OVERRIDE = manifest(
    preference("example-preference-disk-virtio", {"devices": {"preferredDiskBus": "virtio"}}, version="v1alpha1"),
    vm("example-preference-user-override", preference="example-preference-disk-virtio", cloud_init=CLOUD_INIT_ECHO,
       domain={"memory": {"guest": "128Mi"},
               "devices": {"disks": [{"disk": {"bus": "sata"}, "name": "containerdisk"},
                                     {"disk": {}, "name": "cloudinitdisk"}]},
               "resources": {}}))

CSMALL = manifest(instancetype("csmall", version="v1alpha1"))
VM_CIRROS_CSMALL = manifest(vm("vm-cirros-csmall", instancetype="csmall"))


def test_user_override_of_preferred_disk_bus(tmp_path):
    state = tmp_path / "state.db"
    r = run(state, "apply", "-f", "-", stdin=OVERRIDE)
    # The seed's `configured` comes from a VM that already existed; on a new cluster kubectl says created.
    assert r.out == ("virtualmachinepreference.instancetype.kubevirt.io/example-preference-disk-virtio created\n"
                     "virtualmachine.kubevirt.io/example-preference-user-override created\n"), r.err
    r = run_process(state, "start", "example-preference-user-override")
    assert (r.code, r.out) == (0, "VM example-preference-user-override was scheduled to start\n")
    vm = get_json(state, "vms/example-preference-user-override")
    assert vm["spec"]["template"]["spec"]["domain"]["devices"]["disks"] == [
        {"disk": {"bus": "sata"}, "name": "containerdisk"}, {"disk": {}, "name": "cloudinitdisk"}]
    vmi = get_json(state, "vmis/example-preference-user-override")
    assert vmi["spec"]["domain"]["devices"]["disks"] == [
        {"disk": {"bus": "sata"}, "name": "containerdisk"}, {"disk": {"bus": "virtio"}, "name": "cloudinitdisk"}]


def test_versioning_with_controller_revisions(tmp_path):
    state = tmp_path / "state.db"
    (tmp_path / "csmall.yaml").write_text(CSMALL)
    (tmp_path / "vm-cirros-csmall.yaml").write_text(VM_CIRROS_CSMALL)
    r = run_process(state, "apply", "-f", str(tmp_path / "csmall.yaml"), "-f", str(tmp_path / "vm-cirros-csmall.yaml"))
    assert r.out == ("virtualmachineinstancetype.instancetype.kubevirt.io/csmall created\n"
                     "virtualmachine.kubevirt.io/vm-cirros-csmall created\n"), r.err
    vm = get_json(state, "vm/vm-cirros-csmall")
    assert vm["spec"]["instancetype"] == {"kind": "VirtualMachineInstancetype", "name": "csmall"}
    assert run(state, "start", "vm-cirros-csmall").out == "VM vm-cirros-csmall was scheduled to start\n"
    vm = get_json(state, "vm/vm-cirros-csmall")
    uid = get_json(state, "virtualmachineinstancetype", "csmall")["metadata"]["uid"]
    name = f"vm-cirros-csmall-csmall-{uid}-1"
    assert vm["spec"]["instancetype"] == {"kind": "VirtualMachineInstancetype", "name": "csmall", "revisionName": name}
    cr = get_json(state, f"controllerrevision/{name}")
    assert cr["apiVersion"] == "apps/v1" and cr["kind"] == "ControllerRevision"
    assert cr["metadata"]["ownerReferences"] == [{
        "apiVersion": "kubevirt.io/v1", "blockOwnerDeletion": True, "controller": True, "kind": "VirtualMachine",
        "name": "vm-cirros-csmall", "uid": vm["metadata"]["uid"]}]
    assert cr["data"]["spec"] == {"cpu": {"guest": 1}, "memory": {"guest": "128Mi"}} or \
        json.loads(base64.b64decode(cr["data"]["spec"])) == {"cpu": {"guest": 1}, "memory": {"guest": "128Mi"}}
    assert cr.get("revision", 0) == 0
    table = run(state, "get", "controllerrevision").out.splitlines()
    assert table[0].split() == ["NAME", "CONTROLLER", "REVISION", "AGE"]
    # beside the VM's start revision (revision-start-vm-<uid>-<generation>, KubeVirt v1.9's)
    assert [row.split()[:3] for row in table[1:] if row.startswith(name)] == [
        [name, "virtualmachine.kubevirt.io/vm-cirros-csmall", "0"]]
    r = run_process(state, "delete", "vm/vm-cirros-csmall")
    assert (r.code, r.out) == (0, 'virtualmachine.kubevirt.io "vm-cirros-csmall" deleted from default namespace\n')
    r = run(state, "get", f"controllerrevision/{name}")
    assert (r.code, r.err) == (1, f'Error from server (NotFound): controllerrevisions.apps "{name}" not found\n')


def test_fedora_example_from_the_guide(tmp_path):
    from .test_seed_001 import FEDORA

    state = tmp_path / "state.db"
    r = run(state, "apply", "-f", "-", stdin=FEDORA)
    assert r.code == 0 and r.out.count(" created\n") == 3
    assert run(state, "get", "vm", "fedora").out.split()[-2:] == ["Running", "True"]
