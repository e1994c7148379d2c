"""Divergences from KubeVirt v1.9 found by auditing admission, inference, validation and the VMI
build against KubeVirt's Go source; each test names the Go function whose behaviour it pins."""
from __future__ import annotations

import pytest
from tests import builders

import instancetype as it
from instancetype.errors import DecodeError, InferError, LoadError


def admit_it(vm, **kw):
    """The instancetype part of VM admission (the admit-vm contract)."""
    return it.admit_vm(vm, whole=False, **kw)

IT_LABEL = "instancetype.kubevirt.io/default-instancetype"
ARCH_LABEL = "template.kubevirt.io/architecture"


def _obj(kind: str, name: str, namespace: str = "ns", labels: dict | None = None, spec: dict | None = None) -> dict:
    o = {"kind": kind, "metadata": {"name": name, "namespace": namespace, "labels": labels or {}}}
    if spec is not None:
        o["spec"] = spec
    return o


DV_VOLUME = [{"name": "root", "dataVolume": {"name": "root-dv"}}]
PVC_IN_VM_NS = _obj("PersistentVolumeClaim", "golden", labels={IT_LABEL: "u1.small"})


# --- inference: a source namespace is used as given (pkg/instancetype/infer/volume.go) ---------
@pytest.mark.parametrize("source", [{"pvc": {"name": "golden"}}, {"pvc": {"name": "golden", "namespace": ""}}])
def test_dv_template_source_pvc_without_namespace_is_not_found(source):
    # fromDataVolumeSpec -> fromPVC(Source.PVC.Name, Source.PVC.Namespace): an empty namespace is a
    # GET in namespace "", so the PVC in the VM's namespace is NOT found (a non-ignorable error).
    vm = builders.vm(instancetype={"inferFromVolume": "root", "inferFromVolumeFailurePolicy": "Ignore"},
                     dataVolumeTemplates=[{"metadata": {"name": "root-dv"}, "spec": {"source": source}}],
                     volumes=DV_VOLUME)
    with pytest.raises(InferError) as e:
        it.infer(vm, [PVC_IN_VM_NS])
    assert str(e.value) == 'persistentvolumeclaims "golden" not found'
    assert e.value.ignorable is False


def test_dv_template_source_pvc_with_namespace_is_found():
    vm = builders.vm(instancetype={"inferFromVolume": "root"},
                     dataVolumeTemplates=[{"metadata": {"name": "root-dv"},
                                           "spec": {"source": {"pvc": {"name": "golden", "namespace": "ns"}}}}],
                     volumes=DV_VOLUME)
    assert it.infer(vm, [PVC_IN_VM_NS]).instancetype == {"name": "u1.small"}


def test_source_ref_with_empty_namespace_is_not_defaulted():
    # fromDataVolumeSourceRef: a non-nil sourceRef.namespace is used even when empty.
    ds = _obj("DataSource", "fedora", labels={IT_LABEL: "u1.small"})
    dvt = {"metadata": {"name": "root-dv"}, "spec": {"sourceRef": {"kind": "DataSource", "name": "fedora"}}}
    vm = builders.vm(instancetype={"inferFromVolume": "root"}, dataVolumeTemplates=[dvt], volumes=DV_VOLUME)
    assert it.infer(vm, [ds]).instancetype == {"name": "u1.small"}     # absent: the VM's namespace
    dvt["spec"]["sourceRef"]["namespace"] = ""
    with pytest.raises(InferError) as e:
        it.infer(vm, [ds])
    assert str(e.value) == 'datasources.cdi.kubevirt.io "fedora" not found'


def test_datasource_source_pvc_without_namespace_is_not_found():
    # fromDataSource -> fromPVC(ds.Spec.Source.PVC.Name, ds.Spec.Source.PVC.Namespace)
    ds = _obj("DataSource", "fedora", spec={"source": {"pvc": {"name": "golden"}}})
    dvt = {"metadata": {"name": "root-dv"}, "spec": {"sourceRef": {"kind": "DataSource", "name": "fedora"}}}
    vm = builders.vm(instancetype={"inferFromVolume": "root"}, dataVolumeTemplates=[dvt], volumes=DV_VOLUME)
    with pytest.raises(InferError, match='persistentvolumeclaims "golden" not found'):
        it.infer(vm, [ds, PVC_IN_VM_NS])


# --- VM defaults: setDefaultArchitectureFromDataSource (pkg/defaults) -------------------------
def _arch_vm() -> dict:
    dvt = {"metadata": {"name": "root-dv"},
           "spec": {"sourceRef": {"kind": "DataSource", "name": "pointer"}, "storage": {}}}
    return builders.vm(dataVolumeTemplates=[dvt], volumes=DV_VOLUME)


@pytest.mark.parametrize("target_ns, arch", [("ns", "arm64"), ("", "amd64"), (None, "amd64")])
def test_datasource_to_datasource_target_namespace_taken_as_given(target_ns, arch):
    # ds.Spec.Source.DataSource.Namespace is used as is: an empty one finds nothing, so the
    # template is skipped and the cluster default architecture is used.
    target = {"name": "real"}
    if target_ns is not None:
        target["namespace"] = target_ns
    objects = [_obj("DataSource", "pointer", spec={"source": {"dataSource": target}}),
               _obj("DataSource", "real", labels={ARCH_LABEL: "arm64"})]
    res = admit_it(_arch_vm(), objects=objects)
    assert res.allowed
    assert res.vm["spec"]["template"]["spec"]["architecture"] == arch


# --- validation webhook: webhookutils.ValidateSchema ------------------------------------------
def test_validate_null_object_lacks_spec():
    # json.Unmarshal("null", &map) leaves an empty map: the schema step wants `spec`.
    res = it.validate(None)
    assert res.to_dict() == {"allowed": False, "causes": [{"reason": "", "message": "spec in body is required",
                                                           "field": ""}],
                             "message": "spec in body is required", "code": 422, "reason": "Invalid"}


# --- bad input names the field -----------------------------------------------------------------
@pytest.mark.parametrize("meta", [{"name": {"a": 1}}, {"name": ["x"]}, {"name": "x", "namespace": 5}])
def test_whole_object_with_non_string_name_is_a_load_error(meta):
    vm = builders.vm(instancetype={"name": "x", "kind": "VirtualMachineInstancetype"}, volumes=[])
    given = {"kind": "VirtualMachineInstancetype", "metadata": meta,
             "spec": {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}}
    with pytest.raises(LoadError, match=r"instancetype\.metadata\.(name|namespace): must be a string"):
        admit_it(vm, instancetype=given)


@pytest.mark.parametrize("config, field", [
    ({"liveUpdateConfiguration": "x"}, "liveUpdateConfiguration"),
    ({"network": -1}, "network"),
    ({"liveUpdateConfiguration": {"maxCpuSockets": "4"}}, "liveUpdateConfiguration.maxCpuSockets"),
    ({"architectureConfiguration": {"amd64": "q35"}}, "architectureConfiguration.amd64"),
])
def test_badly_typed_config_names_the_field(config, field):
    vm = builders.vm(volumes=[{"name": "root", "containerDisk": {"image": "img"}}])
    with pytest.raises(DecodeError) as e:
        it.build_vmi(vm, config=config)
    assert f"KubeVirtConfiguration.{field} of type" in str(e.value)


def test_update_with_undecodable_old_vm_is_a_400():
    # GetVMFromAdmissionReview: on UPDATE the old object is decoded as well.
    vm = builders.vm(instancetype={"name": "x"}, volumes=[])
    old = builders.vm(instancetype="x", volumes=[])
    res = admit_it(vm, operation="UPDATE", old=old)
    assert (res.allowed, res.code, res.stage) == (False, 400, "mutate")
    assert "VirtualMachine.spec.instancetype" in res.message


@pytest.mark.parametrize("cpu, text", [
    ({"sockets": "2"}, "cannot unmarshal string into Go struct field VirtualMachine.spec.template.spec.domain.cpu.sockets "
                       "of type uint32"),
    ({"sockets": -1}, "cannot unmarshal number -1 into Go struct field VirtualMachine.spec.template.spec.domain.cpu.sockets "
                      "of type uint32"),
    ({"cores": 2.0}, "cannot unmarshal number 2.0 into Go struct field VirtualMachine.spec.template.spec.domain.cpu.cores "
                     "of type uint32"),
    # a number into a string field: Go names no literal
    ({"model": 5}, "cannot unmarshal number into Go struct field VirtualMachine.spec.template.spec.domain.cpu.model "
                   "of type string"),
])
def test_vm_decode_errors_use_go_types(cpu, text):
    # v1.CPU's sockets/cores/threads/maxSockets are uint32 (staging/src/kubevirt.io/api/core/v1/schema.go)
    vm = {"metadata": {"name": "v"}, "spec": {"template": {"spec": {"domain": {"cpu": cpu}}}}}
    res = admit_it(vm)
    assert (res.code, res.message) == (400, "json: " + text)
