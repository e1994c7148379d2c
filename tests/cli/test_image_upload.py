"""virtctl `image-upload` on the embedded cluster."""
from __future__ import annotations

from ._helpers import get_json, run


def test_pvc_upload_datasource_and_errors(tmp_path):
    state = tmp_path / "state.db"
    image = tmp_path / "disk.img"
    image.write_bytes(b"x" * 4096)
    r = run(state, "image-upload", "pvc", "fedora", "--size=1Mi", f"--image-path={image}",
            "--default-instancetype", "u1.medium", "--default-preference", "fedora", "--datasource")
    assert r.code == 0, r.err
    assert r.out.splitlines()[:2] == ["PVC default/fedora not found ", "PersistentVolumeClaim default/fedora created"]
    assert "Created a new DataSource default/fedora" in r.out
    pvc = get_json(state, "pvc", "fedora")
    assert (tmp_path / "state.db.images" / pvc["metadata"]["uid"]).read_bytes() == image.read_bytes()
    assert pvc["metadata"]["labels"] == {"instancetype.kubevirt.io/default-instancetype": "u1.medium",
                                         "instancetype.kubevirt.io/default-preference": "fedora"}
    ds = get_json(state, "datasource", "fedora")
    assert ds["spec"]["source"]["pvc"] == {"name": "fedora", "namespace": "default"}
    r = run(state, "image-upload", "pvc", "fedora", "--no-create", f"--image-path={image}")
    assert (r.code, r.err) == (1, "error: PVC fedora already successfully imported/cloned/updated\n")


def test_validation_messages(tmp_path):
    state = tmp_path / "state.db"
    image = tmp_path / "disk.img"
    image.write_bytes(b"x" * 2048)
    cases = [
        (["dv", "a", "--size=1Gi", f"--image-path={image}", "--default-instancetype-kind",
          "VirtualMachineInstancetype"], "--default-instancetype must be provided with --default-instancetype-kind"),
        (["dv", "a", f"--image-path={image}", "--default-preference", "fedora", "--no-create"],
         "--default-instancetype and --default-preference cannot be used with --no-create"),
        (["dv", "a", "--size=1Ki", f"--image-path={image}"],
         "Virtual image size 2048 is larger than the reported available storage 1024. A larger PVC is required."),
        (["vm", "a", "--size=1Gi", f"--image-path={image}"], "invalid resource type vm"),
        (["dv", "--size=1Gi", f"--image-path={image}"], "expecting two args"),
        (["dv", "a", "--size=1Gi", "--image-path=/no/such/file"],
         "failed to open image file: open /no/such/file: no such file or directory"),
    ]
    for args, message in cases:
        r = run(state, "image-upload", *args)
        assert r.code == 1 and r.err.splitlines()[-1] == "error: " + message, (args, r.err)
    assert run(state, "get", "dv").err == "No resources found in default namespace.\n"


def test_deleting_the_dv_removes_its_pvc(tmp_path):
    state = tmp_path / "state.db"
    image = tmp_path / "disk.img"
    image.write_bytes(b"x")
    assert run(state, "image-upload", "dv", "d1", "--size=1Gi", f"--image-path={image}").code == 0
    assert run(state, "get", "pvc", "d1").code == 0
    assert run(state, "delete", "dv", "d1").out == 'datavolume.cdi.kubevirt.io "d1" deleted from default namespace\n'
    assert run(state, "get", "pvc", "d1").code == 1
