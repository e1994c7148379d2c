"""Inference of matchers from volumes (engine/infer.py; KubeVirt pkg/instancetype/infer)."""
from __future__ import annotations

import copy

import pytest
from tests import builders

import instancetype as it

IT_LABEL = "instancetype.kubevirt.io/default-instancetype"
IT_KIND_LABEL = "instancetype.kubevirt.io/default-instancetype-kind"
PREF_LABEL = "instancetype.kubevirt.io/default-preference"


def vm(volume: dict, *, memory="1Gi", **spec) -> dict:
    """A VM booting from `volume`, with the template memory inference drops."""
    return builders.vm(domain={"memory": {"guest": memory}}, volumes=[volume], **spec)


def obj(kind, name, labels=None, spec=None, namespace="ns"):
    o = {"kind": kind, "metadata": {"name": name, "namespace": namespace, "labels": labels or {}}}
    if spec is not None:
        o["spec"] = spec
    return o


PVC_VOLUME = {"name": "root", "persistentVolumeClaim": {"claimName": "disk"}}


def test_pvc_labels_give_name_and_kind():
    res = it.infer(vm(PVC_VOLUME, instancetype={"inferFromVolume": "root"}, preference={"inferFromVolume": "root"}),
                   [obj("PersistentVolumeClaim", "disk", {IT_LABEL: "u1.small", IT_KIND_LABEL: "VirtualMachineInstancetype",
                                                          PREF_LABEL: "fedora"})])
    assert res.instancetype == {"name": "u1.small", "kind": "VirtualMachineInstancetype"}
    assert res.preference == {"name": "fedora"}
    assert res.vm["spec"]["instancetype"] == res.instancetype
    assert res.vm["spec"]["template"]["spec"]["domain"]["memory"] == {"guest": "1Gi"}   # Reject keeps memory


def test_ignore_policy_success_drops_template_memory_for_instancetype_only():
    res = it.infer(vm(PVC_VOLUME, instancetype={"inferFromVolume": "root", "inferFromVolumeFailurePolicy": "Ignore"}),
                   [obj("PersistentVolumeClaim", "disk", {IT_LABEL: "u1.small"})])
    assert res.instancetype == {"name": "u1.small"}
    assert "memory" not in res.vm["spec"]["template"]["spec"]["domain"]
    res = it.infer(vm(PVC_VOLUME, preference={"inferFromVolume": "root", "inferFromVolumeFailurePolicy": "Ignore"}),
                   [obj("PersistentVolumeClaim", "disk", {PREF_LABEL: "fedora"})])
    assert res.vm["spec"]["template"]["spec"]["domain"]["memory"] == {"guest": "1Gi"}


def test_missing_label_is_ignorable_and_cleared_with_ignore():
    objects = [obj("PersistentVolumeClaim", "disk", {"app": "x"})]
    with pytest.raises(it.InferError) as e:
        it.infer(vm(PVC_VOLUME, instancetype={"inferFromVolume": "root"}), objects)
    assert str(e.value) == f"unable to find required {IT_LABEL} label on the volume"
    assert e.value.ignorable
    res = it.infer(vm(PVC_VOLUME, instancetype={"inferFromVolume": "root", "inferFromVolumeFailurePolicy": "Ignore"}),
                   objects)
    assert res.instancetype is None and "instancetype" not in res.vm["spec"]
    assert res.vm["spec"]["template"]["spec"]["domain"]["memory"] == {"guest": "1Gi"}


@pytest.mark.parametrize("policy", [None, "Ignore"])
def test_missing_volume_and_missing_objects_are_never_ignorable(policy):
    m = {"inferFromVolume": "nope"} if policy is None else {"inferFromVolume": "nope",
                                                            "inferFromVolumeFailurePolicy": policy}
    with pytest.raises(it.InferError) as e:
        it.infer(vm(PVC_VOLUME, instancetype=m), [])
    assert str(e.value) == "unable to find volume nope to infer defaults" and not e.value.ignorable
    m = dict(m, inferFromVolume="root")
    with pytest.raises(it.InferError) as e:
        it.infer(vm(PVC_VOLUME, instancetype=m), [])
    assert str(e.value) == 'persistentvolumeclaims "disk" not found' and not e.value.ignorable


def test_unsupported_volume_type():
    with pytest.raises(it.InferError) as e:
        it.infer(vm({"name": "root", "containerDisk": {"image": "x"}}, instancetype={"inferFromVolume": "root"}), [])
    assert str(e.value) == "unable to infer defaults from volume root as type is not supported"
    assert e.value.ignorable


def test_datavolume_template_source_ref_datasource_labels_then_pvc():
    dvts = [{"metadata": {"name": "dv"}, "spec": {"sourceRef": {"kind": "DataSource", "name": "ds"}}}]
    volume = {"name": "root", "dataVolume": {"name": "dv"}}
    labelled = [obj("DataSource", "ds", {IT_LABEL: "from-ds"})]
    res = it.infer(vm(volume, instancetype={"inferFromVolume": "root"}, dataVolumeTemplates=dvts), labelled)
    assert res.instancetype == {"name": "from-ds"}
    # DataSource without labels: its source PVC (namespace as given in the source)
    via_pvc = [obj("DataSource", "ds", spec={"source": {"pvc": {"name": "golden", "namespace": "images"}}}),
               obj("PersistentVolumeClaim", "golden", {IT_LABEL: "from-pvc"}, namespace="images")]
    assert it.infer(vm(volume, instancetype={"inferFromVolume": "root"}, dataVolumeTemplates=dvts), via_pvc).instancetype == \
        {"name": "from-pvc"}
    bare = [obj("DataSource", "ds", spec={"source": {}})]
    with pytest.raises(it.InferError) as e:
        it.infer(vm(volume, instancetype={"inferFromVolume": "root"}, dataVolumeTemplates=dvts), bare)
    assert str(e.value) == ("unable to infer defaults from DataSource that doesn't provide DataVolumeSourcePVC "
                            "or DataVolumeSourceSnapshot")


def test_datavolume_template_snapshot_and_unsupported_sources():
    volume = {"name": "root", "dataVolume": {"name": "dv"}}
    snap = [{"metadata": {"name": "dv"}, "spec": {"source": {"snapshot": {"name": "s", "namespace": "ns"}}}}]
    res = it.infer(vm(volume, preference={"inferFromVolume": "root"}, dataVolumeTemplates=snap),
                   [obj("VolumeSnapshot", "s", {PREF_LABEL: "rhel.9"})])
    assert res.preference == {"name": "rhel.9"}
    with pytest.raises(it.InferError) as e:
        it.infer(vm(volume, preference={"inferFromVolume": "root"}, dataVolumeTemplates=snap), [])
    assert str(e.value) == 'volumesnapshots.snapshot.storage.k8s.io "s" not found'
    registry = [{"metadata": {"name": "dv"}, "spec": {"source": {"registry": {"url": "docker://x"}}}}]
    with pytest.raises(it.InferError) as e:
        it.infer(vm(volume, preference={"inferFromVolume": "root"}, dataVolumeTemplates=registry), [])
    assert e.value.ignorable and "DataVolumeSource is not supported" in str(e.value)
    cron = [{"metadata": {"name": "dv"}, "spec": {"sourceRef": {"kind": "DataImportCron", "name": "c"}}}]
    with pytest.raises(it.InferError) as e:
        it.infer(vm(volume, preference={"inferFromVolume": "root"}, dataVolumeTemplates=cron), [])
    assert str(e.value) == "unable to infer defaults from DataVolumeSourceRef as Kind DataImportCron is not supported"


def test_datavolume_object_labels_spec_and_garbage_collected():
    volume = {"name": "root", "dataVolume": {"name": "dv"}}
    m = {"inferFromVolume": "root"}
    assert it.infer(vm(volume, instancetype=m), [obj("DataVolume", "dv", {IT_LABEL: "a"})]).instancetype == {"name": "a"}
    dv_spec = obj("DataVolume", "dv", spec={"source": {"pvc": {"name": "src", "namespace": "ns"}}})
    assert it.infer(vm(volume, instancetype=m), [dv_spec, obj("PersistentVolumeClaim", "src", {IT_LABEL: "b"})]) \
        .instancetype == {"name": "b"}
    # the DataVolume is gone: its PVC of the same name is read
    assert it.infer(vm(volume, instancetype=m), [obj("PersistentVolumeClaim", "dv", {IT_LABEL: "c"})]) \
        .instancetype == {"name": "c"}


def test_instancetype_failure_stops_before_preference_and_plain_matchers_are_left_alone():
    v = vm(PVC_VOLUME, instancetype={"name": "u1.small"}, preference={"inferFromVolume": "root"})
    res = it.infer(v, [obj("PersistentVolumeClaim", "disk", {PREF_LABEL: "p"})])
    assert res.instancetype == {"name": "u1.small"} and res.preference == {"name": "p"}
    v = vm(PVC_VOLUME, instancetype={"inferFromVolume": "nope"}, preference={"inferFromVolume": "also-nope"})
    with pytest.raises(it.InferError, match="volume nope"):
        it.infer(v, [])


def test_inputs_not_mutated_and_quantities_canonical():
    v = vm(PVC_VOLUME, instancetype={"inferFromVolume": "root"}, memory="1.5Gi")
    objects = [obj("PersistentVolumeClaim", "disk", {IT_LABEL: "x"})]
    before = copy.deepcopy((v, objects))
    res = it.infer(v, objects)
    assert (v, objects) == before
    assert res.vm["spec"]["template"]["spec"]["domain"]["memory"]["guest"] == "1536Mi"
