"""Seed 000 (instancetype update #5) on a cluster, each sequence written once and run with the real
virtctl v1.7.0 and kubectl 1.36, then with `instancetype --kubeconfig` in their place (the `clients`
fixture), printing the same lines: `virtctl create vm ... | kubectl apply -f -`, the requirements
refusals, the overcommitted VMI's memory request, and inference from a labelled PVC.
`instancetype serve` + `instancetype controller` run inside the network namespace as the
ServiceAccount `install` made (the `subresource_api` fixture of test_virtctl.py)."""
from __future__ import annotations

import json

import yaml

from tests.cli.test_seed_000 import CSMALL_CIRROS_VM, PREFER_CORES_VM
from tests.kube.controller_env import until
from tests.kube.test_virtctl import (
    _without_go_zero_time,
    subresource_api,  # noqa: F401  (the module-scoped stack)
)

CIRROS_IMAGE = "registry:5000/kubevirt/cirros-container-disk-demo:devel"


def _get_json(kubectl, ns: str, what: str) -> dict | None:
    r = kubectl("get", what, "-n", ns, "-o", "json", check=False)
    return json.loads(r.stdout) if r.returncode == 0 else None


def test_overcommit_vmi_requests_less_than_the_guest_sees(clients, netns_namespace):  # noqa: F811
    kubectl, virtctl, ns = clients.kubectl, clients.virtctl, netns_namespace
    overcommit = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
                  "metadata": {"name": "overcommit"},
                  "spec": {"cpu": {"guest": 1}, "memory": {"guest": "128Mi", "overcommitPercent": 15}}}
    r = kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(overcommit))
    assert r.stdout == "virtualmachineinstancetype.instancetype.kubevirt.io/overcommit created\n"

    created = virtctl("create", "vm", "--instancetype", "virtualmachineinstancetype/overcommit",
                           "--volume-containerdisk", f"name:cirros,src:{CIRROS_IMAGE}", "--name", "cirros").stdout
    r = kubectl("apply", "-n", ns, "-f", "-", input=created)
    assert r.stdout == "virtualmachine.kubevirt.io/cirros created\n"

    # runStrategy Always: the controller starts the VMI.
    domain = until(lambda: _get_json(kubectl, ns, "vmi/cirros"), timeout=60, what="the VMI cirros")["spec"]["domain"]
    # 128Mi less 15%: the seed's `114085072` (~108Mi).
    assert domain["memory"] == {"guest": "128Mi"}
    assert domain["resources"]["requests"]["memory"] == "114085072"


def test_create_vm_infers_from_labelled_pvc(clients, netns_namespace):  # noqa: F811
    kubectl, virtctl, ns = clients.kubectl, clients.virtctl, netns_namespace
    # The seed's PVC comes from `virtctl image-upload` through CDI, which this cluster has not:
    # the same labels on a plain claim (left Pending: nothing binds it, nothing needs to).
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": "cirros", "namespace": ns,
                        "labels": {"instancetype.kubevirt.io/default-instancetype": "n1.medium",
                                   "instancetype.kubevirt.io/default-preference": "cirros"}},
           "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    r = kubectl("apply", "-f", "-", input=json.dumps(pvc))
    assert r.stdout == "persistentvolumeclaim/cirros created\n"
    labels = _get_json(kubectl, ns, "pvc/cirros")["metadata"]["labels"]
    assert labels == pvc["metadata"]["labels"]
    # `n1.medium` and the `cirros` preference are the common-instancetypes catalogue's, which
    # `instancetype install` deploys as virt-operator does: used as they are (generation 1).
    it = json.loads(kubectl("get", "virtualmachineclusterinstancetype/n1.medium", "-o", "json").stdout)
    pref = json.loads(kubectl("get", "virtualmachineclusterpreference/cirros", "-o", "json").stdout)
    try:
        manifest = virtctl("create", "vm", "--volume-pvc=name:cirros,src:cirros", "--infer-instancetype",
                                "--infer-preference", "--name", "cirros").stdout
        # The seed's `| yq .` output. Its `creationTimestamp: null` (Go's unset metav1.Time) virtctl
        # v1.7.0 still writes; KubeVirt v1.9's virtctl, whose `create` this project's is
        # (the conformance cases of `create`), omits it: the only difference allowed.
        assert _without_go_zero_time(yaml.safe_load(manifest)) == {
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "metadata": {"name": "cirros"},
            "spec": {"instancetype": {"inferFromVolume": "cirros"}, "preference": {"inferFromVolume": "cirros"},
                     "runStrategy": "Always",
                     "template": {"metadata": {},
                                  "spec": {"domain": {"devices": {}, "resources": {}},
                                           "terminationGracePeriodSeconds": 180,
                                           "volumes": [{"name": "cirros",
                                                        "persistentVolumeClaim": {"claimName": "cirros"}}]}}},
            "status": {}}
        r = kubectl("apply", "-n", ns, "-f", "-", input=manifest)
        assert r.stdout == "virtualmachine.kubevirt.io/cirros created\n"

        # The webhook expands inferFromVolume into the matchers; the controller then names the
        # revisions (KubeVirt's `<vm>-<object>-<uid>-<generation>`).
        def matchers():
            spec = _get_json(kubectl, ns, "vm/cirros")["spec"]
            named = spec["instancetype"].get("revisionName") and spec["preference"].get("revisionName")
            return spec if named else None
        spec = until(matchers, timeout=60, what="the revision names")
        assert spec["instancetype"] == {
            "kind": "virtualmachineclusterinstancetype", "name": "n1.medium",
            "revisionName": f"cirros-n1.medium-{it['metadata']['uid']}-1"}
        assert spec["preference"] == {
            "kind": "virtualmachineclusterpreference", "name": "cirros",
            "revisionName": f"cirros-cirros-{pref['metadata']['uid']}-1"}
    finally:
        kubectl("delete", "vm/cirros", "-n", ns, "--ignore-not-found", "--wait=true", "--timeout=120s", check=False)


def test_requirements_refusals(clients, netns_namespace):  # noqa: F811
    kubectl, ns = clients.kubectl, netns_namespace
    r = kubectl("apply", "-n", ns, "-f", "-", input=CSMALL_CIRROS_VM, check=False)
    assert r.returncode == 1
    assert r.stdout == ("virtualmachineinstancetype.instancetype.kubevirt.io/csmall created\n"
                        "virtualmachinepreference.instancetype.kubevirt.io/cirros created\n")
    assert r.stderr == ("The request is invalid: spec.instancetype: failure checking preference requirements: "
                        "insufficient Memory resources of 128Mi provided by instance type, preference requires "
                        "512Mi\n")
    r = kubectl("apply", "-n", ns, "-f", "-", input=PREFER_CORES_VM, check=False)
    assert r.returncode == 1
    # The seed's older kubectl printed `cirros unchanged`; the preference's spec did change and
    # kubectl 1.36 says `configured`: kubectl wins.
    assert r.stdout == "virtualmachinepreference.instancetype.kubevirt.io/cirros configured\n"
    # KubeVirt v1.9's webhook also warns about the deprecated preferCores (newer than the seed).
    assert r.stderr.startswith("Warning: PreferredCPUTopology preferCores is deprecated")
    assert r.stderr.splitlines()[-1] == (
        "The request is invalid: spec.template.spec.domain.cpu.cores: failure checking preference "
        "requirements: insufficient CPU resources of 0 vCPU provided by VirtualMachine, preference "
        "requires 2 vCPU provided as cores")
    assert kubectl("get", "vm", "-n", ns, "-o", "name").stdout == ""


def test_image_upload_labels_the_volume(clients, netns_namespace, tmp_path):  # noqa: F811
    kubectl, virtctl, ns = clients.kubectl, clients.virtctl, netns_namespace
    image = tmp_path / "cirros.img"
    image.write_bytes(b"\0" * 4096)
    r = virtctl("image-upload", "dv", "cirros", "--size=1Gi", "--default-instancetype", "n1.medium",
                "--default-preference", "cirros", "--force-bind", f"--image-path={image}", "-n", ns,
                "--wait-secs=3", check=False)
    # No CDI here: the DataVolume is made, the bytes cannot go. virtctl then waits for CDI's upload
    # pod until --wait-secs; instancetype says at once that no upload proxy answers. Both exit 1.
    assert r.returncode == 1
    assert r.stdout.splitlines()[:2] == [f"PVC {ns}/cirros not found ", f"DataVolume {ns}/cirros created"]
    # The seed's `kubectl get dv/cirros -o json | jq .metadata.labels`.
    assert _get_json(kubectl, ns, "dv/cirros")["metadata"]["labels"] == {
        "instancetype.kubevirt.io/default-instancetype": "n1.medium",
        "instancetype.kubevirt.io/default-preference": "cirros"}
    if clients.name == "instancetype":
        # The claim is CDI's to make from the DataVolume; instancetype makes it as CDI does (with
        # CDI's labels, the seed's `kubectl get pvc/cirros -o json | jq .metadata.labels`).
        assert _get_json(kubectl, ns, "pvc/cirros")["metadata"]["labels"] == {
            "app": "containerized-data-importer", "app.kubernetes.io/component": "storage",
            "app.kubernetes.io/managed-by": "cdi-controller",
            "instancetype.kubevirt.io/default-instancetype": "n1.medium",
            "instancetype.kubevirt.io/default-preference": "cirros"}
