"""`instancetype migrate-vm`, run as a real process."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import yaml

import instancetype
from instancetype import catalog
from instancetype.catalog.migrate import Migration
from tests.catalog.test_migrate import assert_reproduces, fedora_vm, vm, windows_vm


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, INSTANCETYPE_STATE=os.devnull + ".no-such-store")
    return subprocess.run([sys.executable, "-m", "instancetype", "migrate-vm", *args], input=stdin,
                          capture_output=True, text=True, env=env, timeout=60)


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def as_migration(out: dict) -> Migration:
    """The catalogue objects the printed VM references, for the VMI comparison."""
    by_name = {(o["kind"], o["metadata"]["name"]): o for o in catalog.instancetypes() + catalog.preferences()}
    it = by_name[(out["spec"]["instancetype"]["kind"], out["spec"]["instancetype"]["name"])]
    pref_ref = out["spec"].get("preference")
    pref = by_name[(pref_ref["kind"], pref_ref["name"])] if pref_ref else None
    return Migration(out, it, pref, [])


def assert_one_error_line(proc: subprocess.CompletedProcess, *fragments: str) -> str:
    assert proc.returncode == 1
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in proc.stderr
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


def test_fedora_yaml(tmp_path):
    original = fedora_vm()
    path = write(tmp_path, "legacy-vm.yaml", yaml.safe_dump(original, sort_keys=False))
    proc = run("-f", path)
    assert proc.returncode == 0, proc.stderr
    out = yaml.safe_load(proc.stdout)
    assert out["spec"]["instancetype"] == {"kind": "VirtualMachineClusterInstancetype", "name": "u1.medium"}
    assert out["spec"]["preference"] == {"kind": "VirtualMachineClusterPreference", "name": "fedora"}
    assert_reproduces(original, as_migration(out))
    changes = proc.stderr.splitlines()
    assert changes[0] == "spec.template.spec.domain.cpu: provided by virtualmachineclusterinstancetype/u1.medium"
    assert "spec.template.spec.domain.firmware: provided by virtualmachineclusterpreference/fedora" in changes
    assert all(": provided by virtualmachinecluster" in line for line in changes)


def test_windows_json_from_stdin():
    original = windows_vm()
    proc = run("-f", "-", "-o", "json", stdin=json.dumps(original))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["spec"]["instancetype"]["name"], out["spec"]["preference"]["name"]) == ("u1.2xmedium", "windows.11")
    assert_reproduces(original, as_migration(out))
    assert "spec.template.spec.domain.clock: provided by virtualmachineclusterpreference/windows.11" in \
        proc.stderr.splitlines()


def test_no_preference_is_a_warning(tmp_path):
    original = vm("tiny", {"domain": {"memory": {"guest": "2Gi"}, "devices": {}}})
    proc = run("-f", write(tmp_path, "tiny.yaml", yaml.safe_dump(original)))
    assert proc.returncode == 0, proc.stderr
    out = yaml.safe_load(proc.stdout)
    assert "preference" not in out["spec"]
    assert_reproduces(original, as_migration(out))
    assert proc.stderr.splitlines()[-1].startswith("Warning: ")


def test_unreproducible_vm_is_refused_with_the_reason(tmp_path):
    original = vm("odd", {"domain": {"cpu": {"sockets": 3}, "memory": {"guest": "5Gi"}, "devices": {}}})
    path = write(tmp_path, "odd.yaml", yaml.safe_dump(original))
    proc = run("-f", path)
    assert proc.returncode == 1 and proc.stdout == ""
    first, second = proc.stderr.splitlines()[:2]
    assert first.startswith(f"error: {path}") and 'cannot migrate VirtualMachine "odd" exactly' in first
    assert "no catalogue instancetype has 3 vCPUs and 5Gi of guest memory" in first
    assert second.startswith("the nearest pair is virtualmachineclusterinstancetype/u1.xlarge")


def test_not_a_virtual_machine(tmp_path):
    pref = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
            "metadata": {"name": "p"}, "spec": {}}
    path = write(tmp_path, "pref.yaml", yaml.safe_dump(pref))
    assert_one_error_line(run("-f", path), path, "expected a VirtualMachine", "VirtualMachinePreference")


def test_several_documents(tmp_path):
    path = write(tmp_path, "two.yaml", yaml.safe_dump(fedora_vm()) + "---\n" + yaml.safe_dump(windows_vm()))
    assert_one_error_line(run("-f", path), path, "expected one VirtualMachine, found 2")


def test_malformed_yaml(tmp_path):
    path = write(tmp_path, "bad.yaml", "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nspec: [\n")
    assert_one_error_line(run("-f", path), path, "invalid YAML")


def test_empty_and_missing_files(tmp_path):
    path = write(tmp_path, "empty.yaml", "")
    assert_one_error_line(run("-f", path), path, "no VirtualMachine")
    missing = str(tmp_path / "nope.yaml")
    assert_one_error_line(run("-f", missing), missing)


def test_badly_typed_vm(tmp_path):
    bad = vm("bad", {"domain": {"memory": {"guest": "lots"}, "devices": {}}})
    path = write(tmp_path, "bad.yaml", yaml.safe_dump(bad))
    assert_one_error_line(run("-f", path), path, 'cannot migrate VirtualMachine "bad"')


def test_usage_errors_exit_1():
    proc = run()
    assert proc.returncode == 1
    assert "-f" in proc.stderr and "Traceback" not in proc.stderr
    proc = run("-f", "-", "-o", "table", stdin="")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr


def test_migrated_vm_starts_against_the_catalogue(tmp_path):
    path = write(tmp_path, "legacy-vm.yaml", yaml.safe_dump(fedora_vm()))
    proc = run("-f", path)
    assert proc.returncode == 0, proc.stderr
    assert instancetype.build_vmi(yaml.safe_load(proc.stdout), objects=catalog.all_objects())


# --- the nearest pair ---------------------------------------------------------------------------
LEGACY = """\
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: legacy}
spec:
  runStrategy: Halted
  template:
    spec:
      domain:
        cpu: {cores: 2}
        resources: {requests: {memory: 4Gi}}
        devices: {}
"""


def test_nearest_is_shown_and_refused_without_consent(tmp_path):
    proc = run("-f", write(tmp_path, "legacy.yaml", LEGACY))
    assert proc.returncode == 1 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert lines[0].startswith('error: ') and 'cannot migrate VirtualMachine "legacy" exactly: ' in lines[0]
    assert lines[1].startswith("the nearest pair is virtualmachineclusterinstancetype/u1.2xmedium")
    assert "(catalog fit --cpu 2 --memory 4Gi)" in lines[1]
    assert "-    cores: 2" in lines and "+    sockets: 2" in lines
    assert lines[-1] == "rerun with --accept-nearest to write it"


def test_accept_nearest_writes_what_it_showed(tmp_path):
    proc = run("-f", write(tmp_path, "legacy.yaml", LEGACY), "--accept-nearest", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["spec"]["instancetype"] == {"kind": "VirtualMachineClusterInstancetype", "name": "u1.2xmedium"}
    dom = out["spec"]["template"]["spec"]["domain"]
    assert "cpu" not in dom and "resources" not in dom and "memory" not in dom
    assert "not exactly; the guest sees:" in proc.stderr and "-    cores: 2" in proc.stderr
    # the VMI it starts is the one the diff showed
    vmi = instancetype.build_vmi(out, objects=catalog.instancetypes() + catalog.preferences())
    assert vmi["spec"]["domain"]["cpu"]["sockets"] == 2 and vmi["spec"]["domain"]["memory"]["guest"] == "4Gi"
