"""The real virtctl (KubeVirt v1.7.0) and kubectl against the subresource API
`subresources.kubevirt.io/v1`, registered by `instancetype install` as an APIService and served
inside the test's network namespace (the aggregator refuses loopback endpoints) over the
cluster's store, as the ServiceAccount `install` made: start, stop, restart, both expansions,
and RBAC on the subresources (403 without it, allowed with it)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.kube.certs import make_webhook_certs

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_NS = "instancetype-system"
PORT = 9443


def _instancetype(*argv: str, env: dict, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "instancetype", *argv], env=env, input=input,
                          capture_output=True, text=True, timeout=300)


def _env(kube) -> dict:
    env = kube.env()
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + str(ROOT)
    return env


def _sa_kubeconfig(kube, path: Path) -> Path:
    """A kubeconfig of the ServiceAccount `install` made, for processes inside the namespace."""
    token = kube.kubectl("create", "token", "instancetype-controller", "-n", SYSTEM_NS,
                         "--duration=2h").stdout.strip()
    cfg = yaml.safe_load(Path(kube.inner_kubeconfig).read_text())
    for user in cfg["users"]:
        user["user"] = {"token": token}
    path.write_text(yaml.safe_dump(cfg))
    path.chmod(0o600)
    return path


@pytest.fixture(scope="module")
def subresource_api(kube_netns, tmp_path_factory):
    """install (APIService at ADDRESS:PORT), then the subresource API served in the namespace."""
    kube = kube_netns
    work = tmp_path_factory.mktemp("virtapi")
    address = kube.netns.address
    # The aggregator verifies the serving certificate for the Service's DNS name.
    certs = make_webhook_certs(work, [address, f"virt-api.{SYSTEM_NS}.svc"])
    env = _env(kube)
    r = _instancetype("install", "--kubeconfig", str(kube.kubeconfig), "--webhook-url",
                      f"https://{address}:{PORT}", "--ca-bundle", str(certs.ca), env=env)
    assert r.returncode == 0, r.stderr
    assert f"apiservice.apiregistration.k8s.io/v1.subresources.kubevirt.io created" in r.stdout
    # The admission webhooks are `serve`'s; this server answers the subresource API only.
    kube.kubectl("delete", "mutatingwebhookconfiguration", "virt-api-mutator", "--ignore-not-found")
    kube.kubectl("delete", "validatingwebhookconfiguration", "virt-api-validator", "--ignore-not-found")
    log = open(work / "virtapi.log", "wb")
    server = kube.popen([sys.executable, Path(__file__).with_name("virtapi_server.py"), address, PORT,
                         certs.cert, certs.key, _sa_kubeconfig(kube, work / "sa.kubeconfig")],
                        stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        kube.kubectl("wait", "apiservice/v1.subresources.kubevirt.io", "--for=condition=Available",
                     "--timeout=90s")
        yield kube
    finally:
        # The APIService goes before the server stops (an unavailable one blocks namespace deletion).
        _instancetype("uninstall", "--kubeconfig", str(kube.kubeconfig), env=env)
        server.terminate()
        server.wait(timeout=30)
        log.close()


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
    assert _vmi_uid(kube, ns) not in (None, first)

    assert kube.virtctl("stop", "vm1", "-n", ns).stdout == "VM vm1 was scheduled to stop\n"
    assert _vmi_uid(kube, ns) is None
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
    assert _vmi_uid(kube, ns) is not None
    # start is not stop: bob still may not, and alice's permission is only in this namespace
    assert kube.virtctl("stop", "vm1", "-n", ns, user="bob", check=False).returncode == 1
