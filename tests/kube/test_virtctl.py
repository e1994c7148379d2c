"""The real virtctl (KubeVirt v1.7.0) and kubectl against the subresource API
`subresources.kubevirt.io/v1`, registered by `instancetype install` as an APIService and served by
`instancetype serve` inside the test's network namespace (the aggregator refuses loopback
endpoints), with `instancetype controller` beside it, both as the ServiceAccount `install` made:
seeds 001, 002 and 003, start, stop, restart, dry runs, both expansions equal to the offline
`instancetype expand`, and RBAC on the subresources (403 without it, allowed with it).

The seeds' sequences, start/stop/restart and `expand --vm` are written once against the `clients`
fixture (tests/kube/clients.py) and run twice: with the real clients, then with
`instancetype --kubeconfig` in their place, printing the same lines."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from instancetype.controller import Cluster
from tests.builders import csmall_vm
from tests.cli.test_seed_002 import EXAMPLE
from tests.cli.test_seed_003 import CSMALL, OVERRIDE, VM_CIRROS_CSMALL
from tests.kube.controller_env import until
from tests.kube.served import cli_env, subresource_api_served
from tests.kube.test_controller import CMEDIUM, FEDORA_PREF, FEDORA_VM

# Seed 002's flavor.kubevirt.io objects, kept in their own group as the API server serves it.
SEED_002_APPLIED = ("virtualmachineflavor.flavor.kubevirt.io/small created\n"
                    "virtualmachinepreference.flavor.kubevirt.io/virtio created\n"
                    "virtualmachine.kubevirt.io/example created\n")
# kubectl 1.36 names the namespace where the seed's older kubectl did not.
SEED_003_DELETED = 'virtualmachine.kubevirt.io "vm-cirros-csmall" deleted from {ns} namespace{dry}\n'


def _instancetype(*argv: str, env: dict, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "instancetype", *argv], env=env, input=input,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def subresource_api(kube_netns, tmp_path_factory):
    """`instancetype install`, `serve` and `controller` in the network namespace (tests/kube/served.py)."""
    with subresource_api_served(kube_netns, tmp_path_factory.mktemp("virtapi"), controller=True) as kube:
        yield kube


def _objects(namespace: str) -> str:
    it = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
          "metadata": {"name": "csmall", "namespace": namespace},
          "spec": {"cpu": {"guest": 1}, "memory": {"guest": "128Mi"}}}
    pref = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
            "metadata": {"name": "virtio", "namespace": namespace},
            "spec": {"devices": {"preferredDiskBus": "virtio", "preferredInterfaceModel": "virtio"}}}
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": [it, pref, _vm("vm1", namespace)]})


def _vm(name: str, namespace: str) -> dict:
    return csmall_vm(name, "Halted", preference="virtio", namespace=namespace)


@pytest.fixture
def vm_namespace(subresource_api, netns_namespace):
    subresource_api.kubectl("apply", "-f", "-", input=_objects(netns_namespace))
    return netns_namespace


def _vmi_uid(kubectl, ns: str) -> str | None:
    r = kubectl("get", "vmi", "vm1", "-n", ns, "-o", "jsonpath={.metadata.uid}", check=False)
    return r.stdout if r.returncode == 0 else None


def test_start_stop_restart(clients, vm_namespace):
    kubectl, virtctl, ns = clients.kubectl, clients.virtctl, vm_namespace
    r = virtctl("start", "vm1", "-n", ns)
    assert r.stdout == "VM vm1 was scheduled to start\n"
    r = kubectl("wait", "vms/vm1", "-n", ns, "--for=condition=Ready", "--timeout=60s")
    assert r.stdout == "virtualmachine.kubevirt.io/vm1 condition met\n"
    vmi = json.loads(kubectl("get", "vmis/vm1", "-n", ns, "-o", "json").stdout)
    assert vmi["spec"]["domain"]["devices"]["disks"] == [{"disk": {"bus": "virtio"}, "name": "containerdisk"}]
    assert vmi["spec"]["domain"]["devices"]["interfaces"] == [{"bridge": {}, "model": "virtio", "name": "default"}]

    again = virtctl("start", "vm1", "-n", ns, check=False)
    assert again.returncode == 1
    assert again.stderr.splitlines()[-1] == ('Error starting VirtualMachine Operation cannot be fulfilled on '
                                             'virtualmachine.kubevirt.io "vm1": VM is already running')

    first = _vmi_uid(kubectl, ns)
    assert virtctl("restart", "vm1", "-n", ns).stdout == "VM vm1 was scheduled to restart\n"
    # the controller starts the next VMI once the first is gone
    until(lambda: _vmi_uid(kubectl, ns) not in (None, first), timeout=60, what="a new VMI")

    assert virtctl("stop", "vm1", "-n", ns).stdout == "VM vm1 was scheduled to stop\n"
    until(lambda: _vmi_uid(kubectl, ns) is None, timeout=60, what="the VMI to go")
    assert kubectl("get", "vm", "vm1", "-n", ns, "-o", "jsonpath={.spec.runStrategy}").stdout == "Halted"
    again = virtctl("stop", "vm1", "-n", ns, check=False)
    assert again.stderr.splitlines()[-1] == ('error stopping VirtualMachine Operation cannot be fulfilled on '
                                             'virtualmachine.kubevirt.io "vm1": VM is not running')
    missing = virtctl("start", "nope", "-n", ns, check=False)
    assert missing.stderr.splitlines()[-1] == 'Error starting VirtualMachine virtualmachine.kubevirt.io "nope" not found'


def test_dry_run_start_changes_nothing(subresource_api, vm_namespace):
    kube, ns = subresource_api, vm_namespace
    before = kube.kubectl("get", "vm", "vm1", "-n", ns, "-o", "jsonpath={.metadata.resourceVersion}").stdout
    assert kube.virtctl("start", "vm1", "-n", ns, "--dry-run").stdout == \
        "Dry Run execution\nVM vm1 was scheduled to start\n"
    assert kube.kubectl("get", "vm", "vm1", "-n", ns, "-o", "jsonpath={.metadata.resourceVersion}").stdout == before
    assert _vmi_uid(kube.kubectl, ns) is None


def _conditions(obj: dict) -> dict:
    """The conditions but virt-handler's LiveMigratable (tests/controller/test_vm_live_update.py)."""
    return {c["type"]: (c["status"], c.get("reason")) for c in obj["status"]["conditions"] if c["type"] != "LiveMigratable"}


def test_start_paused(subresource_api, vm_namespace):
    """`virtctl start --paused` (Halted: the run strategy becomes Always) and `instancetype
    --kubeconfig start --paused` (Manual: a start request): the VMI starts with startStrategy
    Paused and is reported paused, the VM's printable status is Paused."""
    kube, ns = subresource_api, vm_namespace
    manual = _vm("vm2", ns)
    manual["spec"]["runStrategy"] = "Manual"
    kube.kubectl("apply", "-f", "-", input=json.dumps(manual))
    assert kube.virtctl("start", "vm1", "-n", ns, "--paused").stdout == "VM vm1 was scheduled to start\n"
    r = _instancetype("--kubeconfig", str(kube.kubeconfig), "start", "vm2", "-n", ns, "--paused", env=cli_env(kube))
    assert (r.returncode, r.stdout) == (0, "VM vm2 was scheduled to start\n"), r.stderr
    for name, strategy in (("vm1", "Always"), ("vm2", "Manual")):
        kube.kubectl("wait", f"vms/{name}", "-n", ns, "--for=jsonpath={.status.printableStatus}=Paused",
                     "--timeout=60s")
        vm = json.loads(kube.kubectl("get", "vm", name, "-n", ns, "-o", "json").stdout)
        vmi = json.loads(kube.kubectl("get", "vmi", name, "-n", ns, "-o", "json").stdout)
        assert vm["spec"]["runStrategy"] == strategy
        assert "stateChangeRequests" not in vm["status"]
        assert vmi["spec"]["startStrategy"] == "Paused" and vmi["status"]["phase"] == "Running"
        assert _conditions(vmi) == _conditions(vm) == {"Ready": ("False", "ReadinessGatesNotReady"),
                                                      "Paused": ("True", "PausedByUser")}
    assert kube.virtctl("stop", "vm2", "-n", ns, "--force", "--grace-period=0").stdout == \
        "VM vm2 was scheduled to stop\n"
    until(lambda: kube.kubectl("get", "vmi", "vm2", "-n", ns, check=False).returncode != 0, timeout=60,
          what="the VMI to go")


def _offline_expand(kube, ns: str, vm: dict, tmp_path: Path) -> dict:
    files = tmp_path / "objects.yaml"
    items = json.loads(_objects(ns))["items"][:2] + [vm]
    files.write_text(yaml.safe_dump_all(items))
    r = _instancetype("expand", "-f", str(files), "-o", "json", env=cli_env(kube))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _without_go_zero_time(value):
    """virtctl prints the VM it decoded into Go's struct: an unset ObjectMeta.creationTimestamp is
    written `null` (metav1.Time has no omitempty); the rest is as the server answered."""
    if isinstance(value, dict):
        return {k: _without_go_zero_time(v) for k, v in value.items()
                if not (k == "creationTimestamp" and v is None)}
    if isinstance(value, list):
        return [_without_go_zero_time(v) for v in value]
    return value


def test_expand_vm_equals_offline_expand(clients, subresource_api, vm_namespace, tmp_path):
    virtctl, ns = clients.virtctl, vm_namespace
    offline = _offline_expand(subresource_api, ns, _vm("vm1", ns), tmp_path)
    by_name = json.loads(virtctl("expand", "--vm", "vm1", "-n", ns, "-o", "json").stdout)
    # The stored VM also has what the VM mutator gives at CREATE only (not run by an offline expand).
    annotations = by_name["spec"]["template"]["metadata"].pop("annotations")
    assert annotations == {"kubevirt.io/pci-topology-version": "v3"}
    assert _without_go_zero_time(by_name["spec"]) == offline["spec"]
    missing = virtctl("expand", "--vm", "nope", "-n", ns, check=False)
    assert missing.stderr.splitlines()[-1] == (f'error expanding VirtualMachine - nope in namespace - {ns}: '
                                               'virtualmachine.kubevirt.io "nope" not found')


def test_expand_file_equals_offline_expand(clients, subresource_api, vm_namespace, tmp_path):
    virtctl, ns = clients.virtctl, vm_namespace
    posted = _vm("posted", ns)
    del posted["metadata"]["namespace"]
    (tmp_path / "vm.yaml").write_text(yaml.safe_dump(posted))
    text = virtctl("expand", "--file", str(tmp_path / "vm.yaml"), "-n", ns).stdout
    by_file = yaml.safe_load(text)
    assert _keys_sorted(by_file)        # virtctl marshals through JSON: keys sorted, as instancetype prints
    offline = _offline_expand(subresource_api, ns, _vm("posted", ns), tmp_path)
    assert _without_go_zero_time(by_file["spec"]) == offline["spec"]
    missing = virtctl("expand", "--file", str(tmp_path / "nope.yaml"), "-n", ns, check=False)
    assert missing.stderr.splitlines()[-1] == f"error reading file open {tmp_path / 'nope.yaml'}: no such file or directory"


def _keys_sorted(value) -> bool:
    if isinstance(value, dict):
        return list(value) == sorted(value) and all(_keys_sorted(v) for v in value.values())
    if isinstance(value, list):
        return all(_keys_sorted(v) for v in value)
    return True


def test_rbac_on_the_subresources(subresource_api, vm_namespace):
    kube, ns = subresource_api, vm_namespace
    denied = kube.virtctl("start", "vm1", "-n", ns, user="bob", check=False)
    assert denied.returncode == 1
    assert denied.stderr.splitlines()[-1] == (
        f'Error starting VirtualMachine virtualmachines.subresources.kubevirt.io "vm1" is forbidden: User "bob" '
        f'cannot update resource "virtualmachines/start" in API group "subresources.kubevirt.io" in the '
        f'namespace "{ns}"')
    assert _vmi_uid(kube.kubectl, ns) is None
    kube.kubectl("create", "rolebinding", "alice-vms", "-n", ns, "--clusterrole=instancetype:subresources-edit",
                 "--user=alice")
    assert kube.virtctl("start", "vm1", "-n", ns, user="alice").stdout == "VM vm1 was scheduled to start\n"
    until(lambda: _vmi_uid(kube.kubectl, ns) is not None, timeout=60, what="the VMI alice started")
    # start is not stop: bob still may not, and alice's permission is only in this namespace
    assert kube.virtctl("stop", "vm1", "-n", ns, user="bob", check=False).returncode == 1


def _get(kubectl, ns: str, what: str) -> dict | None:
    r = kubectl("get", what, "-n", ns, "-o", "json", check=False)
    return json.loads(r.stdout) if r.returncode == 0 else None


def test_seed_001_vmi_equals_the_embedded_stores(clients, netns_namespace, tmp_path):
    kubectl, ns = clients.kubectl, netns_namespace
    r = kubectl("apply", "-n", ns, "-f", "-", input=yaml.safe_dump_all([CMEDIUM, FEDORA_PREF, FEDORA_VM]))
    assert r.stdout == ("virtualmachineinstancetype.instancetype.kubevirt.io/cmedium created\n"
                        "virtualmachinepreference.instancetype.kubevirt.io/fedora created\n"
                        "virtualmachine.kubevirt.io/fedora created\n")
    # runStrategy Always: the controller starts the VMI.
    vmi = until(lambda: _get(kubectl, ns, "vmis/fedora"), timeout=60, what="the VMI fedora")
    with Cluster.open(str(tmp_path / "state.db"), catalog=False) as c:
        for obj in (CMEDIUM, FEDORA_PREF, FEDORA_VM):
            c.apply(obj)
        embedded = c.get("VirtualMachineInstance", "fedora")
    assert vmi["spec"] == embedded["spec"]
    assert vmi["spec"]["domain"]["firmware"]["uuid"] == "98f07cdd-96da-5880-b6c7-1a5700b73dc4"   # the seed's


def test_seed_002_start_and_wait(clients, netns_namespace):
    kubectl, virtctl, ns = clients.kubectl, clients.virtctl, netns_namespace
    r = kubectl("apply", "-n", ns, "-f", "-", input=EXAMPLE)
    assert r.stdout == SEED_002_APPLIED
    assert virtctl("start", "example", "-n", ns).stdout == "VM example was scheduled to start\n"
    r = kubectl("wait", "vms/example", "-n", ns, "--for=condition=Ready", "--timeout=60s", check=False)
    assert r.stdout == "virtualmachine.kubevirt.io/example condition met\n", r.stderr
    vmi = json.loads(kubectl("get", "vmis/example", "-n", ns, "-o", "json").stdout)
    devices = vmi["spec"]["domain"]["devices"]
    assert devices["disks"] == [{"disk": {"bus": "virtio"}, "name": "containerdisk"},
                                {"disk": {"bus": "virtio"}, "name": "cloudinitdisk"}]
    assert devices["interfaces"] == [{"bridge": {}, "model": "virtio", "name": "default"}]
    assert vmi["spec"]["domain"]["cpu"]["sockets"] == 2


def test_seed_003_user_override(clients, netns_namespace):
    kubectl, virtctl, ns = clients.kubectl, clients.virtctl, netns_namespace
    r = kubectl("apply", "-n", ns, "-f", "-", input=OVERRIDE)
    # The seed's `configured` comes from a VM that already existed; on a new namespace, created.
    assert r.stdout == ("virtualmachinepreference.instancetype.kubevirt.io/example-preference-disk-virtio created\n"
                        "virtualmachine.kubevirt.io/example-preference-user-override created\n")
    r = virtctl("start", "example-preference-user-override", "-n", ns)
    assert r.stdout == "VM example-preference-user-override was scheduled to start\n"
    vm = _get(kubectl, ns, "vms/example-preference-user-override")
    assert vm["spec"]["template"]["spec"]["domain"]["devices"]["disks"] == [
        {"disk": {"bus": "sata"}, "name": "containerdisk"}, {"disk": {}, "name": "cloudinitdisk"}]
    vmi = until(lambda: _get(kubectl, ns, "vmis/example-preference-user-override"), timeout=60, what="the VMI")
    assert vmi["spec"]["domain"]["devices"]["disks"] == [
        {"disk": {"bus": "sata"}, "name": "containerdisk"}, {"disk": {"bus": "virtio"}, "name": "cloudinitdisk"}]


def test_seed_003_versioning(clients, netns_namespace, tmp_path):
    kubectl, virtctl, ns = clients.kubectl, clients.virtctl, netns_namespace
    (tmp_path / "csmall.yaml").write_text(CSMALL)
    (tmp_path / "vm-cirros-csmall.yaml").write_text(VM_CIRROS_CSMALL)
    r = kubectl("apply", "-n", ns, "-f", str(tmp_path / "csmall.yaml"), "-f", str(tmp_path / "vm-cirros-csmall.yaml"))
    assert r.stdout == ("virtualmachineinstancetype.instancetype.kubevirt.io/csmall created\n"
                        "virtualmachine.kubevirt.io/vm-cirros-csmall created\n")
    vm = _get(kubectl, ns, "vm/vm-cirros-csmall")
    assert vm["spec"]["instancetype"] == {"kind": "VirtualMachineInstancetype", "name": "csmall"}
    assert virtctl("start", "vm-cirros-csmall", "-n", ns).stdout == "VM vm-cirros-csmall was scheduled to start\n"
    uid = kubectl("get", "virtualmachineinstancetype/csmall", "-n", ns, "-o", "jsonpath={.metadata.uid}").stdout
    name = f"vm-cirros-csmall-csmall-{uid}-1"
    vm = until(lambda: (lambda vm: vm if "revisionName" in vm["spec"]["instancetype"] else None)(
        _get(kubectl, ns, "vm/vm-cirros-csmall")), timeout=60, what="the revision name")
    assert vm["spec"]["instancetype"] == {"kind": "VirtualMachineInstancetype", "name": "csmall", "revisionName": name}
    cr = _get(kubectl, ns, f"controllerrevision/{name}")
    assert (cr["apiVersion"], cr["kind"]) == ("apps/v1", "ControllerRevision")
    assert cr["metadata"]["ownerReferences"] == [{
        "apiVersion": "kubevirt.io/v1", "blockOwnerDeletion": True, "controller": True, "kind": "VirtualMachine",
        "name": "vm-cirros-csmall", "uid": vm["metadata"]["uid"]}]
    # The revision goes with the VM (Kubernetes' garbage collector).
    r = kubectl("delete", "vm/vm-cirros-csmall", "-n", ns, "--dry-run=server")
    assert r.stdout == SEED_003_DELETED.format(ns=ns, dry=" (server dry run)")
    r = kubectl("delete", "vm/vm-cirros-csmall", "-n", ns)
    assert r.stdout == SEED_003_DELETED.format(ns=ns, dry="")

    def gone():
        r = kubectl("get", f"controllerrevision/{name}", "-n", ns, check=False)
        return r.returncode != 0 and (r.stdout, r.stderr)

    assert until(gone, timeout=90, what="the revision to be collected") == (
        "", f'Error from server (NotFound): controllerrevisions.apps "{name}" not found\n')


def test_virtctl_version_reads_the_server(subresource_api):
    out = subresource_api.virtctl("version").stdout.splitlines()
    assert out[0].startswith('Client Version: version.Info{GitVersion:"v1.7.0"')
    assert out[1].startswith('Server Version: version.Info{GitVersion:"v1.9.0", GitCommit:"", GitTreeState:"clean"')


def _last_error(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 1, r.stdout
    return r.stderr.splitlines()[-1]


def test_pause_unpause_soft_reboot(clients, vm_namespace):
    """virtctl `pause`, `unpause` (vm and vmi) and `soft-reboot` against serve's subresource API
    (KubeVirt's VMI subresources), the simulated node reporting the pause; the same lines from
    `instancetype --kubeconfig`."""
    kubectl, virtctl, ns = clients.kubectl, clients.virtctl, vm_namespace
    assert _last_error(virtctl("pause", "vm", "vm1", "-n", ns, check=False)) == \
        "Error pausing VirtualMachineInstance vm1. VirtualMachine vm1 is not set to run"
    virtctl("start", "vm1", "-n", ns)
    kubectl("wait", "vms/vm1", "-n", ns, "--for=condition=Ready", "--timeout=60s")

    dry = virtctl("pause", "vm", "vm1", "-n", ns, "--dry-run")
    assert dry.stdout == "Dry Run execution\nVMI vm1 was scheduled to pause\n"
    # a dry run pauses nothing: no Paused condition (LiveMigratable is the node's, beside Ready)
    assert kubectl("get", "vmi", "vm1", "-n", ns, "-o", "jsonpath={.status.conditions[*].type}").stdout == \
        "Ready LiveMigratable"

    assert virtctl("pause", "vm", "vm1", "-n", ns).stdout == "VMI vm1 was scheduled to pause\n"
    kubectl("wait", "vms/vm1", "-n", ns, "--for=jsonpath={.status.printableStatus}=Paused", "--timeout=60s")
    kubectl("wait", "vmis/vm1", "-n", ns, "--for=condition=Paused", "--timeout=60s")
    conflict = 'Operation cannot be fulfilled on virtualmachineinstance.kubevirt.io "vm1": '
    assert _last_error(virtctl("pause", "vmi", "vm1", "-n", ns, check=False)) == \
        f"Error pausing VirtualMachineInstance vm1: {conflict}VMI is already paused"
    assert _last_error(virtctl("soft-reboot", "vm1", "-n", ns, check=False)) == \
        f"Error soft rebooting VirtualMachineInstance vm1: {conflict}VMI is paused"

    assert virtctl("unpause", "vmi", "vm1", "-n", ns).stdout == "VMI vm1 was scheduled to unpause\n"
    kubectl("wait", "vms/vm1", "-n", ns, "--for=jsonpath={.status.printableStatus}=Running", "--timeout=60s")
    kubectl("wait", "vms/vm1", "-n", ns, "--for=condition=Ready", "--timeout=60s")
    assert _last_error(virtctl("unpause", "vm", "vm1", "-n", ns, check=False)) == \
        f"Error unpausing VirtualMachineInstance vm1: {conflict}VMI is not paused"
    assert virtctl("soft-reboot", "vm1", "-n", ns).stdout == "VMI vm1 was scheduled to soft-reboot\n"

    assert _last_error(virtctl("pause", "vmi", "nope", "-n", ns, check=False)) == \
        'Error pausing VirtualMachineInstance nope: virtualmachineinstance.kubevirt.io "nope" not found'
    assert _last_error(virtctl("unpause", "vm", "nope", "-n", ns, check=False)) == \
        'Error getting VirtualMachine nope: virtualmachines.kubevirt.io "nope" not found'
    virtctl("stop", "vm1", "-n", ns)


def _vmi_volumes(kubectl, ns: str) -> dict:
    vmi = json.loads(kubectl("get", "vmi", "vm1", "-n", ns, "-o", "json").stdout)
    return {v["name"]: v for v in vmi["status"].get("volumeStatus") or ()}


def test_addvolume_removevolume(clients, vm_namespace):
    """virtctl `addvolume` / `removevolume` against serve's subresource API with v1.9's default
    feature gates (DeclarativeHotplugVolumes): without --persist the VMI of a VM is refused; with
    it the VM's template changes and the controller hot-plugs the claim into the running VMI,
    which the simulated node reports Ready (KubeVirt's tests/storage/hotplug.go, "should add/remove
    volume with persist"); the same lines from `instancetype --kubeconfig`."""
    kubectl, virtctl, ns = clients.kubectl, clients.virtctl, vm_namespace
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "pvc1", "namespace": ns},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    kubectl("apply", "-f", "-", input=json.dumps(claim))
    assert _last_error(virtctl("addvolume", "vm1", "--volume-name=pvc1", "-n", ns, check=False)) == \
        'error adding volume, virtualmachineinstance.kubevirt.io "vm1" not found'
    virtctl("start", "vm1", "-n", ns)
    kubectl("wait", "vms/vm1", "-n", ns, "--for=condition=Ready", "--timeout=60s")

    assert _last_error(virtctl("addvolume", "vm1", "--volume-name=nope", "-n", ns, check=False)) == \
        "error adding volume, Volume nope is not a DataVolume or PersistentVolumeClaim"
    assert _last_error(virtctl("addvolume", "vm1", "--volume-name=pvc1", "-n", ns, check=False)) == \
        f"error adding volume, VMI {ns}/vm1 is owned by a VM"
    dry = virtctl("addvolume", "vm1", "--volume-name=pvc1", "--persist", "--dry-run", "-n", ns)
    assert dry.stdout == "Dry Run execution\nSuccessfully submitted add volume request to VM vm1 for volume pvc1\n"
    assert "pvc1" not in kubectl("get", "vm", "vm1", "-n", ns, "-o", "jsonpath={.spec.template.spec.volumes}").stdout

    added = virtctl("addvolume", "vm1", "--volume-name=pvc1", "--persist", "-n", ns)
    assert added.stdout == "Successfully submitted add volume request to VM vm1 for volume pvc1\n"
    status = until(lambda: _vmi_volumes(kubectl, ns).get("pvc1"), timeout=60, what="the volume's status")
    assert (status["phase"], status["reason"], status["target"]) == ("Ready", "VolumeReady", "sda")
    assert status["hotplugVolume"]["attachPodName"].startswith("hp-volume-")
    vmi = json.loads(kubectl("get", "vmi", "vm1", "-n", ns, "-o", "json").stdout)
    assert vmi["spec"]["volumes"][-1] == {"name": "pvc1", "persistentVolumeClaim": {"claimName": "pvc1",
                                                                                    "hotpluggable": True}}
    assert vmi["spec"]["domain"]["devices"]["disks"][-1] == {"name": "pvc1", "disk": {"bus": "scsi"},
                                                            "serial": "pvc1"}

    assert _last_error(virtctl("removevolume", "vm1", "--volume-name=containerdisk", "--persist", "-n", ns,
                               check=False)) == (
        'error removing volume, Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm1": '
        "Unable to remove volume [containerdisk] because it is not hotpluggable")
    removed = virtctl("removevolume", "vm1", "--volume-name=pvc1", "--persist", "-n", ns)
    assert removed.stdout == "Successfully submitted remove volume request to VM vm1 for volume pvc1\n"
    until(lambda: "pvc1" not in _vmi_volumes(kubectl, ns), timeout=60, what="the volume to be unplugged")
    virtctl("stop", "vm1", "-n", ns)
