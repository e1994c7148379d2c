"""The VM controller flows (pkg/instancetype/controller/vm; KubeVirt's functional tests/instancetype)
through the CLI: pinning, renaming, deleting the referenced object (on both stores: `any_cluster`,
`--state` or `--kubeconfig`), inference (the embedded store's images)."""
from __future__ import annotations

import json

import pytest

from tests.kube.both_stores import cli_args

from ._helpers import INSTANCETYPE, VM, get_json, inferring_vm, run, run_main, run_settled


@pytest.fixture
def cluster(any_cluster):
    return any_cluster


_run = run_settled


def _get_json(cluster, *args: str):
    r = run_main([*cli_args(cluster), "get", *args, "-o", "json"])
    assert r.code == 0, r.err
    return json.loads(r.out)


def _vm(cluster, name="vm1"):
    return _get_json(cluster, "vm", name)


def test_pinned_revision_survives_an_edit(cluster):
    _run(cluster, "apply", "-f", "-", stdin=INSTANCETYPE + "---\n" + VM)
    assert _run(cluster, "start", "vm1").code == 0
    pinned = _vm(cluster)["spec"]["instancetype"]["revisionName"]
    assert _run(cluster, "apply", "-f", "-", stdin=INSTANCETYPE.replace("guest: 1\n", "guest: 2\n")).out.endswith(
        "configured\n")
    assert _run(cluster, "restart", "vm1").code == 0
    assert _vm(cluster)["spec"]["instancetype"]["revisionName"] == pinned
    vmi = _get_json(cluster, "vmi", "vm1")
    assert vmi["spec"]["domain"]["cpu"]["sockets"] == 1


def test_rename_with_and_without_revision_name(cluster):
    other = INSTANCETYPE.replace("name: small", "name: other")
    _run(cluster, "apply", "-f", "-", stdin=INSTANCETYPE + "---\n" + other + "---\n" + VM)
    _run(cluster, "start", "vm1")
    vm = _vm(cluster)
    pinned = vm["spec"]["instancetype"]["revisionName"]
    renamed = VM.replace("    name: small", f"    name: other\n    revisionName: {pinned}")
    r = _run(cluster, "apply", "-f", "-", stdin=renamed)
    assert (r.code, r.err) == (1, "The request is invalid: spec.instancetype.revisionName: the Matcher Name has been "
                                  "updated without updating the RevisionName\n")
    # kubectl apply keeps a field the controller set (revisionName is in no applied configuration),
    # so the rename is refused the same way until the manifest clears it explicitly.
    assert _run(cluster, "apply", "-f", "-", stdin=VM.replace("    name: small", "    name: other")).code == 1
    r = _run(cluster, "apply", "-f", "-", stdin=VM.replace("    name: small", "    name: other\n    revisionName: null"))
    assert (r.code, r.out) == (0, "virtualmachine.kubevirt.io/vm1 configured\n"), r.err
    assert _vm(cluster)["spec"]["instancetype"]["name"] == "other"


def test_deleting_the_referenced_instancetype(cluster):
    _run(cluster, "apply", "-f", "-", stdin=INSTANCETYPE + "---\n" + VM)
    assert _run(cluster, "delete", "virtualmachineinstancetype", "small").code == 0
    # Admitted (KubeVirt admits a VM whose instancetype is missing); it cannot start.
    assert _run(cluster, "start", "vm1").code == 0
    vm = _vm(cluster)
    failure = [c for c in vm["status"]["conditions"] if c["type"] == "Failure"]
    assert failure and failure[0]["reason"] == "FailedFindInstancetype"
    assert _run(cluster, "get", "vm").out.split()[-2:] == ["Stopped", "False"]


def infer_vm(policy: str) -> str:
    return inferring_vm("inferred", {"name": "disk", "persistentVolumeClaim": {"claimName": "plain"}},
                        instancetype={"inferFromVolume": "disk", "inferFromVolumeFailurePolicy": policy})


def test_inference_failure_policies(tmp_path):
    state = tmp_path / "state.db"
    image = tmp_path / "disk.img"
    image.write_bytes(b"x")
    assert run(state, "image-upload", "pvc", "plain", "--size=1Gi", f"--image-path={image}").code == 0
    r = run(state, "apply", "-f", "-", stdin=infer_vm("Reject"))
    assert r.code == 1 and "unable to find required instancetype.kubevirt.io/default-instancetype label" in r.err
    r = run(state, "apply", "-f", "-", stdin=infer_vm("Ignore"))
    assert r.code == 0, r.err
    assert "instancetype" not in get_json(state, "vm", "inferred")["spec"]


def test_datasource_and_datavolumetemplate_inference(tmp_path):
    state = tmp_path / "state.db"
    image = tmp_path / "disk.img"
    image.write_bytes(b"x")
    assert run(state, "image-upload", "dv", "fedora", "--size=1Gi", f"--image-path={image}", "--datasource",
               "--default-instancetype", "u1.medium", "--default-preference", "fedora").code == 0
    vm = inferring_vm("dvt", {"name": "root", "dataVolume": {"name": "root"}},
                      instancetype={"inferFromVolume": "root"}, preference={"inferFromVolume": "root"},
                      dataVolumeTemplates=[{"metadata": {"name": "root"}, "spec": {
                          "sourceRef": {"kind": "DataSource", "name": "fedora"},
                          "storage": {"resources": {"requests": {"storage": "1Gi"}}}}}])
    r = run(state, "apply", "-f", "-", stdin=vm)
    assert r.code == 0, r.err
    spec = get_json(state, "vm", "dvt")["spec"]
    assert spec["instancetype"]["name"] == "u1.medium" and spec["preference"]["name"] == "fedora"
