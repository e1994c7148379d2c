"""The real virtctl (KubeVirt v1.7.0) and kubectl against the subresource API
`subresources.kubevirt.io/v1`, registered by `instancetype install` as an APIService and served by
`instancetype serve` inside the test's network namespace (the aggregator refuses loopback
endpoints), with `instancetype controller` beside it, both as the ServiceAccount `install` made:
seeds 002 and 003, start, stop, restart, dry runs, both expansions equal to the offline
`instancetype expand`, and RBAC on the subresources (403 without it, allowed with it)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.cli.test_seed_002 import EXAMPLE
from tests.cli.test_seed_003 import CSMALL, OVERRIDE, VM_CIRROS_CSMALL
from tests.kube.controller_env import until
from tests.kube.served import cli_env, subresource_api_served


def _instancetype(*argv: str, env: dict, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "instancetype", *argv], env=env, input=input,
                          capture_output=True, text=True, timeout=300)


_env = cli_env


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
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"instancetype": {"kind": "VirtualMachineInstancetype", "name": "csmall"},
                     "preference": {"kind": "VirtualMachinePreference", "name": "virtio"},
                     "runStrategy": "Halted",
                     "template": {"spec": {"domain": {"devices": {}},
                                           "volumes": [{"name": "containerdisk",
                                                        "containerDisk": {"image": "cirros"}}]}}}}


@pytest.fixture
def vm_namespace(subresource_api, netns_namespace):
    subresource_api.kubectl("apply", "-f", "-", input=_objects(netns_namespace))
    return netns_namespace


def _vmi_json(kube, ns: str, name: str) -> dict | None:
    r = kube.kubectl("get", f"vmis/{name}", "-n", ns, "-o", "json", check=False)
    return json.loads(r.stdout) if r.returncode == 0 else None


def _vmi_uid(kube, ns: str) -> str | None:
    r = kube.kubectl("get", "vmi", "vm1", "-n", ns, "-o", "jsonpath={.metadata.uid}", check=False)
    return r.stdout if r.returncode == 0 else None


def test_start_stop_restart(subresource_api, vm_namespace):
    kube, ns = subresource_api, vm_namespace
    r = kube.virtctl("start", "vm1", "-n", ns)
    assert r.stdout == "VM vm1 was scheduled to start\n"
    kube.kubectl("wait", "vms/vm1", "-n", ns, "--for=condition=Ready", "--timeout=60s")
    vmi = json.loads(kube.kubectl("get", "vmis/vm1", "-n", ns, "-o", "json").stdout)
    assert vmi["spec"]["domain"]["devices"]["disks"] == [{"disk": {"bus": "virtio"}, "name": "containerdisk"}]
    assert vmi["spec"]["domain"]["devices"]["interfaces"] == [{"bridge": {}, "model": "virtio", "name": "default"}]

    again = kube.virtctl("start", "vm1", "-n", ns, check=False)
    assert again.returncode == 1
    assert again.stderr.splitlines()[-1] == ('Error starting VirtualMachine Operation cannot be fulfilled on '
                                             'virtualmachine.kubevirt.io "vm1": VM is already running')

    first = _vmi_uid(kube, ns)
    assert kube.virtctl("restart", "vm1", "-n", ns).stdout == "VM vm1 was scheduled to restart\n"
    # the controller starts the next VMI once the first is gone
    until(lambda: _vmi_uid(kube, ns) not in (None, first), timeout=60, what="a new VMI")

    assert kube.virtctl("stop", "vm1", "-n", ns).stdout == "VM vm1 was scheduled to stop\n"
    until(lambda: _vmi_uid(kube, ns) is None, timeout=60, what="the VMI to go")
    assert kube.kubectl("get", "vm", "vm1", "-n", ns, "-o", "jsonpath={.spec.runStrategy}").stdout == "Halted"
    again = kube.virtctl("stop", "vm1", "-n", ns, check=False)
    assert again.stderr.splitlines()[-1] == ('error stopping VirtualMachine Operation cannot be fulfilled on '
                                             'virtualmachine.kubevirt.io "vm1": VM is not running')
    missing = kube.virtctl("start", "nope", "-n", ns, check=False)
    assert missing.stderr.splitlines()[-1] == 'Error starting VirtualMachine virtualmachine.kubevirt.io "nope" not found'


def test_dry_run_start_changes_nothing(subresource_api, vm_namespace):
    kube, ns = subresource_api, vm_namespace
    before = kube.kubectl("get", "vm", "vm1", "-n", ns, "-o", "jsonpath={.metadata.resourceVersion}").stdout
    assert kube.virtctl("start", "vm1", "-n", ns, "--dry-run").stdout == \
        "Dry Run execution\nVM vm1 was scheduled to start\n"
    assert kube.kubectl("get", "vm", "vm1", "-n", ns, "-o", "jsonpath={.metadata.resourceVersion}").stdout == before
    assert _vmi_uid(kube, ns) is None


def _offline_expand(kube, ns: str, vm: dict, tmp_path: Path) -> dict:
    files = tmp_path / "objects.yaml"
    items = json.loads(_objects(ns))["items"][:2] + [vm]
    files.write_text(yaml.safe_dump_all(items))
    r = _instancetype("expand", "-f", str(files), "-o", "json", env=_env(kube))
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


def test_expand_vm_and_file_equal_offline_expand(subresource_api, vm_namespace, tmp_path):
    kube, ns = subresource_api, vm_namespace
    offline = _offline_expand(kube, ns, _vm("vm1", ns), tmp_path)
    by_name = json.loads(kube.virtctl("expand", "--vm", "vm1", "-n", ns, "-o", "json").stdout)
    assert _without_go_zero_time(by_name["spec"]) == offline["spec"]

    posted = _vm("posted", ns)
    del posted["metadata"]["namespace"]
    (tmp_path / "vm.yaml").write_text(yaml.safe_dump(posted))
    by_file = yaml.safe_load(kube.virtctl("expand", "--file", str(tmp_path / "vm.yaml"), "-n", ns).stdout)
    assert _without_go_zero_time(by_file["spec"]) == _offline_expand(kube, ns, _vm("posted", ns), tmp_path)["spec"]

    missing = kube.virtctl("expand", "--vm", "nope", "-n", ns, check=False)
    assert missing.stderr.splitlines()[-1] == (f'error expanding VirtualMachine - nope in namespace - {ns}: '
                                               'virtualmachine.kubevirt.io "nope" not found')


def test_rbac_on_the_subresources(subresource_api, vm_namespace):
    kube, ns = subresource_api, vm_namespace
    denied = kube.virtctl("start", "vm1", "-n", ns, user="bob", check=False)
    assert denied.returncode == 1
    assert denied.stderr.splitlines()[-1] == (
        f'Error starting VirtualMachine virtualmachines.subresources.kubevirt.io "vm1" is forbidden: User "bob" '
        f'cannot update resource "virtualmachines/start" in API group "subresources.kubevirt.io" in the '
        f'namespace "{ns}"')
    assert _vmi_uid(kube, ns) is None
    kube.kubectl("create", "rolebinding", "alice-vms", "-n", ns, "--clusterrole=instancetype:subresources-edit",
                 "--user=alice")
    assert kube.virtctl("start", "vm1", "-n", ns, user="alice").stdout == "VM vm1 was scheduled to start\n"
    until(lambda: _vmi_uid(kube, ns) is not None, timeout=60, what="the VMI alice started")
    # start is not stop: bob still may not, and alice's permission is only in this namespace
    assert kube.virtctl("stop", "vm1", "-n", ns, user="bob", check=False).returncode == 1


def test_seed_002_start_and_wait(subresource_api, netns_namespace):
    kube, ns = subresource_api, netns_namespace
    kube.kubectl("apply", "-n", ns, "-f", "-", input=EXAMPLE)
    assert kube.virtctl("start", "example", "-n", ns).stdout == "VM example was scheduled to start\n"
    r = kube.kubectl("wait", "vms/example", "-n", ns, "--for=condition=Ready", "--timeout=60s", check=False)
    assert r.stdout == "virtualmachine.kubevirt.io/example condition met\n", \
        r.stderr + kube.kubectl("get", "vm/example", "-n", ns, "-o", "yaml").stdout
    vmi = json.loads(kube.kubectl("get", "vmis/example", "-n", ns, "-o", "json").stdout)
    devices = vmi["spec"]["domain"]["devices"]
    assert devices["disks"] == [{"disk": {"bus": "virtio"}, "name": "containerdisk"},
                                {"disk": {"bus": "virtio"}, "name": "cloudinitdisk"}]
    assert devices["interfaces"] == [{"bridge": {}, "model": "virtio", "name": "default"}]
    assert vmi["spec"]["domain"]["cpu"]["sockets"] == 2


def test_seed_003_user_override_and_versioning(subresource_api, netns_namespace, tmp_path):
    kube, ns = subresource_api, netns_namespace
    kube.kubectl("apply", "-n", ns, "-f", "-", input=OVERRIDE)
    r = kube.virtctl("start", "example-preference-user-override", "-n", ns)
    assert r.stdout == "VM example-preference-user-override was scheduled to start\n"
    # `running: true` is virt-api's part; the controller makes the VMI once it sees it
    vmi = until(lambda: _vmi_json(kube, ns, "example-preference-user-override"), timeout=60, what="the VMI")
    assert vmi["spec"]["domain"]["devices"]["disks"] == [
        {"disk": {"bus": "sata"}, "name": "containerdisk"}, {"disk": {"bus": "virtio"}, "name": "cloudinitdisk"}]

    (tmp_path / "csmall.yaml").write_text(CSMALL)
    (tmp_path / "vm-cirros-csmall.yaml").write_text(VM_CIRROS_CSMALL)
    kube.kubectl("apply", "-n", ns, "-f", str(tmp_path / "csmall.yaml"), "-f", str(tmp_path / "vm-cirros-csmall.yaml"))
    assert kube.virtctl("start", "vm-cirros-csmall", "-n", ns).stdout == "VM vm-cirros-csmall was scheduled to start\n"
    vm = until(lambda: (lambda v: v if "revisionName" in v["spec"]["instancetype"] else None)(
        json.loads(kube.kubectl("get", "vm/vm-cirros-csmall", "-n", ns, "-o", "json").stdout)),
        timeout=60, what="the controller to pin the revision")
    uid = kube.kubectl("get", "virtualmachineinstancetype/csmall", "-n", ns, "-o", "jsonpath={.metadata.uid}").stdout
    name = f"vm-cirros-csmall-csmall-{uid}-1"
    assert vm["spec"]["instancetype"] == {"kind": "VirtualMachineInstancetype", "name": "csmall", "revisionName": name}
    cr = json.loads(kube.kubectl("get", f"controllerrevision/{name}", "-n", ns, "-o", "json").stdout)
    assert cr["metadata"]["ownerReferences"] == [{
        "apiVersion": "kubevirt.io/v1", "blockOwnerDeletion": True, "controller": True, "kind": "VirtualMachine",
        "name": "vm-cirros-csmall", "uid": vm["metadata"]["uid"]}]
    # The revision goes with the VM (Kubernetes' garbage collector).
    kube.kubectl("delete", "vm/vm-cirros-csmall", "-n", ns)
    until(lambda: kube.kubectl("get", f"controllerrevision/{name}", "-n", ns, check=False).returncode != 0,
          timeout=90, what="the revision to be collected")


def test_virtctl_version_reads_the_server(subresource_api):
    out = subresource_api.virtctl("version").stdout.splitlines()
    assert out[0].startswith('Client Version: version.Info{GitVersion:"v1.7.0"')
    assert out[1].startswith('Server Version: version.Info{GitVersion:"v1.9.0", GitCommit:"", GitTreeState:"clean"')
