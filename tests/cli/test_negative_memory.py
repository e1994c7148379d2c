"""A negative guest memory never reaches a running VM: refused where KubeVirt v1.9 refuses it.

No webhook of KubeVirt v1.9 looks at `domain.memory.guest` (only requests and limits, which an
overcommitted instancetype fills and VM admission then refuses); virt-launcher's converter
(vcpu.QuantityToByte) refuses the domain, so the VMI stays Scheduled with virt-handler's
Synchronized=False condition and the VM reads Starting (engine/launcher.py)."""
from __future__ import annotations

import json

from ._helpers import run

IT = """\
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineInstancetype
metadata: {name: neg}
spec:
  cpu: {guest: 1}
  memory: {guest: %s}
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: vm1}
spec:
  runStrategy: Always
  instancetype: {name: neg, kind: VirtualMachineInstancetype}
  template:
    spec:
      domain: {devices: {}}
"""


def _apply(tmp_path, guest: str):
    state = tmp_path / "s.db"
    f = tmp_path / "a.yaml"
    f.write_text(IT % guest)
    return state, run(state, "apply", "-f", str(f))


def test_negative_guest_memory_is_refused_by_the_launcher_not_run(tmp_path):
    state, r = _apply(tmp_path, "-1Gi")
    assert r.code == 0, r.err      # KubeVirt's API accepts both objects
    vmi = json.loads(run(state, "get", "vmi", "vm1", "-o", "json").out)
    assert vmi["status"]["phase"] == "Scheduled"
    sync = {c["type"]: c for c in vmi["status"]["conditions"]}["Synchronized"]
    assert sync["status"] == "False" and sync["reason"] == "Synchronizing with the Domain failed."
    assert sync["message"] == ('server error. command SyncVMI failed: '
                               '"Memory size \'-1Gi\' must be greater than or equal to 0"')
    vm = json.loads(run(state, "get", "vm", "vm1", "-o", "json").out)
    assert vm["status"]["printableStatus"] == "Starting" and "ready" not in vm["status"]
    assert any(c["type"] == "Synchronized" and "Memory size '-1Gi'" in c["message"]
               for c in vm["status"]["conditions"])
    table = run(state, "get", "vm")
    assert "Starting" in table.out and "Running" not in table.out


def test_negative_fraction_is_refused_as_quantity_to_byte_rounds_it(tmp_path):
    # AsInt64 fails on -0.5, Value() rounds it up to 0, and QuantityToByte subtracts 1.
    state, r = _apply(tmp_path, '"-0.5"')
    assert r.code == 0, r.err
    vmi = json.loads(run(state, "get", "vmi", "vm1", "-o", "json").out)
    assert vmi["status"]["phase"] == "Scheduled"


def test_overcommitted_negative_memory_is_refused_by_vm_admission(tmp_path):
    state = tmp_path / "s.db"
    f = tmp_path / "a.yaml"
    f.write_text((IT % "-1Gi").replace("memory: {guest: -1Gi}", "memory: {guest: -1Gi, overcommitPercent: 50}"))
    r = run(state, "apply", "-f", str(f))
    assert r.code == 1
    assert ("spec.template.spec.domain.resources.requests.memory '-512Mi': must be greater than or equal to 0."
            in r.err), r.err
    assert "No resources found" in run(state, "get", "vmi").err


def test_positive_guest_memory_still_runs(tmp_path):
    state, r = _apply(tmp_path, "1Gi")
    assert r.code == 0, r.err
    vmi = json.loads(run(state, "get", "vmi", "vm1", "-o", "json").out)
    assert vmi["status"]["phase"] == "Running"
