"""image-upload under faults, for real: kill -9 at any moment, a file-size limit (a full disk's
cousin), concurrent uploads. Whatever happens, nothing says Succeeded without its bytes, the
next command leaves no temporary file behind, and running the same command again completes."""
from __future__ import annotations

import os
import random
import resource
import signal
import subprocess
import sys
import time

from instancetype.controller import Cluster
from instancetype.controller.upload import POD_PHASE

CLI = [sys.executable, "-m", "instancetype"]

# Runs the real CLI in a child process, pausing (so that it can be killed there) at a stage:
# "copy" after the first chunk of bytes, "finish" with the bytes renamed into place but the
# status not yet committed.
PAUSING_CLI = r"""
import sys, time
from instancetype.controller import images, upload
stage = sys.argv[1]
write = images.Images.write
def paused_write(self, uid, src, progress=None):
    class Slow:
        def read(self_, n):
            data = src.read(n)
            if stage == "copy" and data:
                print("STAGE", file=sys.stderr, flush=True)
                time.sleep(60)      # held at the stage until the test kills it (bounded if it never does)
            return data
    return write(self, uid, Slow(), progress)
images.Images.write = paused_write
finish = upload.Upload.finish
def paused_finish(self):
    if stage == "finish":
        print("STAGE", file=sys.stderr, flush=True)
        time.sleep(60)          # held at the stage until the test kills it (bounded if it never does)
    return finish(self)
upload.Upload.finish = paused_finish
from instancetype.cli.entry import main
main(sys.argv[2:])
"""


def _image(tmp_path, size: int):
    path = tmp_path / "disk.img"
    path.write_bytes(os.urandom(size))
    return path


def _upload_args(state, what, name, image):
    return ["--state", str(state), "image-upload", what, name, "--size=64Mi", f"--image-path={image}"]


def _check_consistent(state, image) -> dict:
    """Nothing says Succeeded without its whole image; no temporary file survives an opening;
    every image file belongs to a claim. Returns {claim name: succeeded}."""
    with Cluster.open(str(state)) as c:
        names = {p.name for p in c.images.dir.iterdir()} if c.images.dir.exists() else set()
        assert not [n for n in names if n.endswith(".part")], names
        pvcs = {p["metadata"]["name"]: p for p in c.list("PersistentVolumeClaim")}
        assert names <= {p["metadata"]["uid"] for p in pvcs.values()}
        done = {}
        for name, pvc in pvcs.items():
            succeeded = (pvc["metadata"].get("annotations") or {}).get(POD_PHASE) == "Succeeded"
            if succeeded:
                assert c.images.path(pvc["metadata"]["uid"]).read_bytes() == image.read_bytes()
            done[name] = succeeded
        for dv in c.list("DataVolume"):
            if (dv.get("status") or {}).get("phase") == "Succeeded":
                assert done[dv["metadata"]["name"]], dv["metadata"]["name"]
    return done


def _paused(stage, args):
    p = subprocess.Popen([sys.executable, "-c", PAUSING_CLI, stage, *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    assert line == "STAGE\n", (line, p.stderr.read())
    return p


def _kill(p):
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=30)


def _retry_completes(state, what, name, image):
    r = subprocess.run(CLI + _upload_args(state, what, name, image), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert f"Using existing PVC default/{name}" in r.stdout
    assert _check_consistent(state, image)[name] is True


def test_kill_during_the_copy_leaves_it_unfinished_and_the_same_command_resumes(tmp_path):
    state, image = tmp_path / "state.db", _image(tmp_path, 3 << 20)
    for what, name in (("dv", "d1"), ("pvc", "p1")):
        _kill(_paused("copy", _upload_args(state, what, name, image)))
        assert _check_consistent(state, image)[name] is False
        _retry_completes(state, what, name, image)


def test_kill_after_the_rename_before_the_status_keeps_the_bytes_and_resumes(tmp_path):
    state, image = tmp_path / "state.db", _image(tmp_path, 1 << 20)
    _kill(_paused("finish", _upload_args(state, "dv", "d1", image)))
    with Cluster.open(str(state)) as c:
        pvc = c.get("PersistentVolumeClaim", "d1")
        assert c.images.exists(pvc["metadata"]["uid"])          # a live claim's image is never swept
        assert c.get("DataVolume", "d1")["status"]["phase"] == "UploadReady"
    assert _check_consistent(state, image) == {"d1": False}
    _retry_completes(state, "dv", "d1", image)


def test_kill_at_random_moments_never_leaves_a_false_success(tmp_path):
    state, image = tmp_path / "state.db", _image(tmp_path, 32 << 20)
    rng = random.Random(17)
    for i in range(6):
        name = f"r{i}"
        p = subprocess.Popen(CLI + _upload_args(state, "dv", name, image), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(rng.uniform(0.0, 1.5))        # the subject: a kill at a random moment of the upload
        p.send_signal(signal.SIGKILL)
        p.communicate(timeout=60)
        done = _check_consistent(state, image)
        if name in done and not done[name]:
            _retry_completes(state, "dv", name, image)


def _limit_file_size():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)       # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))


def test_a_write_that_fails_midway_undoes_the_upload_and_a_retry_works(tmp_path):
    state, image = tmp_path / "state.db", _image(tmp_path, 3 << 20)
    with Cluster.open(str(state)):
        pass       # the state file itself is made without the limit
    r = subprocess.run(CLI + _upload_args(state, "dv", "d1", image), capture_output=True, text=True, timeout=60,
                       preexec_fn=_limit_file_size)
    assert r.returncode == 1
    assert r.stderr.startswith("error uploading image: [Errno 27] File too large"), r.stderr
    assert _check_consistent(state, image) == {}
    with Cluster.open(str(state)) as c:
        assert list(c.list("DataVolume")) == []
    r = subprocess.run(CLI + _upload_args(state, "dv", "d1", image), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert _check_consistent(state, image) == {"d1": True}


def test_concurrent_uploads_and_openings_all_complete(tmp_path):
    state, image = tmp_path / "state.db", _image(tmp_path, 4 << 20)
    with Cluster.open(str(state)):
        pass
    procs = [subprocess.Popen(CLI + _upload_args(state, what, f"c{i}", image), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
             for i, what in enumerate(["dv", "pvc", "dv", "pvc"])]
    readers = [subprocess.Popen(CLI + ["--state", str(state), "get", "pvc"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True) for _ in range(3)]
    for p in procs + readers:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    assert _check_consistent(state, image) == {f"c{i}": True for i in range(4)}


def test_a_success_recorded_without_its_image_can_be_uploaded_again(tmp_path):
    """A state file from before uploads were atomic: the status said Succeeded, the bytes never came."""
    state, image = tmp_path / "state.db", _image(tmp_path, 4096)
    for what, name in (("pvc", "p1"), ("dv", "d1")):
        r = subprocess.run(CLI + _upload_args(state, what, name, image), capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        with Cluster.open(str(state)) as c:
            c.images.path(c.get("PersistentVolumeClaim", name)["metadata"]["uid"]).unlink()
        _kill(_paused("finish", _upload_args(state, what, name, image)))
        assert _check_consistent(state, image)[name] is False      # the DataVolume no longer says Succeeded
        _retry_completes(state, what, name, image)
        r = subprocess.run(CLI + _upload_args(state, what, name, image), capture_output=True, text=True, timeout=60)
        assert (r.returncode, r.stderr) == (1, f"PVC {name} already successfully imported/cloned/updated\n")
