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
    assert (r.code, r.err) == (1, "PVC fedora already successfully imported/cloned/updated\n")


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
        assert r.code == 1 and r.err.splitlines()[-1] == message, (args, r.err)
    assert run(state, "get", "dv").err == "No resources found in default namespace.\n"


def test_deleting_the_dv_removes_its_pvc(tmp_path):
    state = tmp_path / "state.db"
    image = tmp_path / "disk.img"
    image.write_bytes(b"x")
    assert run(state, "image-upload", "dv", "d1", "--size=1Gi", f"--image-path={image}").code == 0
    assert run(state, "get", "pvc", "d1").code == 0
    assert run(state, "delete", "dv", "d1").out == 'datavolume.cdi.kubevirt.io "d1" deleted from default namespace\n'
    assert run(state, "get", "pvc", "d1").code == 1


def test_a_sparse_image_stays_sparse_and_piped_output_has_no_blank_lines(tmp_path):
    """A 1 GiB image with 8 KiB of data: the stored copy holds the same bytes and about as many
    allocated blocks as the source (holes kept), and the piped output is the messages alone."""
    import os

    state, image = tmp_path / "state.db", tmp_path / "sparse.img"
    with open(image, "wb") as f:
        f.truncate(1 << 30)
        f.seek(300 << 20)
        f.write(b"\x01" * 4096)
        f.seek((1 << 30) - 4096)
        f.write(b"\x02" * 4096)
    source_blocks = os.stat(image).st_blocks
    r = run(state, "image-upload", "dv", "sparse", "--size=2Gi", f"--image-path={image}")
    assert r.code == 0, r.err
    assert "" not in r.out.splitlines()
    pvc = get_json(state, "pvc", "sparse")
    stored = tmp_path / "state.db.images" / pvc["metadata"]["uid"]
    st = os.stat(stored)
    assert st.st_size == 1 << 30
    assert st.st_blocks <= source_blocks + 64, (st.st_blocks, source_blocks)   # 512-byte blocks: a few KiB
    with open(stored, "rb") as f:
        f.seek(300 << 20)
        assert f.read(4096) == b"\x01" * 4096
        f.seek((1 << 30) - 4096)
        assert f.read() == b"\x02" * 4096
        f.seek(0)
        assert f.read(4096) == bytes(4096)


def test_size_is_required_to_create_the_claim(target, tmp_path):
    image = tmp_path / "disk.img"
    image.write_bytes(b"x" * 4096)
    for kind in ("dv", "pvc"):
        r = run(target, "image-upload", kind, "nosize", f"--image-path={image}")
        assert r.code == 1
        assert r.err == "when creating a resource, the size must be specified\n", r.err
