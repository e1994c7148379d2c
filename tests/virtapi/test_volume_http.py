"""virt-api's `addvolume` / `removevolume` of a VM and a VMI over real HTTP on the embedded store:
v1.9's answers (pkg/virt-api/rest/volumes.go) code by code: the feature gates first, then the
options decoded as Go decodes them, the handler's checks, the Status bodies."""
from __future__ import annotations

import pytest

from instancetype.controller import Cluster
from instancetype.controller import pause as vmi_verbs
from instancetype.controller import vm as vm_verbs
from instancetype.controller import volume_hotplug as volume_verbs
from instancetype.store.sqlite import SqliteStore
from instancetype.webhook.virtapi.app import VirtAPI

from ._server import request, serving
from .test_http_sqlite import IT, PREF, vm

PREFIX = "/apis/subresources.kubevirt.io/v1/namespaces/default"
CLAIM = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "pvc1"},
         "spec": {"resources": {"requests": {"storage": "1Gi"}}}}
ADD = {"name": "pvc1", "disk": {"disk": {"bus": "scsi"}, "serial": "pvc1"},
       "volumeSource": {"persistentVolumeClaim": {"claimName": "pvc1"}}}


@pytest.fixture
def env(tmp_path):
    path = str(tmp_path / "state.db")
    with Cluster.open(path) as cluster:
        for obj in (IT, PREF, vm(), CLAIM):
            cluster.apply(obj, namespace="default")
        api = VirtAPI(lambda: SqliteStore(path), vm_verbs=vm_verbs, vmi_verbs=vmi_verbs, volume_verbs=volume_verbs,
                      insecure=True)
        with serving(api.app()) as port:
            yield cluster, port


def put(port: int, path: str, body=None):
    return request(port, "PUT", PREFIX + path, body)


def test_options_and_checks(env):
    cluster, port = env
    code, status = put(port, "/virtualmachines/vm1/addvolume", {"name": 3})
    assert (code, status["message"]) == (400, "Can not unmarshal Request body to struct, error: json: cannot "
                                              "unmarshal number into Go struct field AddVolumeOptions.name of "
                                              "type string")
    code, status = put(port, "/virtualmachines/vm1/addvolume", {"name": "pvc1", "disk": "sda"})
    assert (code, status["message"]) == (400, "Can not unmarshal Request body to struct, error: json: cannot "
                                              "unmarshal string into Go struct field AddVolumeOptions.disk of "
                                              "type v1.Disk")
    code, status = put(port, "/virtualmachines/vm1/addvolume")       # an empty body: empty options
    assert (code, status["message"]) == (400, "AddVolumeOptions requires name to be set")
    code, status = put(port, "/virtualmachines/vm1/addvolume", {"name": "pvc1", "disk": {}})
    assert (code, status["message"]) == (400, "AddVolumeOptions requires VolumeSource to not be nil")
    code, status = put(port, "/virtualmachineinstances/vm1/removevolume", {})
    assert (code, status["message"]) == (400, "RemoveVolumeOptions requires name to be set")
    code, status = put(port, "/virtualmachineinstances/vm1/addvolume", ADD)
    assert (code, status["message"], status["details"]) == (
        404, 'virtualmachineinstance.kubevirt.io "vm1" not found',
        {"name": "vm1", "group": "kubevirt.io", "kind": "virtualmachineinstance"})

    # a Halted VM takes the volume into its template: it is there at the next start
    assert put(port, "/virtualmachines/vm1/addvolume", ADD) == (202, None)
    assert cluster.get("VirtualMachine", "vm1", "default")["spec"]["template"]["spec"]["volumes"][-1] == {
        "name": "pvc1", "persistentVolumeClaim": {"claimName": "pvc1", "hotpluggable": True}}
    code, status = put(port, "/virtualmachines/vm1/addvolume", ADD)
    assert (code, status["reason"], status["message"]) == (
        409, "Conflict", 'Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm1": Unable to add volume '
                         "[pvc1] because volume with that name already exists")
    assert put(port, "/virtualmachines/vm1/removevolume", b"name: pvc1\n") == (202, None)

    kv = cluster.get("KubeVirt", "kubevirt", "kubevirt")
    kv["spec"]["configuration"] = {"developerConfiguration": {"disabledFeatureGates": ["DeclarativeHotplugVolumes"]}}
    cluster.update(kv)
    code, status = put(port, "/virtualmachines/vm1/addvolume", {"name": 3})     # the gates come first
    assert (code, status["message"]) == (400, "Enable DeclarativeHotplugVolumes or HotplugVolumes feature gate "
                                              "to use this API.")
