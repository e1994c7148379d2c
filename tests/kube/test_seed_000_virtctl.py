"""Seed 000 (instancetype update #5) on a cluster: the real virtctl v1.7.0 writes the VMs
(`virtctl create vm ... | kubectl apply -f -`), the real kubectl applies and reads them, and
`instancetype serve` + `instancetype controller` run inside the network namespace as the
ServiceAccount `install` made (the `subresource_api` fixture of test_virtctl.py)."""
from __future__ import annotations

import json

import yaml

from tests.kube.controller_env import until
from tests.kube.test_virtctl import subresource_api  # noqa: F401  (the module-scoped stack)

CIRROS_IMAGE = "registry:5000/kubevirt/cirros-container-disk-demo:devel"


def _get_json(kube, ns: str, what: str) -> dict | None:
    r = kube.kubectl("get", what, "-n", ns, "-o", "json", check=False)
    return json.loads(r.stdout) if r.returncode == 0 else None


def test_overcommit_vmi_requests_less_than_the_guest_sees(subresource_api, netns_namespace):  # noqa: F811
    kube, ns = subresource_api, netns_namespace
    overcommit = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
                  "metadata": {"name": "overcommit"},
                  "spec": {"cpu": {"guest": 1}, "memory": {"guest": "128Mi", "overcommitPercent": 15}}}
    r = kube.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(overcommit))
    assert r.stdout == "virtualmachineinstancetype.instancetype.kubevirt.io/overcommit created\n"

    created = kube.virtctl("create", "vm", "--instancetype", "virtualmachineinstancetype/overcommit",
                           "--volume-containerdisk", f"name:cirros,src:{CIRROS_IMAGE}", "--name", "cirros").stdout
    r = kube.kubectl("apply", "-n", ns, "-f", "-", input=created)
    assert r.stdout == "virtualmachine.kubevirt.io/cirros created\n"

    # runStrategy Always: the controller starts the VMI.
    until(lambda: _get_json(kube, ns, "vmi/cirros") is not None, timeout=60, what="the VMI cirros")
    domain = _get_json(kube, ns, "vmi/cirros")["spec"]["domain"]
    # 128Mi less 15%: the seed's `114085072` (~108Mi).
    assert domain["memory"] == {"guest": "128Mi"}
    assert domain["resources"]["requests"]["memory"] == "114085072"


def test_create_vm_infers_from_labelled_pvc(subresource_api, netns_namespace):  # noqa: F811
    kube, ns = subresource_api, netns_namespace
    # The seed's PVC comes from `virtctl image-upload` through CDI, which this cluster has not:
    # the same labels on a plain claim (left Pending: nothing binds it, nothing needs to).
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": "cirros", "namespace": ns,
                        "labels": {"instancetype.kubevirt.io/default-instancetype": "n1.medium",
                                   "instancetype.kubevirt.io/default-preference": "cirros"}},
           "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    kube.kubectl("apply", "-f", "-", input=json.dumps(pvc))
    labels = _get_json(kube, ns, "pvc/cirros")["metadata"]["labels"]
    assert labels == pvc["metadata"]["labels"]
    # `n1.medium` and the `cirros` preference are the common-instancetypes catalogue's, which
    # `instancetype install` deploys as virt-operator does: used as they are (generation 1).
    it = json.loads(kube.kubectl("get", "virtualmachineclusterinstancetype/n1.medium", "-o", "json").stdout)
    pref = json.loads(kube.kubectl("get", "virtualmachineclusterpreference/cirros", "-o", "json").stdout)
    try:
        manifest = kube.virtctl("create", "vm", "--volume-pvc=name:cirros,src:cirros", "--infer-instancetype",
                                "--infer-preference", "--name", "cirros").stdout
        # The seed's `| yq .` output, as virtctl v1.7.0 still writes it.
        assert yaml.safe_load(manifest) == {
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "metadata": {"creationTimestamp": None, "name": "cirros"},
            "spec": {"instancetype": {"inferFromVolume": "cirros"}, "preference": {"inferFromVolume": "cirros"},
                     "runStrategy": "Always",
                     "template": {"metadata": {"creationTimestamp": None},
                                  "spec": {"domain": {"devices": {}, "resources": {}},
                                           "terminationGracePeriodSeconds": 180,
                                           "volumes": [{"name": "cirros",
                                                        "persistentVolumeClaim": {"claimName": "cirros"}}]}}},
            "status": {}}
        r = kube.kubectl("apply", "-n", ns, "-f", "-", input=manifest)
        assert r.stdout == "virtualmachine.kubevirt.io/cirros created\n"

        # The webhook expands inferFromVolume into the matchers; the controller then names the
        # revisions (KubeVirt's `<vm>-<object>-<uid>-<generation>`).
        def matchers():
            spec = _get_json(kube, ns, "vm/cirros")["spec"]
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
        kube.kubectl("delete", "vm/cirros", "-n", ns, "--ignore-not-found", "--wait=true", "--timeout=120s",
                     check=False)
