"""The subresource API over real HTTP (aiohttp on 127.0.0.1) on the embedded SQLite store:
discovery, start / stop / restart with KubeVirt's option bodies and error answers, and both
expansions equal to the engine's."""
from __future__ import annotations

import pytest

import instancetype
from instancetype.controller import Cluster
from instancetype.store.sqlite import SqliteStore
from instancetype.webhook.virtapi.app import VirtAPI
from tests import builders

from ._server import request, serving

P = "/apis/subresources.kubevirt.io/v1"
IT = builders.instancetype_obj("csmall", cpu=1, memory="128Mi")
PREF = builders.preference_obj("cirros", {"devices": {"preferredDiskBus": "virtio"}})


def vm(name="vm1", strategy="Halted", **spec):
    return builders.vm(name, namespace=None, runStrategy=strategy,
                       instancetype={"kind": "VirtualMachineInstancetype", "name": "csmall"},
                       preference={"kind": "VirtualMachinePreference", "name": "cirros"},
                       domain={"devices": {}}, volumes=[{"name": "containerdisk", "containerDisk": {"image": "cirros"}}],
                       **spec)


@pytest.fixture
def env(tmp_path):
    path = str(tmp_path / "state.db")
    with Cluster.open(path) as cluster:
        for obj in (IT, PREF, vm()):
            obj = dict(obj)
            obj.setdefault("metadata", {})
            cluster.apply(obj, namespace="default")
        api = VirtAPI(lambda: SqliteStore(path), insecure=True)
        with serving(api.app()) as port:
            yield cluster, port


def put(port, path, body=None):
    return request(port, "PUT", P + path, body)


def vmi_exists(cluster, name="vm1"):
    return any(True for _ in cluster.list("VirtualMachineInstance", "default", field_selector=f"metadata.name={name}"))


def test_discovery_documents(env):
    _, port = env
    code, groups = request(port, "GET", "/apis")
    assert code == 200 and groups["groups"][0]["preferredVersion"]["groupVersion"] == "subresources.kubevirt.io/v1"
    code, group = request(port, "GET", "/apis/subresources.kubevirt.io")
    assert code == 200 and group["kind"] == "APIGroup"
    code, resources = request(port, "GET", P)
    names = {r["name"] for r in resources["resources"]}
    assert code == 200 and resources["kind"] == "APIResourceList"
    assert {"virtualmachines/start", "virtualmachines/stop", "virtualmachines/restart",
            "virtualmachines/expand-spec", "expand-vm-spec"} <= names
    code, version = request(port, "GET", P + "/version")
    assert code == 200 and version["gitVersion"] == "v1.9.0"
    assert request(port, "GET", "/healthz")[0] == 200
    assert request(port, "GET", P + "/healthz")[0] == 200


def test_start_stop_restart(env):
    cluster, port = env
    assert put(port, "/namespaces/default/virtualmachines/vm1/start") == (202, None)
    assert vmi_exists(cluster)
    assert cluster.get("VirtualMachine", "vm1", "default")["spec"]["runStrategy"] == "Always"

    code, status = put(port, "/namespaces/default/virtualmachines/vm1/start", {})
    assert code == 409
    assert status == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                      "message": 'Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm1": VM is already running',
                      "reason": "Conflict", "details": {"name": "vm1", "group": "kubevirt.io", "kind": "virtualmachine"},
                      "code": 409}

    uid = cluster.get("VirtualMachineInstance", "vm1", "default")["metadata"]["uid"]
    assert put(port, "/namespaces/default/virtualmachines/vm1/restart", {}) == (202, None)
    assert cluster.get("VirtualMachineInstance", "vm1", "default")["metadata"]["uid"] != uid

    assert put(port, "/namespaces/default/virtualmachines/vm1/stop", {}) == (202, None)
    assert not vmi_exists(cluster)
    code, status = put(port, "/namespaces/default/virtualmachines/vm1/stop")
    assert (code, status["message"]) == (409, 'Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm1": '
                                               'VM is not running')
    code, status = put(port, "/namespaces/default/virtualmachines/vm1/restart")
    assert (code, status["message"]) == (409, 'Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm1": '
                                               'RunStategy Halted does not support manual restart requests')


def test_not_found_and_option_bodies(env):
    cluster, port = env
    code, status = put(port, "/namespaces/default/virtualmachines/nope/start")
    assert (code, status["message"], status["reason"]) == (404, 'virtualmachine.kubevirt.io "nope" not found', "NotFound")
    assert status["details"] == {"name": "nope", "group": "kubevirt.io", "kind": "virtualmachine"}
    # a VM is never looked up in another namespace
    assert put(port, "/namespaces/other/virtualmachines/vm1/start")[0] == 404

    code, status = put(port, "/namespaces/default/virtualmachines/vm1/start", {"paused": "yes"})
    assert (code, status["message"]) == (400, "Can not unmarshal Request body to struct, error: json: cannot "
                                              "unmarshal string into Go struct field StartOptions.paused of type bool")
    assert "details" not in status
    code, status = put(port, "/namespaces/default/virtualmachines/vm1/stop", {"gracePeriod": 1.5})
    assert status["message"].endswith("json: cannot unmarshal number 1.5 into Go struct field "
                                      "StopOptions.gracePeriod of type int64")
    code, status = put(port, "/namespaces/default/virtualmachines/vm1/stop", b"{")
    assert (code, status["message"]) == (400, "Can not unmarshal Request body to struct, error: "
                                              "unexpected end of JSON input")
    code, status = put(port, "/namespaces/default/virtualmachines/vm1/restart", {"gracePeriodSeconds": 5})
    assert (code, status["message"]) == (400, "For force restart, only gracePeriod=0 is supported for now")
    code, status = put(port, "/namespaces/default/virtualmachines/vm1/restart", {"gracePeriodSeconds": -1})
    assert (code, status["message"]) == (400, "gracePeriod has to be greater or equal to 0")
    # YAML bodies too (YAMLOrJSONDecoder), keys matched case-insensitively as Go does
    assert put(port, "/namespaces/default/virtualmachines/vm1/start", b"DryRun: [All]\n") == (202, None)
    assert not vmi_exists(cluster)


def test_dry_run_keeps_nothing(env):
    cluster, port = env
    before = cluster.get("VirtualMachine", "vm1", "default")
    assert put(port, "/namespaces/default/virtualmachines/vm1/start", {"dryRun": ["All"]}) == (202, None)
    assert not vmi_exists(cluster)
    assert cluster.get("VirtualMachine", "vm1", "default")["metadata"]["resourceVersion"] == \
        before["metadata"]["resourceVersion"]
    code, status = put(port, "/namespaces/default/virtualmachines/vm1/start", {"dryRun": ["Some"]})
    assert (code, status["message"]) == (400, 'dryRun: Unsupported value: "Some": supported values: "All"')
    # a dry run still meets the rules
    put(port, "/namespaces/default/virtualmachines/vm1/start")
    code, status = put(port, "/namespaces/default/virtualmachines/vm1/start", {"dryRun": ["All"]})
    assert code == 409 and status["message"].endswith("VM is already running")


def test_expand_spec_equals_the_engine(env):
    cluster, port = env
    code, expanded = request(port, "GET", P + "/namespaces/default/virtualmachines/vm1/expand-spec")
    assert code == 200
    assert expanded == cluster.expand_vm("vm1", "default")
    assert "instancetype" not in expanded["spec"]
    assert expanded["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] == 1


def test_expand_vm_spec_equals_offline_expand(env):
    cluster, port = env
    posted = vm("posted")
    code, expanded = put(port, "/namespaces/default/expand-vm-spec", posted)
    assert code == 200
    offline = instancetype.expand({**posted, "metadata": {**posted["metadata"], "namespace": "default"}},
                                  objects=[IT, PREF])
    assert expanded == offline
    # the VM's namespace must be the request's
    code, status = put(port, "/namespaces/default/expand-vm-spec",
                       {**posted, "metadata": {"name": "posted", "namespace": "other"}})
    assert (code, status["message"]) == (400, "VM namespace must be empty or default")
    # an error of the expansion is a 400 naming it
    missing = vm("m")
    missing["spec"]["instancetype"] = {"kind": "VirtualMachineInstancetype", "name": "absent"}
    code, status = put(port, "/namespaces/default/expand-vm-spec", missing)
    assert code == 400 and status["reason"] == "BadRequest" and "absent" in status["message"]
    code, status = put(port, "/namespaces/default/expand-vm-spec", b"not json")
    assert (code, status["message"]) == (400, "Can not unmarshal Request body to struct, error: "
                                              "invalid character 'o' in literal null (expecting 'u')")


def test_expand_spec_of_a_stored_vm_that_cannot_expand_is_internal_error(env):
    cluster, port = env
    cluster.delete("VirtualMachineInstancetype", "csmall", "default")
    code, status = request(port, "GET", P + "/namespaces/default/virtualmachines/vm1/expand-spec")
    assert code == 500 and status["reason"] == "InternalError"
    assert status["message"].startswith("Internal error occurred: ") and "csmall" in status["message"]
    code, status = request(port, "GET", P + "/namespaces/default/virtualmachines/nope/expand-spec")
    assert (code, status["message"]) == (404, 'virtualmachine.kubevirt.io "nope" not found')


def test_dry_run_overlay_keeps_the_rules_and_writes_nothing(tmp_path):
    """The overlay used on stores that cannot roll back, over a real store."""
    from instancetype.controller import vm as vmctl
    from instancetype.store.base import Conflict
    from instancetype.webhook.virtapi.dryrun import DryRunStore

    path = str(tmp_path / "state.db")
    with Cluster.open(path) as cluster:
        for obj in (IT, PREF, vm()):
            cluster.apply(obj, namespace="default")
        base = cluster.store
        before = base.get("VirtualMachine", "vm1", "default")
        overlay = DryRunStore(base)
        vmctl.start(overlay, overlay.get("VirtualMachine", "vm1", "default"))
        # the overlay sees what the start wrote: the VMI, the revisions, the VM running
        assert overlay.get("VirtualMachineInstance", "vm1", "default")["status"]["phase"] == "Running"
        assert overlay.count("ControllerRevision", "default") == 2
        with pytest.raises(Conflict, match="VM is already running"):
            vmctl.start(overlay, overlay.get("VirtualMachine", "vm1", "default"))
        # the base store has none of it
        assert base.get("VirtualMachine", "vm1", "default") == before
        assert base.count("VirtualMachineInstance", "default") == 0
        assert base.count("ControllerRevision", "default") == 0


def test_answers_are_application_json_exactly_as_kubernetes_clients_expect(env):
    """lightkube (the command line's client) turns an error into the Status it carries only for
    `Content-Type: application/json` exactly: with a charset the message was the raw JSON."""
    import http.client

    _, port = env
    for method, path in (("GET", P), ("PUT", P + "/namespaces/default/virtualmachines/vm1/stop")):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request(method, path, body=b"{}" if method == "PUT" else None)
            resp = conn.getresponse()
            resp.read()
            assert resp.getheader("Content-Type") == "application/json", (method, path)
        finally:
            conn.close()
