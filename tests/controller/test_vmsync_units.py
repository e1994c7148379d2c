"""The pure parts of the day-2 steps: ValidateLiveUpdateMemory's reasons, migratability, the
start revision's spec, the rollout switch."""
from __future__ import annotations

import pytest

from instancetype.api.quantity import Quantity
from instancetype.controller import migratable
from instancetype.controller.vmsync.generation import revision_name, revision_spec
from instancetype.controller.vmsync.live_update import validate_live_update_memory
from instancetype.controller.vmsync.restart_required import live_update_enabled


def _spec(guest="2Gi", arch="amd64", **domain):
    return {"architecture": arch, "domain": {"memory": {"guest": guest}, **domain}}


@pytest.mark.parametrize(("spec", "max_guest", "reason"), [
    (_spec(), "8Gi", None),
    (_spec(cpu={"realtime": {}}), "8Gi", "Memory hotplug is not compatible with realtime VMs"),
    (_spec(cpu={"numa": {"guestMappingPassthrough": {}}}), "8Gi",
     "Memory hotplug is not compatible with guest mapping passthrough"),
    (_spec(launchSecurity={"sev": {}}), "8Gi", "Memory hotplug is not compatible with encrypted VMs"),
    ({"architecture": "amd64", "domain": {}}, "8Gi", "Guest memory must be configured when memory hotplug is enabled"),
    (_spec(), None, "Max guest memory must be configured when memory hotplug is enabled"),
    (_spec("9Gi"), "8Gi", "Guest memory is greater than the configured maxGuest memory"),
    (_spec("1025Mi"), "8Gi", "Guest memory must be 2Mi aligned"),
    (_spec("2Gi", memory={"guest": "3Gi", "hugepages": {"pageSize": "1Gi"}}), "8Gi", None),
    (_spec("2Gi"), "8193Mi", "MaxGuest must be 2Mi aligned"),
    (_spec(arch="arm64"), "8Gi", "Memory hotplug is only available for x86_64 VMs"),
    (_spec("512Mi"), "8Gi", "Memory hotplug is only available for VMs with at least 1Gi of guest memory"),
])
def test_validate_live_update_memory(spec, max_guest, reason):
    assert validate_live_update_memory(spec, Quantity.parse(max_guest) if max_guest else None) == reason


def _vmi(interface, **spec):
    return {"spec": {"domain": {"devices": {"interfaces": [{"name": "default", **interface}]}},
                     "networks": [{"name": "default", "pod": {}}], **spec}}


def _live_migratable(vmi, claims=None, config=None):
    c = migratable.condition(vmi, claims or (lambda name: None), config)
    return c["status"] if c["status"] == "True" else (c["reason"], c["message"])


NOT_POD = "cannot migrate VMI which does not use masquerade or a migratable plugin to connect to the pod network"
SHARED = "live migration requires that all PVCs must be shared (using ReadWriteMany access mode)"


def test_live_migratable_as_virt_handler_computes_it():
    assert _live_migratable(_vmi({"masquerade": {}})) == "True"
    assert _live_migratable(_vmi({"bridge": {}})) == ("InterfaceNotLiveMigratable", NOT_POD)
    allowed = _vmi({"bridge": {}})
    allowed["metadata"] = {"annotations": {migratable.BRIDGE_MIGRATION_ANNOTATION: ""}}
    assert _live_migratable(allowed) == "True"
    plugin = _vmi({"binding": {"name": "p"}})
    assert _live_migratable(plugin) == ("InterfaceNotLiveMigratable", NOT_POD)
    assert _live_migratable(plugin, config={"network": {"binding": {"p": {"migration": {}}}}}) == "True"
    assert _live_migratable(_vmi({"masquerade": {}}, volumes=[{"name": "d", "hostDisk": {"path": "/x"}}])) == (
        "DisksNotLiveMigratable", "cannot migrate VMI with non-shared HostDisk")
    pvc = _vmi({"masquerade": {}}, volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "c"}}])
    assert _live_migratable(pvc) == (
        "DisksNotLiveMigratable", f"cannot migrate VMI: Unable to determine if PVC c is shared, {SHARED}")
    assert _live_migratable(pvc, lambda name: ["ReadWriteOnce"]) == (
        "DisksNotLiveMigratable", f"cannot migrate VMI: PVC c is not shared, {SHARED}")
    assert _live_migratable(pvc, lambda name: ["ReadWriteMany"]) == "True"
    gpu = _vmi({"masquerade": {}})
    gpu["spec"]["domain"]["devices"]["gpus"] = [{"name": "g", "deviceName": "nvidia.com/GRID"}]
    assert _live_migratable(gpu) == (
        "HostDeviceNotLiveMigratable", "VMI specifies a GPU but feature gate VGPULiveMigration is not enabled")
    sev = _vmi({"masquerade": {}})
    sev["spec"]["domain"]["launchSecurity"] = {"snp": {}}
    assert _live_migratable(sev) == ("SEVNotLiveMigratable", "VMI uses SEV")
    # the interface is checked first
    assert _live_migratable(_vmi({"bridge": {}}, volumes=[{"name": "d", "hostDisk": {}}]))[0] == \
        "InterfaceNotLiveMigratable"


def test_the_condition_is_read_back():
    assert migratable.migratable({"status": {"conditions": [{"type": "LiveMigratable", "status": "True"}]}})
    assert not migratable.migratable({"status": {"conditions": [{"type": "LiveMigratable", "status": "False"}]}})
    assert not migratable.migratable({})


def test_the_start_revision_holds_the_spec_with_the_pinned_revisions():
    vm = {"spec": {"instancetype": {"name": "it"}, "preference": {"name": "p"}, "template": {}},
          "status": {"instancetypeRef": {"name": "it", "controllerRevisionRef": {"name": "vm-it-1"}}}}
    assert revision_spec(vm) == {"instancetype": {"name": "it", "revisionName": "vm-it-1"},
                                 "preference": {"name": "p"}, "template": {}}
    assert revision_name("u", 3) == "revision-start-vm-u-3"


def test_live_update_is_the_default_rollout():
    assert live_update_enabled(None) and live_update_enabled({"vmRolloutStrategy": "LiveUpdate"})
    assert not live_update_enabled({"vmRolloutStrategy": "Stage"})
