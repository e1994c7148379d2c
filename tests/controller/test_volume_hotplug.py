"""Volume hotplug on both stores (`any_cluster`): virt-api's addvolume/removevolume subresources as
v1.9 answers them with its default feature gates (DeclarativeHotplugVolumes: the VM's template
changes, the controller hot-plugs into the running VMI) and with HotplugVolumes on (the VM's
`status.volumeRequests`, carried out by the controller; the VMI's subresource patches the VMI);
the VMI's `volumeStatus` as the simulated node reports it (attached at once: Ready).

KubeVirt's functional test is the model (tests/storage/hotplug.go, "Offline VM" / "WithDataVolume"
/ "should add/remove volume with persist"): a running VM, a claim and a DataVolume that exist,
the volume added (`verifyVolumeAndDiskVMIAdded`, `verifyVolumeStatus` Ready with a target,
`verifyVolumeAndDiskVMAdded` with --persist), then removed (`verifyVolumeNolongerAccessible`)."""
from __future__ import annotations

import pytest

from instancetype.store.base import BadRequest, Conflict, NotFound
from tests import builders
from tests.controller import day2_helpers

IT = builders.instancetype_obj("csmall", cpu=1, memory="128Mi")
PREF = builders.preference_obj("cirros", {"devices": {"preferredDiskBus": "virtio"}})
HOTPLUG_ON = {"developerConfiguration": {"featureGates": ["HotplugVolumes"]}}


def _claim(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "volumeMode": "Filesystem",
                     "resources": {"requests": {"storage": "1Gi"}}}}


def _data_volume(name: str) -> dict:
    return {"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": {"name": name},
            "spec": {"source": {"blank": {}}, "storage": {"resources": {"requests": {"storage": "1Gi"}}}}}


def _options(name: str, source: str = "pvc", *, bus: str = "scsi", dry_run: bool = False) -> dict:
    """AddVolumeOptions as virtctl addvolume builds them (serial: the volume's name)."""
    volume_source = ({"persistentVolumeClaim": {"claimName": name, "hotpluggable": True}} if source == "pvc"
                     else {"dataVolume": {"name": name, "hotpluggable": True}})
    out: dict = {"name": name, "disk": {"name": "", "disk": {"bus": bus}, "serial": name},
                 "volumeSource": volume_source}
    if dry_run:
        out["dryRun"] = ["All"]
    return out


def _names(spec: dict) -> tuple[list, list]:
    return ([v["name"] for v in spec.get("volumes") or ()],
            [d["name"] for d in (spec.get("domain") or {}).get("devices", {}).get("disks") or ()])


def _vmi(cluster, name: str = "vm1") -> dict:
    return cluster.get("VirtualMachineInstance", name)


def _template(cluster, name: str = "vm1") -> dict:
    return cluster.get("VirtualMachine", name)["spec"]["template"]["spec"]


def _status_of(vmi: dict, volume: str) -> dict | None:
    return next((v for v in vmi["status"].get("volumeStatus") or () if v["name"] == volume), None)


def _set_gates(cluster, configuration: dict) -> None:
    day2_helpers.kubevirt(cluster, configuration=configuration)


def _ns(cluster) -> str:
    """The namespace the test's `default` stands for (virt-api's messages name it)."""
    return cluster.namespace if cluster.store_name == "kube" else "default"


@pytest.fixture
def cluster(any_cluster):
    any_cluster.apply(IT)
    any_cluster.apply(PREF)
    any_cluster.create(_claim("pvc1"))
    return any_cluster


def test_add_and_remove_with_persist(cluster):
    """Default gates: --persist changes the VM's template; the controller hot-plugs the volume
    into the running VMI, the node reports it Ready; removal reverses both."""
    cluster.apply(builders.csmall_vm("vm1", "Always"))
    before = _vmi(cluster)
    assert [v["name"] for v in before["status"]["volumeStatus"]] == ["containerdisk"]
    assert before["status"]["volumeStatus"][0]["target"] == "vda"

    cluster.add_volume("vm1", options=_options("pvc1"), persist=True)
    template = _template(cluster)
    assert template["volumes"][-1] == {"name": "pvc1", "persistentVolumeClaim": {"claimName": "pvc1",
                                                                                 "hotpluggable": True}}
    assert template["domain"]["devices"]["disks"][-1] == {"name": "pvc1", "disk": {"bus": "scsi"}, "serial": "pvc1"}
    vmi = _vmi(cluster)
    assert _names(vmi["spec"])[0][-1] == "pvc1" and _names(vmi["spec"])[1][-1] == "pvc1"
    status = _status_of(vmi, "pvc1")
    assert (status["phase"], status["reason"], status["message"], status["target"]) == (
        "Ready", "VolumeReady", "Successfully attach hotplugged volume pvc1 to VM", "sda")
    assert status["hotplugVolume"]["attachPodName"].startswith("hp-volume-")
    assert status["persistentVolumeClaimInfo"]["claimName"] == "pvc1"
    vm = cluster.get("VirtualMachine", "vm1")
    assert vm["status"]["printableStatus"] == "Running"
    assert not any(c["type"] == "RestartRequired" for c in vm["status"]["conditions"])

    # the same name again, or the same claim under another name: v1.9's Conflicts
    with pytest.raises(Conflict) as e:
        cluster.add_volume("vm1", options=_options("pvc1"), persist=True)
    assert str(e.value) == ('Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm1": '
                            "Unable to add volume [pvc1] because volume with that name already exists")
    other = _options("pvc1")
    other["name"] = "other"
    with pytest.raises(Conflict) as e:
        cluster.add_volume("vm1", options=other, persist=True)
    assert str(e.value).endswith("Unable to add volume source [pvc1] because it already exists")

    cluster.remove_volume("vm1", options={"name": "pvc1"}, persist=True)
    assert _names(_template(cluster)) == (["containerdisk"], [])
    vmi = _vmi(cluster)
    assert _names(vmi["spec"]) == (["containerdisk"], ["containerdisk"])
    assert [v["name"] for v in vmi["status"]["volumeStatus"]] == ["containerdisk"]


def test_refusals(cluster):
    cluster.apply(builders.csmall_vm("vm1", "Always"))
    # without --persist (the VMI's subresource) a VM's VMI is refused under the default gates
    with pytest.raises(BadRequest) as e:
        cluster.add_volume("vm1", options=_options("pvc1"))
    assert str(e.value) == f"VMI {_ns(cluster)}/vm1 is owned by a VM"
    # removing a volume the VM started with: not hotpluggable
    with pytest.raises(Conflict) as e:
        cluster.remove_volume("vm1", options={"name": "containerdisk"}, persist=True)
    assert str(e.value).endswith("Unable to remove volume [containerdisk] because it is not hotpluggable")
    with pytest.raises(Conflict) as e:
        cluster.remove_volume("vm1", options={"name": "nope"}, persist=True)
    assert str(e.value).endswith("Unable to remove volume [nope] because it does not exist")
    # the handler's own checks
    with pytest.raises(BadRequest, match="^AddVolumeOptions requires name to be set$"):
        cluster.add_volume("vm1", options={}, persist=True)
    with pytest.raises(BadRequest, match="^AddVolumeOptions requires disk to not be nil$"):
        cluster.add_volume("vm1", options={"name": "x"}, persist=True)
    with pytest.raises(NotFound) as e:
        cluster.add_volume("nope", options=_options("pvc1"), persist=True)
    assert str(e.value) == 'virtualmachine.kubevirt.io "nope" not found'
    # a bus a hotplugged disk cannot have: the VM takes it, the VMI's update validator refuses the
    # controller's patch, and the VM says why (then the volume is removed again)
    cluster.add_volume("vm1", options=_options("pvc1", bus="sata"), persist=True)
    vm = cluster.get("VirtualMachine", "vm1")
    failure = next(c for c in vm["status"]["conditions"] if c["type"] == "Failure")
    assert (failure["reason"], failure["message"]) == (
        "HotplugVolumeError", "Error encountered while handling declarative hotplug volumes: admission webhook "
        '"virtualmachineinstances-update-validator.kubevirt.io" denied the request: Hotplug configuration for disk '
        "[pvc1] requires bus to be 'scsi' or 'virtio'. [sata] is not permitted.")
    assert _names(_vmi(cluster)["spec"])[0] == ["containerdisk"]
    assert vm["status"]["printableStatus"] == "Running"        # the guest runs on, without the volume
    cluster.remove_volume("vm1", options={"name": "pvc1"}, persist=True)
    assert not any(c["type"] == "Failure" for c in cluster.get("VirtualMachine", "vm1")["status"]["conditions"])
    # a dry run changes nothing
    cluster.add_volume("vm1", options=_options("pvc1", dry_run=True), persist=True)
    assert _names(_template(cluster)) == (["containerdisk"], [])
    # both gates off
    _set_gates(cluster, {"developerConfiguration": {"disabledFeatureGates": ["DeclarativeHotplugVolumes"]}})
    with pytest.raises(BadRequest) as e:
        cluster.add_volume("vm1", options=_options("pvc1"), persist=True)
    assert str(e.value) == "Enable DeclarativeHotplugVolumes or HotplugVolumes feature gate to use this API."


def test_stopped_vm_gets_the_volume_at_its_next_start(cluster):
    cluster.apply(builders.csmall_vm("vm1", "Halted"))
    cluster.add_volume("vm1", options=_options("pvc1"), persist=True)
    assert _names(_template(cluster))[0] == ["containerdisk", "pvc1"]
    assert cluster.get("VirtualMachine", "vm1")["status"]["printableStatus"] == "Stopped"
    with pytest.raises(NotFound):      # without --persist: no VMI
        cluster.add_volume("vm1", options=_options("pvc1"))
    cluster.start("vm1")
    vmi = _vmi(cluster)
    assert _names(vmi["spec"])[0] == ["containerdisk", "pvc1"]
    # started with it: a volume of the VMI, not a hotplugged one
    assert "hotplugVolume" not in _status_of(vmi, "pvc1")
    assert cluster.get("VirtualMachine", "vm1")["status"]["printableStatus"] == "Running"


def test_a_volume_waiting_for_its_claim_attaches_once_the_claim_is_written(cluster):
    """KubeVirt's VMI controller watches claims and DataVolumes: a hot-plugged volume whose claim
    does not exist yet stays Pending (FailedPvcNotFound) until the claim is written, then the
    node attaches it; a DataVolume not filled yet waits for CDI the same way."""
    cluster.apply(builders.csmall_vm("vm1", "Always"))
    cluster.add_volume("vm1", options=_options("late"), persist=True)
    status = _status_of(_vmi(cluster), "late")
    assert (status["phase"], status["reason"], status["message"]) == ("Pending", "FailedPvcNotFound",
                                                                      "PVC late not found")
    assert cluster.get("VirtualMachine", "vm1")["status"]["printableStatus"] == "Running"

    cluster.create(_claim("late"))
    status = _status_of(_vmi(cluster), "late")
    assert (status["phase"], status["reason"], status["target"]) == ("Ready", "VolumeReady", "sda")


def test_hotplug_volumes_gate(cluster):
    """HotplugVolumes on: --persist records a volume request the controller carries out (the
    template and the VMI change, the request goes); without --persist the VMI alone changes."""
    _set_gates(cluster, HOTPLUG_ON)
    cluster.create(_data_volume("dv1"))         # the simulated CDI fills it: Succeeded, its claim Bound
    cluster.apply(builders.csmall_vm("vm1", "Always"))

    cluster.add_volume("vm1", options=_options("dv1", "dv"), persist=True)
    vm = cluster.get("VirtualMachine", "vm1")
    assert "volumeRequests" not in vm["status"]
    assert vm["spec"]["template"]["spec"]["volumes"][-1] == {"name": "dv1", "dataVolume": {"name": "dv1",
                                                                                           "hotpluggable": True}}
    status = _status_of(_vmi(cluster), "dv1")
    assert (status["phase"], status["persistentVolumeClaimInfo"]["claimName"]) == ("Ready", "dv1")

    cluster.add_volume("vm1", options=_options("pvc1", bus="virtio"))
    vmi = _vmi(cluster)
    assert _names(vmi["spec"])[0] == ["containerdisk", "dv1", "pvc1"]
    assert (_status_of(vmi, "pvc1")["phase"], _status_of(vmi, "pvc1")["target"]) == ("Ready", "vdb")
    assert _names(_template(cluster))[0] == ["containerdisk", "dv1"]      # ephemeral: not in the VM

    cluster.remove_volume("vm1", options={"name": "pvc1"})
    cluster.remove_volume("vm1", options={"name": "dv1"}, persist=True)
    vmi = _vmi(cluster)
    assert _names(vmi["spec"])[0] == ["containerdisk"]
    assert _names(_template(cluster))[0] == ["containerdisk"]
    assert "volumeRequests" not in cluster.get("VirtualMachine", "vm1")["status"]


@pytest.mark.embedded_only("the cluster's command line is tests/kube/test_virtctl.py's, beside the real virtctl")
def test_command_line(cluster):
    from tests.cli._helpers import run_settled

    cluster.apply(builders.csmall_vm("vm1", "Always"))
    r = run_settled(cluster, "addvolume", "vm1", "--volume-name=pvc1", "--persist", "--dry-run")
    assert (r.code, r.out) == (0, "Dry Run execution\nSuccessfully submitted add volume request to VM vm1 "
                                  "for volume pvc1\n")
    assert _names(_template(cluster))[0] == ["containerdisk"]
    r = run_settled(cluster, "addvolume", "vm1", "--volume-name=pvc1", "--persist", "--serial=s1", "--cache=none")
    assert (r.code, r.out, r.err) == (0, "Successfully submitted add volume request to VM vm1 for volume pvc1\n", "")
    disk = _vmi(cluster)["spec"]["domain"]["devices"]["disks"][-1]
    assert disk == {"name": "pvc1", "disk": {"bus": "scsi"}, "serial": "s1", "cache": "none"}
    for argv, err in (
            (("--volume-name=nope",), "error: error adding volume, Volume nope is not a DataVolume or "
                                      "PersistentVolumeClaim\n"),
            (("--volume-name=pvc1", "--bus=sata"), "error: Invalid bus type 'sata' for disk. Only 'scsi' and "
                                                   "'virtio' are supported.\n"),
            (("--volume-name=pvc1", "--disk-type=lun", "--bus=virtio"),
             "error: Invalid bus type 'virtio' for LUN disk. Only 'scsi' bus is supported.\n"),
            (("--volume-name=pvc1", "--disk-type=cdrom"), "error: Invalid disk type 'cdrom'. Only LUN and Disk are "
                                                          "supported.\n"),
            (("--volume-name=pvc1", "--cache=fast"), "error: error adding volume, invalid cache value fast\n"),
            (("--volume-name=pvc1",), "error: error adding volume, VMI default/vm1 is owned by a VM\n")):
        r = run_settled(cluster, "addvolume", "vm1", *argv)
        assert (r.code, r.out, r.err) == (1, "", err)
    r = run_settled(cluster, "removevolume", "vm1", "--volume-name=pvc1", "--persist")
    assert (r.code, r.out) == (0, "Successfully submitted remove volume request to VM vm1 for volume pvc1\n")
    r = run_settled(cluster, "removevolume", "vm1", "--volume-name=pvc1", "--persist")
    assert (r.code, r.err) == (1, 'error: error removing volume, Operation cannot be fulfilled on '
                                  'virtualmachine.kubevirt.io "vm1": Unable to remove volume [pvc1] because it '
                                  'does not exist\n')
    r = run_settled(cluster, "removevolume", "vm1")
    assert (r.code, r.err) == (1, 'error: required flag(s) "volume-name" not set\n')
