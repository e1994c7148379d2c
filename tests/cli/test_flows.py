"""The VM controller flows (pkg/instancetype/controller/vm; KubeVirt's functional tests/instancetype)
through the CLI: pinning, renaming, deleting the referenced object, inference."""
from __future__ import annotations

from ._helpers import INSTANCETYPE, VM, get_json, inferring_vm, run


def _vm(state, name="vm1"):
    return get_json(state, "vm", name)


def test_pinned_revision_survives_an_edit(tmp_path):
    state = tmp_path / "state.db"
    run(state, "apply", "-f", "-", stdin=INSTANCETYPE + "---\n" + VM)
    assert run(state, "start", "vm1").code == 0
    pinned = _vm(state)["spec"]["instancetype"]["revisionName"]
    assert run(state, "apply", "-f", "-", stdin=INSTANCETYPE.replace("guest: 1\n", "guest: 2\n")).out.endswith(
        "configured\n")
    assert run(state, "restart", "vm1").code == 0
    assert _vm(state)["spec"]["instancetype"]["revisionName"] == pinned
    vmi = get_json(state, "vmi", "vm1")
    assert vmi["spec"]["domain"]["cpu"]["sockets"] == 1


def test_rename_with_and_without_revision_name(tmp_path):
    state = tmp_path / "state.db"
    other = INSTANCETYPE.replace("name: small", "name: other")
    run(state, "apply", "-f", "-", stdin=INSTANCETYPE + "---\n" + other + "---\n" + VM)
    run(state, "start", "vm1")
    vm = _vm(state)
    pinned = vm["spec"]["instancetype"]["revisionName"]
    renamed = VM.replace("    name: small", f"    name: other\n    revisionName: {pinned}")
    r = run(state, "apply", "-f", "-", stdin=renamed)
    assert (r.code, r.err) == (1, "The request is invalid: spec.instancetype.revisionName: the Matcher Name has been "
                                  "updated without updating the RevisionName\n")
    # kubectl apply keeps a field the controller set (revisionName is in no applied configuration),
    # so the rename is refused the same way until the manifest clears it explicitly.
    assert run(state, "apply", "-f", "-", stdin=VM.replace("    name: small", "    name: other")).code == 1
    r = run(state, "apply", "-f", "-", stdin=VM.replace("    name: small", "    name: other\n    revisionName: null"))
    assert (r.code, r.out) == (0, "virtualmachine.kubevirt.io/vm1 configured\n"), r.err
    assert _vm(state)["spec"]["instancetype"]["name"] == "other"


def test_deleting_the_referenced_instancetype(tmp_path):
    state = tmp_path / "state.db"
    run(state, "apply", "-f", "-", stdin=INSTANCETYPE + "---\n" + VM)
    assert run(state, "delete", "virtualmachineinstancetype", "small").code == 0
    # Admitted (KubeVirt admits a VM whose instancetype is missing); it cannot start.
    assert run(state, "start", "vm1").code == 0
    vm = _vm(state)
    failure = [c for c in vm["status"]["conditions"] if c["type"] == "Failure"]
    assert failure and failure[0]["reason"] == "FailedFindInstancetype"
    assert run(state, "get", "vm").out.split()[-2:] == ["Stopped", "False"]


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
    assert "instancetype" not in _vm(state, "inferred")["spec"]


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
    spec = _vm(state, "dvt")["spec"]
    assert spec["instancetype"]["name"] == "u1.medium" and spec["preference"]["name"] == "fedora"
