"""KubeVirt's admission as webhooks: `instancetype install` + `instancetype serve` on the real API
server, driven by the real kubectl. The seeds' command sequences that need only admission print
what the seeds print; the mutator's changes are stored; `serve` stopped fails closed."""
from __future__ import annotations

import json

import pytest

from instancetype.api import kinds
from instancetype.api.v1alpha import deprecation_warning
from tests import builders
from tests.cli.test_seed_000 import CSMALL_CIRROS_VM, PREFER_CORES_VM
from tests.cli.test_seed_001 import FEDORA
from tests.cli.test_seed_003 import CSMALL, OVERRIDE, VM_CIRROS_CSMALL
from tests.kube.served import installed_and_served


@pytest.fixture(scope="module")
def served(kube, webhook_certs):
    with installed_and_served(kube, webhook_certs) as served:
        yield served


def apply(kube, namespace, text: str, *files: str):
    args = ["apply", "-n", namespace]
    if files:
        for f in files:
            args += ["-f", f]
    else:
        args += ["-f", "-"]
    return kube.kubectl(*args, input=None if files else text, check=False)


def test_seed_000_requirements_refusals(kube, served, namespace):
    r = apply(kube, namespace, CSMALL_CIRROS_VM)
    assert r.returncode == 1
    assert r.stdout == ("virtualmachineinstancetype.instancetype.kubevirt.io/csmall created\n"
                        "virtualmachinepreference.instancetype.kubevirt.io/cirros created\n")
    assert r.stderr == ("The request is invalid: spec.instancetype: failure checking preference requirements: "
                        "insufficient Memory resources of 128Mi provided by instance type, preference requires 512Mi\n")
    r = apply(kube, namespace, PREFER_CORES_VM)
    assert r.returncode == 1
    # The seed prints `cirros unchanged`, but the preference did change: kubectl says configured.
    assert r.stdout == "virtualmachinepreference.instancetype.kubevirt.io/cirros configured\n"
    # KubeVirt v1.9 also warns about the deprecated preferCores (newer than the seed).
    assert r.stderr.splitlines() == [
        "Warning: PreferredCPUTopology preferCores is deprecated for removal in a future release, please use "
        "cores instead",
        "The request is invalid: spec.template.spec.domain.cpu.cores: failure checking preference requirements: "
        "insufficient CPU resources of 0 vCPU provided by VirtualMachine, preference requires 2 vCPU provided as "
        "cores"]
    # Nothing of the refused VMs is stored; one JSON log line per refusal, naming the webhook.
    assert kube.kubectl("get", "vm", "-n", namespace, "-o", "name").stdout == ""
    refused = [d for d in served.denials() if d["namespace"] == namespace]
    assert [(d["name"], d["webhook"], d["code"]) for d in refused] == [
        ("vm-cirros-csmall", kinds.WEBHOOK_VM_VALIDATOR, 422), ("vm-cirros", kinds.WEBHOOK_VM_VALIDATOR, 422)]


def test_seed_003_old_versions_and_revisions_lookups(kube, served, namespace, tmp_path):
    r = apply(kube, namespace, OVERRIDE)
    assert r.returncode == 0, r.stderr
    # The seed's `configured` comes from a VM that already existed; on a new cluster kubectl says created.
    assert r.stdout == ("virtualmachinepreference.instancetype.kubevirt.io/example-preference-disk-virtio created\n"
                        "virtualmachine.kubevirt.io/example-preference-user-override created\n")
    # The v1alpha1 object is accepted with the CRD's deprecation warning, and v1.9's VM validator
    # warns about `spec.running` (the seed's kubectl and KubeVirt printed neither).
    assert r.stderr.splitlines() == [f"Warning: {deprecation_warning('v1alpha1', kinds.PREFERENCE)}",
                                     "Warning: spec.running is deprecated, please use spec.runStrategy instead."]
    vm = json.loads(kube.kubectl("get", "vms/example-preference-user-override", "-n", namespace, "-o",
                                 "json").stdout)
    assert vm["spec"]["template"]["spec"]["domain"]["devices"]["disks"] == [
        {"disk": {"bus": "sata"}, "name": "containerdisk"}, {"disk": {}, "name": "cloudinitdisk"}]
    (tmp_path / "csmall.yaml").write_text(CSMALL)
    (tmp_path / "vm-cirros-csmall.yaml").write_text(VM_CIRROS_CSMALL)
    r = apply(kube, namespace, "", str(tmp_path / "csmall.yaml"), str(tmp_path / "vm-cirros-csmall.yaml"))
    assert r.stdout == ("virtualmachineinstancetype.instancetype.kubevirt.io/csmall created\n"
                        "virtualmachine.kubevirt.io/vm-cirros-csmall created\n"), r.stderr
    vm = json.loads(kube.kubectl("get", "vm/vm-cirros-csmall", "-n", namespace, "-o", "json").stdout)
    assert vm["spec"]["instancetype"] == {"kind": "VirtualMachineInstancetype", "name": "csmall"}
    r = kube.kubectl("delete", "vm/vm-cirros-csmall", "-n", namespace)
    # kubectl 1.36 names the namespace (the seed's older kubectl printed `... deleted`).
    assert r.stdout == f'virtualmachine.kubevirt.io "vm-cirros-csmall" deleted from {namespace} namespace\n'
    missing = "vm-cirros-csmall-csmall-6709b990-f717-44fe-a8ff-cb441d20b904-1"
    r = kube.kubectl("get", f"controllerrevision/{missing}", "-n", namespace, check=False)
    assert (r.returncode, r.stderr) == (1, f'Error from server (NotFound): controllerrevisions.apps "{missing}" '
                                           "not found\n")


def test_seed_001_fedora_example(kube, served, namespace):
    r = apply(kube, namespace, FEDORA)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count(" created\n") == 3


def test_the_mutator_stores_the_inferred_matcher_kind(kube, served, namespace):
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": "cirros", "labels": {kinds.LABEL_DEFAULT_INSTANCETYPE: "u1.medium",
                                                     kinds.LABEL_DEFAULT_PREFERENCE: "cirros"}},
           "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    kube.kubectl("apply", "-n", namespace, "-f", "-", input=json.dumps(pvc))
    vm = builders.vm("cirros", namespace=None, instancetype={"inferFromVolume": "cirros"},
                     preference={"inferFromVolume": "cirros"}, runStrategy="Halted", domain={"devices": {}},
                     volumes=[{"name": "cirros", "persistentVolumeClaim": {"claimName": "cirros"}}])
    # The informer has to have seen the claim: retry the creation until the mutator finds it.
    from tests.waits import eventually

    def created():
        r = kube.kubectl("create", "-n", namespace, "-f", "-", input=json.dumps(vm), check=False)
        return r.returncode == 0
    eventually(created, 30, what="the VM to be admitted with its claim known")
    spec = json.loads(kube.kubectl("get", "vm/cirros", "-n", namespace, "-o", "json").stdout)["spec"]
    assert spec["instancetype"] == {"kind": "virtualmachineclusterinstancetype", "name": "u1.medium"}
    assert spec["preference"] == {"kind": "virtualmachineclusterpreference", "name": "cirros"}
    assert spec["template"]["spec"]["architecture"] == "amd64"


def test_an_invalid_instancetype_is_refused_by_the_type_validator(kube, served, namespace):
    bad = {"apiVersion": kinds.API_VERSION, "kind": kinds.PREFERENCE, "metadata": {"name": "spread"},
           "spec": {"cpu": {"preferredCPUTopology": "spread",
                            "spreadOptions": {"across": "CoresThreads", "ratio": 8}}}}
    r = kube.kubectl("create", "-n", namespace, "-f", "-", input=json.dumps(bad), check=False)
    assert r.returncode == 1
    assert r.stderr == ("The request is invalid: spec.cpu.spreadOptions.ratio: only a ratio of 2 (1 core 2 threads) "
                        "is allowed when spreading vCPUs over cores and threads\n")


def test_serve_stopped_fails_closed(kube, served, namespace):
    vm = builders.vm("closed", domain={"devices": {}}, namespace=None, runStrategy="Halted")
    it = {"apiVersion": kinds.API_VERSION, "kind": kinds.INSTANCETYPE, "metadata": {"name": "closed"},
          "spec": {"cpu": {"guest": 1}, "memory": {"guest": "128Mi"}}}
    served.stop()
    try:
        for obj, hook in ((vm, kinds.WEBHOOK_VM_MUTATOR), (it, kinds.type_validator_webhook(kinds.INSTANCETYPE))):
            r = kube.kubectl("create", "-n", namespace, "-f", "-", input=json.dumps(obj), check=False)
            assert r.returncode == 1
            assert r.stderr.startswith(f'Error from server (InternalError): error when creating "STDIN": '
                                       f'Internal error occurred: failed calling webhook "{hook}": '), r.stderr
            assert "connection refused" in r.stderr
        assert kube.kubectl("get", "vm,vmf", "-n", namespace, "-o", "name").stdout == ""
    finally:
        served.start()
    r = kube.kubectl("create", "-n", namespace, "-f", "-", input=json.dumps(it))
    assert r.stdout == "virtualmachineinstancetype.instancetype.kubevirt.io/closed created\n"
