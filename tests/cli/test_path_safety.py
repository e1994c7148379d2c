"""No object name reaches the file system: whatever the name or namespace of any kind, no command
(apply, delete, get, describe, image-upload, start/stop) reads, writes or deletes a file outside
the state file and its image directory, and the image directory holds only uid-named files.

Hostile names are tried as the API server would see them (refused by its name checks) and as
rows planted in the state file directly (a file written before those checks existed, or edited by
hand): deleting such objects, their owners or their namespace still touches nothing outside.
"""
from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import uuid

import yaml

from instancetype.api import kinds
from instancetype.controller import Cluster

from ._helpers import run

UID_FILE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _hostile(outside) -> list[str]:
    return [f"../../../../../../../..{outside}/VICTIM", "../outside/VICTIM", "..", ".", "a/b", f"{outside}/VICTIM",
            "..%2F..%2Foutside%2FVICTIM", "a\\b", "-rf", " ", "vmé", "MyVM", "x" * 300]


def _snapshot(root, state) -> dict:
    """Every file under `root` but the state file and its images, with a hash of its bytes."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.name.startswith(state.name) or state.name + ".images" in p.parts:
            continue
        out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
    return out


def _check_images(state) -> None:
    images = state.parent / (state.name + ".images")
    if images.exists():
        for p in images.iterdir():
            assert p.is_file() and UID_FILE.fullmatch(p.name), p


def _setup(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "VICTIM").write_bytes(b"precious")
    state = tmp_path / "work" / "state.db"
    state.parent.mkdir()
    image = tmp_path / "small.img"
    image.write_bytes(b"\0" * 4096)
    return outside, state, image


def _obj(res: kinds.Resource, name: str, namespace: str | None = None) -> dict:
    meta = {"name": name}
    if namespace is not None and res.namespaced:
        meta["namespace"] = namespace
    return {"apiVersion": res.api_version, "kind": res.kind, "metadata": meta, "spec": {}}


def test_no_name_of_any_kind_reaches_the_file_system_through_the_cli(tmp_path):
    outside, state, image = _setup(tmp_path)
    hostile = _hostile(outside)
    assert run(state, "image-upload", "dv", "real", "--size=1Mi", f"--image-path={image}").code == 0
    docs = [_obj(res, name) for res in kinds.RESOURCES for name in hostile]
    docs += [_obj(res, "ok", namespace=name) for res in kinds.RESOURCES if res.namespaced for name in hostile]
    manifest = tmp_path / "hostile.yaml"
    manifest.write_text(yaml.safe_dump_all(docs))
    before = _snapshot(tmp_path, state)
    r = run(state, "apply", "-f", str(manifest))
    assert r.code == 1 and "created" not in r.out, r.out
    assert r.err.count("is invalid") == len(docs)
    r = run(state, "delete", "-f", str(manifest))
    assert r.code == 1 and "deleted" not in r.out
    for res in kinds.RESOURCES:
        for verb in ("get", "describe", "delete"):
            r = run(state, verb, res.plural, *hostile)
            assert r.code == 1, (verb, res.kind, r.out)
    for name in hostile:
        for what in ("dv", "pvc"):
            r = run(state, "image-upload", what, name, "--size=1Mi", f"--image-path={image}")
            assert r.code == 1 and "completed successfully" not in r.out, (name, r.out)
            r = run(state, "image-upload", what, "ok", "-n", name, "--size=1Mi", f"--image-path={image}")
            assert r.code == 1 and "completed successfully" not in r.out, (name, r.out)
            r = run(state, "image-upload", what, "--pvc-name", name, f"--image-path={image}")
            assert r.code == 1 and "completed successfully" not in r.out, (name, r.out)
        for verb in ("start", "stop", "restart"):
            assert run(state, verb, name).code == 1
        for args in (["expand", "--vm", name], ["get", f"vm/{name}"], ["describe", "vm", name],
                     ["wait", "--for=condition=Ready", f"vm/{name}", "--timeout=0s"], ["migrate-vm", name]):
            assert run(state, *args).code != 0, args
    assert _snapshot(tmp_path, state) == before
    _check_images(state)
    assert run(state, "get", "dv", "real").code == 0


def _plant(state, kind: str, namespace: str, name: str, owner: dict | None = None) -> dict:
    """Insert an object row the way an older instancetype (no name checks) could have stored it."""
    res = kinds.BY_KIND[kind]
    uid = str(uuid.uuid4())
    meta = {"name": name, "uid": uid, "resourceVersion": "1"}
    if res.namespaced:
        meta["namespace"] = namespace
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": owner["kind"],
                                    "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
                                    "controller": True}]
    obj = {"apiVersion": res.api_version, "kind": kind, "metadata": meta, "spec": {}}
    db = sqlite3.connect(state)
    with db:
        cur = db.execute("INSERT INTO changes (type, kind, namespace, name, uid) VALUES ('ADDED',?,?,?,?)",
                         (kind, namespace if res.namespaced else "", name, uid))
        meta["resourceVersion"] = str(cur.lastrowid)
        oid = db.execute("INSERT INTO objects (kind, namespace, name, uid, rv, data) VALUES (?,?,?,?,?,?)",
                         (kind, namespace if res.namespaced else "", name, uid, cur.lastrowid,
                          json.dumps(obj))).lastrowid
        if owner is not None:
            db.execute("INSERT INTO owners (owner_uid, oid) VALUES (?,?)", (owner["metadata"]["uid"], oid))
    db.close()
    return obj


def test_deleting_planted_objects_with_hostile_names_touches_nothing_outside(tmp_path):
    outside, state, image = _setup(tmp_path)
    hostile = _hostile(outside)
    with Cluster.open(str(state)) as c:
        c.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "victims"}})
    planted = []
    for ns in ("default", "victims"):
        for name in hostile:
            dv = _plant(state, "DataVolume", ns, name)
            planted.append(_plant(state, "PersistentVolumeClaim", ns, name, owner=dv))
            planted.append(dv)
    manifest = tmp_path / "planted.yaml"       # the repro: `delete -f pvc.yaml` of such a name
    manifest.write_text(yaml.safe_dump_all([{k: v for k, v in o.items() if k != "metadata"} |
                                            {"metadata": {"name": o["metadata"]["name"],
                                                          "namespace": o["metadata"]["namespace"]}}
                                            for o in planted]))
    before = _snapshot(tmp_path, state)

    with Cluster.open(str(state)) as c:
        for obj in planted:                 # readable by the Python API
            meta = obj["metadata"]
            assert c.get(obj["kind"], meta["name"], meta.get("namespace"))["metadata"]["uid"] == meta["uid"]
        for obj in planted[:6]:             # DataVolumes and PersistentVolumeClaims, owned ones first
            meta = obj["metadata"]
            c.delete(obj["kind"], meta["name"], meta.get("namespace"))
    r = run(state, "delete", "-f", str(manifest))
    assert r.code == 1 and "invalid resource name" in r.err
    for name in hostile:
        run(state, "delete", "dv", name)
        run(state, "delete", "pvc", name, "-n", "victims")
    run(state, "delete", "dv", "--all")   # names client-go refuses in a path are reported, the rest go
    assert run(state, "delete", "namespace", "victims").code == 0
    with Cluster.open(str(state)) as c:
        for dv in list(c.list("DataVolume")):
            c.delete("DataVolume", dv["metadata"]["name"], dv["metadata"]["namespace"])
        assert c.sweep_images() == 0
        assert list(c.list("DataVolume")) == [] and list(c.list("PersistentVolumeClaim")) == []
    assert _snapshot(tmp_path, state) == before
    _check_images(state)
    assert (outside / "VICTIM").read_bytes() == b"precious"


def test_an_image_file_is_only_ever_named_by_a_uuid(tmp_path):
    import io

    import pytest

    from instancetype.controller.images import Images
    from instancetype.errors import StoreError

    images = Images(tmp_path / "images")
    for uid in ("../x", "..", "/etc/passwd", "", None, "0" * 36, str(uuid.uuid4()).upper()):
        with pytest.raises(StoreError):
            images.write(uid, io.BytesIO(b"x"))
        images.remove([uid])              # ignored, never a path
    assert list(tmp_path.iterdir()) == []       # refused before anything was made


def test_python_api_refuses_every_hostile_name_before_storing(tmp_path):
    outside, state, _ = _setup(tmp_path)
    before = _snapshot(tmp_path, state)
    from instancetype.errors import StoreError

    with Cluster.open(str(state)) as c:
        for res in kinds.RESOURCES:
            for name in _hostile(outside):
                for obj in (_obj(res, name), _obj(res, "ok", namespace=name)):
                    if obj["metadata"]["name"] == "ok" and not res.namespaced:
                        continue
                    for write in (c.apply, c.create, c.store.create):
                        try:
                            write(obj)
                        except StoreError as e:
                            assert "is invalid" in str(e), (res.kind, name, str(e))
                        else:
                            raise AssertionError(f"{res.kind} {name!r} stored")
    assert _snapshot(tmp_path, state) == before
