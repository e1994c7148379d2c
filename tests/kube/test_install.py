"""`instancetype install` on the real API server, seen through the real kubectl.

The module installs once (webhooks pointing at an allow-all TLS endpoint: the webhooks' answers
are `serve`'s business, tested with it) and uninstalls at the end, leaving the cluster as it was.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from instancetype.api.kubevirt_types import kubevirt_types
from instancetype.deploy.crds import generate_crds
from tests import builders
from tests.kube._webhook_stub import AllowAll

SA = "system:serviceaccount:instancetype-system:instancetype-controller"
OUR_CRDS = len(generate_crds())     # 15: the four type kinds, flavors, kubevirt.io's (VMIM too), storage


def run_cli(kube, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "instancetype", *args], env=kube.env(),
                          capture_output=True, text=True, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"instancetype {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
    return proc


@pytest.fixture(scope="module")
def installed(kube, webhook_certs):
    with AllowAll(webhook_certs.cert, webhook_certs.key) as stub:
        args = ("install", "--kubeconfig", str(kube.kubeconfig), "--webhook-url", stub.url,
                "--ca-bundle", str(webhook_certs.ca))
        first = run_cli(kube, *args)
        try:
            yield {"stub": stub, "args": args, "first": first}
        finally:
            run_cli(kube, "uninstall", "--kubeconfig", str(kube.kubeconfig), check=False)


def test_install_applies_every_crd_and_they_are_established(kube, installed):
    out = installed["first"].stdout
    assert "customresourcedefinition.apiextensions.k8s.io/virtualmachines.kubevirt.io created" in out.splitlines() \
        or "customresourcedefinition.apiextensions.k8s.io/virtualmachines.kubevirt.io configured" in out.splitlines()
    names = kube.kubectl("get", "crd", "-l", "app.kubernetes.io/managed-by=instancetype", "-o", "name").stdout.split()
    assert len(names) == OUR_CRDS
    assert "customresourcedefinition.apiextensions.k8s.io/virtualmachineinstancetypes.instancetype.kubevirt.io" in names
    established = kube.kubectl("get", "crd", "-l", "app.kubernetes.io/managed-by=instancetype", "-o",
                               "jsonpath={range .items[*]}{.status.conditions[?(@.type=='Established')].status}"
                               "{'\\n'}{end}").stdout.split()
    assert established == ["True"] * OUR_CRDS
    # the catalogue is there, as virt-operator deploys it
    assert kube.kubectl("get", "vmcf", "u1.medium", "-o", "name").stdout.strip() == \
        "virtualmachineclusterinstancetype.instancetype.kubevirt.io/u1.medium"
    kv = json.loads(kube.kubectl("get", "kubevirt", "kubevirt", "-n", "kubevirt", "-o", "json").stdout)
    assert kv["spec"] == {}


def test_a_second_install_changes_nothing(kube, installed):
    calls = len(installed["stub"].calls)
    again = run_cli(kube, *installed["args"])
    lines = again.stdout.splitlines()
    assert lines and all(line.split(" ", 1)[1].startswith("unchanged") for line in lines), again.stdout
    # the same objects; the KubeVirt object exists now, so its namespace is not applied again
    first = {line.split()[0] for line in installed["first"].stdout.splitlines()}
    assert {line.split()[0] for line in lines} == first - {"namespace/kubevirt"}
    # nothing was written that a webhook sees: a second install works with `serve` down
    assert len(installed["stub"].calls) == calls


def test_kubectl_get_vm_prints_kubevirts_columns(kube, installed, namespace):
    vm = builders.vm("vm1", domain={"devices": {}}, namespace=None, runStrategy="Halted")
    created = kube.kubectl("create", "-n", namespace, "-f", "-", input=json.dumps(vm))
    assert created.stdout.strip() == "virtualmachine.kubevirt.io/vm1 created"
    header = kube.kubectl("get", "vm", "-n", namespace).stdout.splitlines()[0].split()
    assert header == ["NAME", "AGE", "STATUS", "READY"]
    assert "/virtualmachines-mutate" in installed["stub"].calls
    assert "/virtualmachines-validate" in installed["stub"].calls
    assert kube.kubectl("get", "vmi", "-n", namespace, "--ignore-not-found").stdout == ""
    vmi_header = kube.kubectl("get", "crd", "virtualmachineinstances.kubevirt.io", "-o",
                              "jsonpath={.spec.versions[0].additionalPrinterColumns[*].name}").stdout.split()
    assert vmi_header == ["Age", "Phase", "IP", "NodeName", "Ready", "Live-Migratable", "Paused"]
    # short names and the `all` category
    assert kube.kubectl("get", "all", "-n", namespace, "-o", "name").stdout.split() == ["virtualmachine.kubevirt.io/vm1"]


@pytest.mark.parametrize("version", ["v1alpha1", "v1alpha2"])
def test_an_old_version_is_served_with_kubevirts_deprecation_warning(kube, installed, namespace, version):
    obj = {"apiVersion": f"instancetype.kubevirt.io/{version}", "kind": "VirtualMachineInstancetype",
           "metadata": {"name": f"old-{version}"}, "spec": {"cpu": {"guest": 1}, "memory": {"guest": "128Mi"}}}
    proc = kube.kubectl("apply", "-n", namespace, "-f", "-", input=json.dumps(obj))
    assert proc.stdout.strip() == f"virtualmachineinstancetype.instancetype.kubevirt.io/old-{version} created"
    assert proc.stderr.strip() == (f"Warning: instancetype.kubevirt.io/{version} VirtualMachineInstancetypes "
                                   "is now deprecated and will be removed in v1.")
    # stored as v1beta1 (conversion None)
    stored = json.loads(kube.kubectl("get", "virtualmachineinstancetypes.v1beta1.instancetype.kubevirt.io",
                                     f"old-{version}", "-n", namespace, "-o", "json").stdout)
    assert stored["apiVersion"] == "instancetype.kubevirt.io/v1beta1"
    assert stored["spec"] == obj["spec"]


def test_a_seed_002_flavor_is_accepted_with_a_warning(kube, installed, namespace):
    obj = {"apiVersion": "flavor.kubevirt.io/v1alpha1", "kind": "VirtualMachineFlavor", "metadata": {"name": "small"},
           "spec": {"cpu": {"guest": 2}, "memory": {"guest": "128Mi"}}}
    proc = kube.kubectl("apply", "-n", namespace, "-f", "-", input=json.dumps(obj))
    assert proc.stdout.strip() == "virtualmachineflavor.flavor.kubevirt.io/small created"
    assert proc.stderr.strip() == ("Warning: flavor.kubevirt.io/v1alpha1 VirtualMachineFlavor is deprecated; "
                                   "use instancetype.kubevirt.io/v1beta1 VirtualMachineInstancetype")
    assert "/virtualmachineinstancetypes-validate" in installed["stub"].calls


def _every_field(type_name: str, types: dict) -> dict:
    """A value for every field of a type of KubeVirt's type table, recursively."""
    def value(spec: str):
        if spec.startswith("slice:"):
            return [value(spec[6:])]
        if spec.startswith("map:"):
            return {"key": value(spec[4:])}
        if spec == "struct:meta.ObjectMeta":
            return {"labels": {"app": "x"}, "annotations": {"a": "b"}}
        if spec.startswith("struct:"):
            return _every_field(spec[7:], types)
        return {"string": "x", "bool": True, "int": 1, "time": "2024-01-02T03:04:05Z",
                "quantity": "1Gi", "any": 8080}[spec]
    return {name: value(f[0]) for name, f in types[type_name].items()}


def test_no_field_of_kubevirts_types_is_pruned(kube, installed, namespace):
    """A VirtualMachine and a VirtualMachineInstance with every field of kv_types.json (KubeVirt
    v1.9) set round trip through the API server unchanged."""
    types = kubevirt_types()
    vm = builders.vm_object("every-field", _every_field("kv.VirtualMachineSpec", types), namespace=None)
    vmi = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "metadata": {"name": "every-field"},
           "spec": _every_field("kv.VirtualMachineInstanceSpec", types),
           "status": _every_field("kv.VirtualMachineInstanceStatus", types)}
    for obj, resource in ((vm, "vm"), (vmi, "vmi")):
        created = json.loads(kube.kubectl("create", "-n", namespace, "-o", "json", "-f", "-",
                                          input=json.dumps(obj)).stdout)
        for part in ("spec", "status"):
            if part in obj:
                assert created[part] == obj[part], f"{resource}.{part} changed"
        assert created["spec"] == obj["spec"]
    # the VM's status is a subresource (as KubeVirt's): written through /status, kept whole
    status = _every_field("kv.VirtualMachineStatus", types)
    kube.kubectl("patch", "vm", "every-field", "-n", namespace, "--subresource=status", "--type=merge",
                 "-p", json.dumps({"status": status}))
    got = json.loads(kube.kubectl("get", "vm", "every-field", "-n", namespace, "-o", "json").stdout)
    assert got["status"] == status


def test_an_unknown_field_is_refused_as_kubevirts_api_server_would(kube, installed, namespace):
    vm = builders.vm_object("typo", {"runStrategy": "Halted", "tempalte": {}}, namespace=None)
    proc = kube.kubectl("create", "-n", namespace, "-f", "-", input=json.dumps(vm), check=False)
    assert proc.returncode == 1
    assert 'unknown field "spec.tempalte"' in proc.stderr


def _can(kube, *args: str) -> str:
    proc = kube.kubectl("auth", "can-i", *args, f"--as={SA}", check=False)
    return proc.stdout.strip()


def test_the_controller_cannot_read_secrets(kube, installed):
    assert _can(kube, "get", "secrets", "-A") == "no"
    assert _can(kube, "list", "secrets", "-n", "instancetype-system") == "no"
    assert _can(kube, "get", "configmaps", "-n", "kube-system") == "no"
    assert _can(kube, "delete", "pods", "-A") == "no"


@pytest.mark.parametrize("verb, resource, ns", [
    ("update", "virtualmachines.kubevirt.io", "default"),
    ("patch", "virtualmachines.kubevirt.io/status", "default"),
    ("create", "virtualmachineinstances.kubevirt.io", "default"),
    ("delete", "virtualmachineinstances.kubevirt.io", "default"),
    ("watch", "virtualmachineinstancetypes.instancetype.kubevirt.io", "default"),
    ("list", "virtualmachineclusterpreferences.instancetype.kubevirt.io", ""),
    ("update", "virtualmachineclusterinstancetypes.instancetype.kubevirt.io", ""),
    ("list", "virtualmachineflavors.flavor.kubevirt.io", "default"),
    ("create", "controllerrevisions.apps", "default"),
    ("list", "persistentvolumeclaims", "default"),
    ("update", "persistentvolumeclaims/status", "default"),     # the simulated CDI's claims
    ("watch", "datavolumes.cdi.kubevirt.io", "default"),
    ("create", "datavolumes.cdi.kubevirt.io", "default"),       # a VM's dataVolumeTemplates
    ("get", "datasources.cdi.kubevirt.io", "default"),
    ("list", "volumesnapshots.snapshot.storage.k8s.io", "default"),
    ("get", "kubevirts.kubevirt.io", "kubevirt"),
    ("create", "events", "default"),
    ("update", "leases.coordination.k8s.io", "instancetype-system"),
    ("watch", "nodes", ""),
    ("create", "nodes", ""),
    ("update", "nodes/status", ""),
    ("update", "leases.coordination.k8s.io", "kube-node-lease"),
])
def test_the_controller_can_do_its_work(kube, installed, verb, resource, ns):
    assert _can(kube, verb, resource, *(["-n", ns] if ns else [])) == "yes"


@pytest.mark.parametrize("verb, resource, ns", [
    ("create", "virtualmachineinstancetypes.instancetype.kubevirt.io", "default"),
    ("delete", "persistentvolumeclaims", "default"),
    ("delete", "datavolumes.cdi.kubevirt.io", "default"),
    ("create", "datasources.cdi.kubevirt.io", "default"),
    ("update", "kubevirts.kubevirt.io", "kubevirt"),
    ("update", "leases.coordination.k8s.io", "default"),
    ("create", "customresourcedefinitions.apiextensions.k8s.io", ""),
    ("delete", "nodes", ""),
])
def test_the_controller_can_do_nothing_more(kube, installed, verb, resource, ns):
    assert _can(kube, verb, resource, *(["-n", ns] if ns else [])) == "no"


def test_kubectl_names_resolve_to_the_instancetype_kinds_not_the_flavor_ones(kube, installed, namespace):
    """Seed 002's flavor.kubevirt.io preference kinds are applied by kind; the plural names
    kubectl users type stay the instancetype.kubevirt.io kinds'."""
    pref = {"apiVersion": "flavor.kubevirt.io/v1alpha1", "kind": "VirtualMachinePreference",
            "metadata": {"name": "virtio"},
            "spec": {"devices": {"preferredDiskBus": "virtio", "preferredInterfaceModel": "virtio"}}}
    proc = kube.kubectl("apply", "-n", namespace, "-f", "-", input=json.dumps(pref))
    assert proc.stdout.strip() == "virtualmachinepreference.flavor.kubevirt.io/virtio created"
    for word in ("virtualmachineclusterpreferences", "virtualmachineclusterpreference", "vmcps"):
        names = kube.kubectl("get", word, "-o", "name").stdout.split()
        assert "virtualmachineclusterpreference.instancetype.kubevirt.io/fedora" in names, word
    for word in ("virtualmachinepreferences", "VirtualMachinePreference", "vmprefs"):
        proc = kube.kubectl("get", word, "-n", namespace, "-o", "name", check=False)
        assert proc.returncode == 0 and proc.stdout == "" and "Warning" not in proc.stderr, (word, proc)
