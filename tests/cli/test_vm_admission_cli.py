"""The whole VM admission through the command line: `apply --validate` (kubectl's field
validation: strict, warn, ignore), VM rules refused as the VM webhooks refuse them, and offline
`expand -f` / `validate -f` finding the built-in catalogue."""
from __future__ import annotations

import json

from ._helpers import get_json, run

VM_UNKNOWN = """
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: vm1
spec:
  runStrategy: Halted
  cpus: 2
  template:
    spec:
      domain:
        memory: {guest: 1Gi}
        devices:
          disks:
          - name: root
            size: 10Gi
      volumes:
      - name: root
        containerDisk: {image: quay.io/containerdisks/fedora:41}
"""

VM_U1 = """
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: vm2
spec:
  runStrategy: Halted
  instancetype: {name: u1.medium}
  preference: {name: fedora}
  template:
    spec:
      domain:
        devices: {}
      volumes:
      - name: root
        containerDisk: {image: quay.io/containerdisks/fedora:41}
"""


def test_apply_refuses_unknown_fields_by_default(target):
    state = target
    r = run(state, "apply", "-f", "-", stdin=VM_UNKNOWN)
    assert r.code == 1 and r.out == ""
    assert r.err == ('Error from server (BadRequest): error when creating "STDIN": VirtualMachine in version "v1" '
                     'cannot be handled as a VirtualMachine: strict decoding error: unknown field "spec.cpus", '
                     'unknown field "spec.template.spec.domain.devices.disks[0].size"\n')
    assert run(state, "apply", "-f", "-", "--validate=true", stdin=VM_UNKNOWN).code == 1


def test_apply_validate_warn_drops_them_with_warnings(target):
    state = target
    r = run(state, "apply", "-f", "-", "--validate=warn", stdin=VM_UNKNOWN)
    assert (r.code, r.out) == (0, "virtualmachine.kubevirt.io/vm1 created\n")
    assert r.err == ('Warning: unknown field "spec.cpus"\n'
                     'Warning: unknown field "spec.template.spec.domain.devices.disks[0].size"\n')
    stored = get_json(state, "vm", "vm1")
    assert "cpus" not in stored["spec"]
    assert stored["spec"]["template"]["spec"]["domain"]["devices"]["disks"] == [{"name": "root"}]


def test_apply_validate_ignore_drops_them_silently(target):
    state = target
    for value in ("ignore", "false"):
        r = run(state, "apply", "-f", "-", f"--validate={value}", stdin=VM_UNKNOWN)
        assert r.code == 0 and r.err == ""


def test_apply_validate_bad_value(target):
    r = run(target, "apply", "-f", "-", "--validate=maybe", stdin=VM_UNKNOWN)
    assert r.code == 1
    assert r.err == ('error: invalid - validate option "maybe"; must be one of: strict (or true), warn, '
                     'ignore (or false)\n')


def test_apply_refuses_what_the_vm_webhook_refuses(target):
    vm = VM_UNKNOWN.replace("  cpus: 2\n", "").replace("            size: 10Gi\n", "").replace("Halted", "always")
    r = run(target, "apply", "-f", "-", stdin=vm)
    assert r.code == 1
    assert r.err == "The request is invalid: spec.runStrategy: Invalid RunStrategy (always)\n"


def test_offline_expand_finds_the_builtin_catalogue(tmp_path):
    path = tmp_path / "vm.yaml"
    path.write_text(VM_U1)
    r = run(tmp_path / "s.db", "expand", "-f", str(path), "-o", "json")
    assert r.code == 0, r.err
    expanded = json.loads(r.out)
    assert expanded["spec"]["template"]["spec"]["domain"]["memory"] == {"guest": "4Gi"}
    r = run(tmp_path / "s.db", "expand", "-f", str(path), "--no-builtin-catalog")
    assert r.code == 1
    assert 'virtualmachineclusterinstancetypes.instancetype.kubevirt.io "u1.medium" not found' in r.err


def test_offline_validate_uses_the_catalogue_and_reports_unknown_fields(tmp_path):
    path = tmp_path / "vm.yaml"
    path.write_text(VM_U1)
    r = run(tmp_path / "s.db", "validate", "-f", str(path))
    assert (r.code, r.out, r.err) == (0, "virtualmachine.kubevirt.io/vm2 valid\n", "")
    bad = tmp_path / "bad.yaml"
    bad.write_text(VM_UNKNOWN)
    r = run(tmp_path / "s.db", "validate", "-f", str(bad))
    assert r.code == 1
    assert "spec.cpus in body is a forbidden property" in r.err
