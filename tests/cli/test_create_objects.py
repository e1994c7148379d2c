"""kubectl's half of `create`: `create -f`, `create namespace`, an unknown kind (issue 29, item 1)."""
from __future__ import annotations

from ._helpers import INSTANCETYPE, on_cluster, run


def test_create_from_stdin_then_already_exists(target):
    r = run(target, "create", "-f", "-", stdin=INSTANCETYPE)
    assert (r.code, r.out, r.err) == (0, "virtualmachineinstancetype.instancetype.kubevirt.io/small created\n", "")
    stored = run(target, "get", "vmit", "small", "-o", "yaml")
    assert "last-applied-configuration" not in stored.out     # create, not apply
    r = run(target, "create", "-f", "-", stdin=INSTANCETYPE)
    assert r.code == 1
    assert r.err == ('Error from server (AlreadyExists): error when creating "STDIN": '
                     'virtualmachineinstancetypes.instancetype.kubevirt.io "small" already exists\n')


def test_create_pipes_from_virtctl_create(target, tmp_path):
    manifest = run(target, "create", "preference", "--name", "pref", "--namespaced")
    assert manifest.code == 0, manifest.err
    path = tmp_path / "pref.yaml"
    path.write_text(manifest.out)
    r = run(target, "create", "-f", str(path))
    assert (r.code, r.out) == (0, "virtualmachinepreference.instancetype.kubevirt.io/pref created\n"), r.err


def test_create_namespace(target):
    name = "team-a-" + ("c" if on_cluster(target) else "e")
    r = run(target, "create", "namespace", name)
    assert (r.code, r.out) == (0, f"namespace/{name} created\n"), r.err
    r = run(target, "create", "ns", name)
    assert (r.code, r.err) == (1, f'Error from server (AlreadyExists): namespaces "{name}" already exists\n')
    assert run(target, "get", "ns", name).code == 0
    r = run(target, "create", "namespace")
    assert r.code == 1 and r.err.startswith("error: exactly one NAME is required, got 0\n")
    if on_cluster(target):
        run(target, "delete", "ns", name)


def test_an_unknown_kind_is_an_error(target):
    r = run(target, "create", "vmm")
    assert (r.code, r.out) == (1, "")
    assert r.err == "error: Unexpected args: [vmm]\nSee 'instancetype create -h' for help and examples\n"


def test_help_suggests_only_commands_that_exist(target):
    r = run(target, "create", "instancetype", "--help")
    assert "kubectl" not in r.out
    piped = [line.strip() for line in r.out.splitlines() if "| " in line]
    assert piped and all(line.endswith("| instancetype create -f -") for line in piped)
    r = run(target, "create")
    assert r.code == 0 and "namespace" in r.out and "--filename" in r.out
