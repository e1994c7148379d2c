"""expand: the pipeline, lookups, errors, quantities (pkg/instancetype/expand/expand.go Expand;
pkg/virt-api/rest/expand_test.go vectors)."""
from __future__ import annotations

import copy

import pytest
from tests import builders

from instancetype import expand
from instancetype.errors import ConflictError, DecodeError, DefaultsError, NotFoundError, UnexpectedKindError

IT = {"cpu": {"guest": 2}, "memory": {"guest": "128Mi"}}
PREF = {"cpu": {"preferredCPUTopology": "cores"}, "devices": {"preferredDiskBus": "virtio"}}


def make_vm(template_spec=None, it=True, pref=True, **spec) -> dict:
    """Expand's VM: a container disk, the namespaced matchers `it` and `pref` (False: none)."""
    if template_spec is None:
        template_spec = {"domain": {}, "volumes": [{"name": "volumeName", "containerDisk": {"image": "img:latest"}}]}
    return builders.vm(template=template_spec, runStrategy="Always",
                       instancetype={"name": "it", "kind": "VirtualMachineInstancetype"} if it is True else it or None,
                       preference={"name": "pref", "kind": "VirtualMachinePreference"} if pref is True else pref or None,
                       **spec)


def test_expand_basic():
    vm = make_vm()
    before = copy.deepcopy(vm)
    out = expand(vm, instancetype=IT, preference=PREF)
    assert vm == before
    assert "instancetype" not in out["spec"] and "preference" not in out["spec"]
    assert out["spec"]["template"]["spec"] == {
        "architecture": "amd64", "evictionStrategy": "None", "networks": [{"name": "default", "pod": {}}],
        "volumes": [{"name": "volumeName", "containerDisk": {"image": "img:latest", "imagePullPolicy": "Always"}}],
        "domain": {"cpu": {"sockets": 1, "cores": 2, "threads": 1}, "memory": {"guest": "128Mi"},
                   "machine": {"type": "q35"}, "resources": {},
                   "devices": {"disks": [{"name": "volumeName", "disk": {"bus": "virtio"}}],
                               "interfaces": [{"name": "default", "bridge": {}}]}}}
    assert not out["spec"]["template"].get("metadata", {}).get("annotations")


def test_expand_conflict():
    vm = make_vm({"domain": {"cpu": {"sockets": 4}}})
    with pytest.raises(ConflictError) as e:
        expand(vm, instancetype=IT, preference=PREF)
    assert str(e.value) == "VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected instance type"
    assert e.value.fields == ["spec.template.spec.domain.cpu.sockets"]


def test_expand_noop_keeps_vm_but_canonical_quantities():
    vm = make_vm({"domain": {"memory": {"guest": "1.5Gi"}, "resources": {"requests": {"cpu": "2000m"}}}},
                 it=False, pref=False,
                 dataVolumeTemplates=[{"metadata": {"name": "d"},
                                       "spec": {"storage": {"resources": {"requests": {"storage": "1.5Ti"}}}}}])
    out = expand(vm)
    assert out["spec"]["template"]["spec"] == {"domain": {"memory": {"guest": "1536Mi"},
                                                          "resources": {"requests": {"cpu": "2"}}}}
    assert out["spec"]["dataVolumeTemplates"][0]["spec"]["storage"]["resources"]["requests"]["storage"] == "1536Gi"
    assert vm["spec"]["template"]["spec"]["domain"]["memory"]["guest"] == "1.5Gi"


def test_expand_given_whole_objects():
    out = expand(make_vm(), instancetype={"kind": "VirtualMachineInstancetype", "spec": IT},
                 preference={"metadata": {"name": "p"}, "spec": PREF})
    assert out["spec"]["template"]["spec"]["domain"]["cpu"]["cores"] == 2


def test_expand_finds_in_objects_and_reports_lookup_errors():
    objects = [{"kind": "VirtualMachineInstancetype", "metadata": {"name": "it"}, "spec": IT},
               {"kind": "VirtualMachinePreference", "metadata": {"name": "pref", "namespace": "ns"}, "spec": PREF}]
    out = expand(make_vm(), objects=objects)
    assert out["spec"]["template"]["spec"]["domain"]["cpu"]["cores"] == 2
    with pytest.raises(NotFoundError) as e:
        expand(make_vm(), objects=objects[1:])
    assert str(e.value) == 'virtualmachineinstancetypes.instancetype.kubevirt.io "it" not found'
    with pytest.raises(UnexpectedKindError) as e:
        expand(make_vm(it={"name": "it", "kind": "vmf"}), objects=objects)
    assert str(e.value) == "got unexpected kind in InstancetypeMatcher: vmf"


def test_expand_preference_only_and_overcommit():
    out = expand(make_vm({"domain": {"cpu": {"cores": 4}}}, it=False), preference=PREF)
    assert out["spec"]["template"]["spec"]["domain"]["cpu"] == {"cores": 4}
    out = expand(make_vm(pref=False), instancetype={"cpu": {"guest": 1}, "memory": {"guest": "1e9", "overcommitPercent": 20}})
    assert out["spec"]["template"]["spec"]["domain"]["resources"]["requests"]["memory"] == "800e6"


def test_expand_config_errors_and_values():
    with pytest.raises(DefaultsError) as e:
        expand(make_vm(), instancetype=IT, preference=PREF, config={"network": {"defaultNetworkInterface": "slirp"}})
    assert str(e.value) == "slirp interface is deprecated as of v1.3"
    out = expand(make_vm(), instancetype=IT, preference=PREF,
                 config={"cpuRequest": "250m", "evictionStrategy": "LiveMigrate",
                         "network": {"defaultNetworkInterface": "masquerade"}})
    ts = out["spec"]["template"]["spec"]
    assert ts["evictionStrategy"] == "LiveMigrate"
    assert ts["domain"]["resources"]["requests"] == {"cpu": "250m"}
    assert ts["domain"]["devices"]["interfaces"] == [{"name": "default", "masquerade": {}}]


def test_expand_removes_status_refs():
    vm = make_vm()
    vm["status"] = {"instancetypeRef": {"name": "it"}, "preferenceRef": {"name": "pref"}, "ready": True}
    assert expand(vm, instancetype=IT, preference=PREF)["status"] == {"ready": True}


def test_expand_annotations_into_template_metadata():
    it = dict(IT, annotations={"a": "1"})
    out = expand(make_vm(), instancetype=it, preference={"annotations": {"a": "2", "b": "2"}})
    assert out["spec"]["template"]["metadata"]["annotations"] == {"a": "1", "b": "2"}


def test_expand_bad_shapes_are_errors():
    with pytest.raises(DecodeError):
        expand({"spec": {"instancetype": {"name": "x"}, "template": {"spec": {"domain": []}}}}, instancetype=IT)
    with pytest.raises(DecodeError):
        expand(make_vm(), instancetype={"cpu": {"guest": "two"}, "memory": {"guest": "1Gi"}}, preference=PREF)


def test_specs_mutated_between_calls_are_read_again():
    it = {"cpu": {"guest": 2}, "memory": {"guest": "128Mi"}}
    pref = {"cpu": {"preferredCPUTopology": "cores"}}
    first = expand(make_vm(), instancetype=it, preference=pref)
    it["cpu"]["guest"] = 4
    pref["cpu"]["preferredCPUTopology"] = "threads"
    second = expand(make_vm(), instancetype=it, preference=pref)
    assert first["spec"]["template"]["spec"]["domain"]["cpu"] == {"sockets": 1, "cores": 2, "threads": 1}
    assert second["spec"]["template"]["spec"]["domain"]["cpu"] == {"sockets": 1, "cores": 1, "threads": 4}


def test_output_shares_nothing_with_inputs():
    it = dict(IT, gpus=[{"name": "g", "deviceName": "d"}], nodeSelector={"a": "b"})
    vm = make_vm()
    out = expand(vm, instancetype=it, preference=PREF)
    out["spec"]["template"]["spec"]["nodeSelector"]["x"] = "y"
    out["spec"]["template"]["spec"]["domain"]["devices"]["gpus"][0]["name"] = "changed"
    again = expand(vm, instancetype=it, preference=PREF)
    assert again["spec"]["template"]["spec"]["nodeSelector"] == {"a": "b"}
    assert again["spec"]["template"]["spec"]["domain"]["devices"]["gpus"][0]["name"] == "g"


def test_quantities_canonicalised_once_keeping_their_format():
    # 1953.125Ki is 2000000 bytes in BinarySI: printed "2000000" (not "2M"), also when copied
    vm = make_vm({"domain": {"resources": {"requests": {"memory": "1953.125Ki"}}}}, it=False)
    ts = expand(vm, preference=PREF)["spec"]["template"]["spec"]
    assert ts["domain"]["resources"]["requests"]["memory"] == "2000000"
    assert ts["domain"]["memory"]["guest"] == "2000000"
    ts = expand(make_vm(pref=False), instancetype={"cpu": {"guest": 1},
                "memory": {"guest": "1953.125Ki", "overcommitPercent": 50}})["spec"]["template"]["spec"]
    assert ts["domain"]["memory"]["guest"] == "2000000"
    assert ts["domain"]["resources"]["requests"]["memory"] == "1000000"   # BinarySI, not "1M"
