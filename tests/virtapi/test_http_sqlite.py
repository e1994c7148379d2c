"""The subresource API over real HTTP (aiohttp on 127.0.0.1) on the embedded SQLite store:
discovery, start / stop / restart with KubeVirt's option bodies and error answers, and both
expansions equal to the engine's."""
from __future__ import annotations

import pytest

import instancetype
from instancetype.controller import Cluster
from instancetype.controller import vm as vm_verbs
from instancetype.store.sqlite import SqliteStore
from instancetype.webhook.virtapi.app import VirtAPI
from tests import builders

from ._server import request, serving

P = "/apis/subresources.kubevirt.io/v1"
IT = builders.instancetype_obj("csmall", cpu=1, memory="128Mi")
PREF = builders.preference_obj("cirros", {"devices": {"preferredDiskBus": "virtio"}})


def vm(name: str = "vm1", strategy: str = "Halted") -> dict:
    """A stopped VM using IT and PREF (the subresources start it)."""
    return builders.csmall_vm(name, strategy)


@pytest.fixture
def env(tmp_path):
    path = str(tmp_path / "state.db")
    with Cluster.open(path) as cluster:
        for obj in (IT, PREF, vm()):
            obj = dict(obj)
            obj.setdefault("metadata", {})
            cluster.apply(obj, namespace="default")
        api = VirtAPI(lambda: SqliteStore(path), vm_verbs=vm_verbs, insecure=True)
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


PAUSED_READY = {"type": "Ready", "status": "False", "reason": "ReadinessGatesNotReady",
                "message": 'the status of pod readiness gate "kubevirt.io/virtual-machine-unpaused" is not "True", '
                           "but False"}
PAUSED = {"type": "Paused", "status": "True", "reason": "PausedByUser", "message": "VMI was paused by user"}


def _conditions(obj):
    """The conditions but virt-handler's LiveMigratable (tests/controller/test_vm_live_update.py)."""
    return [{k: c[k] for k in ("type", "status", "reason", "message")} for c in obj["status"]["conditions"]
            if c["type"] != "LiveMigratable"]


def _assert_paused(cluster, name="vm1"):
    vmi = cluster.get("VirtualMachineInstance", name, "default")
    assert vmi["spec"]["startStrategy"] == "Paused"
    assert vmi["status"]["phase"] == "Running"
    assert _conditions(vmi) == [PAUSED_READY, PAUSED]
    vm = cluster.get("VirtualMachine", name, "default")
    assert vm["status"]["printableStatus"] == "Paused"
    assert "ready" not in vm["status"] and vm["status"]["created"] is True
    assert _conditions(vm) == [PAUSED_READY, PAUSED]
    assert "stateChangeRequests" not in vm["status"]     # the start request is done once the VMI runs
    return vm


def test_start_paused_halted(env):
    """Halted: virt-api records a paused start request; the controller makes the run strategy
    Always and starts the VMI with startStrategy Paused; the node reports it paused."""
    cluster, port = env
    assert put(port, "/namespaces/default/virtualmachines/vm1/start", {"paused": True}) == (202, None)
    vm = _assert_paused(cluster)
    assert vm["spec"]["runStrategy"] == "Always"
    # once running, a start is refused as for any running VM (before its body is read); stop and a
    # plain start run unpaused
    assert put(port, "/namespaces/default/virtualmachines/vm1/start", {"paused": True})[0] == 409
    assert put(port, "/namespaces/default/virtualmachines/vm1/start", {"paused": "yes"})[0] == 409
    assert put(port, "/namespaces/default/virtualmachines/vm1/stop") == (202, None)
    assert put(port, "/namespaces/default/virtualmachines/vm1/start", b"paused: false\n") == (202, None)
    vmi = cluster.get("VirtualMachineInstance", "vm1", "default")
    assert "startStrategy" not in vmi["spec"] and _conditions(vmi)[0]["status"] == "True"
    assert cluster.get("VirtualMachine", "vm1", "default")["status"]["printableStatus"] == "Running"


def test_start_paused_manual_and_dry_run(env):
    """Manual: a start request carrying `paused: "true"`; a dry run keeps nothing."""
    cluster, port = env
    cluster.apply(vm("vm2", strategy="Manual"), namespace="default")
    assert put(port, "/namespaces/default/virtualmachines/vm2/start", {"paused": True, "dryRun": ["All"]}) == (202, None)
    assert not vmi_exists(cluster, "vm2")
    assert "stateChangeRequests" not in cluster.get("VirtualMachine", "vm2", "default").get("status", {})
    assert put(port, "/namespaces/default/virtualmachines/vm2/start", {"paused": True}) == (202, None)
    vm2 = _assert_paused(cluster, "vm2")
    assert vm2["spec"]["runStrategy"] == "Manual"
    assert put(port, "/namespaces/default/virtualmachines/vm2/stop") == (202, None)
    assert not vmi_exists(cluster, "vm2")
    assert cluster.get("VirtualMachine", "vm2", "default")["status"]["printableStatus"] == "Stopped"


def test_start_request_already_underway(env):
    """getChangeRequestJson: a start while another request is pending is a 500."""
    cluster, port = env
    cluster.apply(vm("vm3", strategy="Manual"), namespace="default")
    with cluster.store.transaction() as tx:      # a request the controller has not acted on yet
        stored = tx.get("VirtualMachine", "vm3", "default")
        status = {**stored.get("status", {}), "stateChangeRequests": [{"action": "Stop", "uid": "gone"}]}
        tx.update({**stored, "status": status}, subresource="status")
    code, status = put(port, "/namespaces/default/virtualmachines/vm3/start")
    assert (code, status["reason"], status["message"]) == (
        500, "InternalError", "Internal error occurred: unable to complete request: stop/start already underway")
    assert status["details"] == {"causes": [{"message": "unable to complete request: stop/start already underway"}]}


def test_stop_grace_period(env):
    """StopOptions.gracePeriod shortens the running VMI's grace period before stopping it."""
    cluster, port = env
    cluster.apply(vm("vm4", strategy="Manual"), namespace="default")
    assert put(port, "/namespaces/default/virtualmachines/vm4/start") == (202, None)
    assert put(port, "/namespaces/default/virtualmachines/vm4/stop", {"gracePeriod": 0, "dryRun": ["All"]}) == (
        202, None)
    assert vmi_exists(cluster, "vm4")
    assert put(port, "/namespaces/default/virtualmachines/vm4/stop", {"gracePeriod": 0}) == (202, None)
    assert not vmi_exists(cluster, "vm4")
    assert put(port, "/namespaces/default/virtualmachines/vm4/start") == (202, None)
    assert put(port, "/namespaces/default/virtualmachines/vm4/restart", {"gracePeriodSeconds": 0}) == (202, None)
    assert vmi_exists(cluster, "vm4")


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


def _invalid(status):
    assert (status["code"], status["reason"], status["message"]) == (400, "BadRequest",
                                                                     "Object is not a valid VirtualMachine")
    return [c["message"] for c in status["details"]["causes"]]


def test_expand_vm_spec_checks_the_posted_vm(env):
    """ExpandSpecRequestHandler checks the body before expanding: JSON into a map, the OpenAPI
    schema (Validator.Validate: top-level keys, spec required and strict, status open), Go's
    decoding of what the schema does not look at, then the namespace."""
    _, port = env
    posted = vm("posted")
    expand = "/namespaces/default/expand-vm-spec"
    code, status = put(port, expand, b"")
    assert (code, status["message"]) == (400, "Can not unmarshal Request body to struct, error: "
                                              "unexpected end of JSON input")
    code, status = put(port, expand, [posted])
    assert (code, status["message"]) == (400, "Can not unmarshal Request body to struct, error: json: cannot "
                                              "unmarshal array into Go value of type map[string]interface {}")
    code, status = put(port, expand, {**posted, "extra": 1, "spex": {}})
    assert code == 400 and _invalid(status) == [".extra in body is a forbidden property",
                                                ".spex in body is a forbidden property"]
    assert _invalid(put(port, expand, {"metadata": {"name": "x"}})[1]) == [
        "spec in body is required", 'spec in body must be of type object: "null"']
    assert _invalid(put(port, expand, b"null")[1]) == [
        "spec in body is required", 'spec in body must be of type object: "null"']
    bad = vm("posted")
    bad["spec"]["template"]["spec"]["domain"]["cpu"] = {"cores": "2"}
    bad["spec"]["template"]["spec"]["domain"]["devices"]["bogus"] = True
    assert sorted(_invalid(put(port, expand, bad)[1])) == [
        "spec.template.spec.domain.cpu.cores in body must be of type integer: \"string\"",
        "spec.template.spec.domain.devices.bogus in body is a forbidden property"]
    # the status schema keeps unknown fields but checks the types of known ones
    code, _ = put(port, expand, {**posted, "status": {"somethingNew": {"x": 1}}})
    assert code == 200
    assert _invalid(put(port, expand, {**posted, "status": {"ready": "yes"}})[1]) == [
        'status.ready in body must be of type boolean: "string"']
    # metadata is not schema-checked: Go's decoding refuses a mistyped field
    code, status = put(port, expand, {**posted, "metadata": {"name": 5}})
    assert (code, status["message"]) == (400, "Can not unmarshal Request body to struct, error: json: cannot "
                                              "unmarshal number into Go struct field VirtualMachine.metadata.name "
                                              "of type string")
    code, status = put(port, expand, {**posted, "metadata": {"name": "p", "labels": {"a": 1}}})
    assert status["message"].endswith("cannot unmarshal number into Go struct field VirtualMachine.metadata.labels "
                                      "of type string")
    code, status = put(port, expand, {**posted, "metadata": {"name": "p", "namespace": "other"}})
    assert (code, status["message"]) == (400, "VM namespace must be empty or other"[:-5] + "default")


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
    from instancetype.store.dryrun import DryRunStore

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
        assert overlay.count("ControllerRevision", "default", label_selector=builders.PINS) == 2
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
