"""Shared ControllerRevisions and the revision upgrade on a real API server, driven by the real
`instancetype controller` and the real kubectl (controller/shared_revisions.py, controller/revisions.py).

The switch is the cluster-wide KubeVirt object's annotation: each test that turns it on turns it
off again (the `kube` cluster is shared by the tests of one worker)."""
from __future__ import annotations

import base64
import json

import pytest

from instancetype.engine import shared_revisions as SE
from tests.builders import csmall_vm

from .controller_env import ensure_namespace, get_json, until

SHARED_LABEL = "instancetype.kubevirt.io/shared-revision=true"
IT = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
      "metadata": {"name": "csmall"}, "spec": {"cpu": {"guest": 1}, "memory": {"guest": "128Mi"}}}
PREF = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
        "metadata": {"name": "virtio"}, "spec": {"devices": {"preferredDiskBus": "virtio"}}}


def _vm(name: str, strategy: str = "Always", revision: str | None = None) -> dict:
    it = {"kind": "VirtualMachineInstancetype", "name": "csmall"}
    if revision:
        it["revisionName"] = revision
    return csmall_vm(name, strategy, instancetype=it, preference="virtio")


def _apply(kube, ns, *objs):
    return kube.kubectl("apply", "-n", ns, "-f", "-",
                        input=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objs)})).stdout


def _pins(kube, ns, name):
    spec = get_json(kube, "-n", ns, f"vm/{name}")["spec"]
    return spec["instancetype"].get("revisionName"), spec["preference"].get("revisionName")


def _pinned(kube, ns, *names):
    """Every VM of `names` pinned on both sides (None while one is not)."""
    vms = {v["metadata"]["name"]: v for v in get_json(kube, "-n", ns, "vms")["items"]}
    out = {}
    for n in names:
        spec = (vms.get(n) or {}).get("spec") or {}
        pins = (spec.get("instancetype", {}).get("revisionName"), spec.get("preference", {}).get("revisionName"))
        if not all(pins):
            return None
        out[n] = pins
    return out


def _revisions(kube, ns, *selector):
    return sorted(cr["metadata"]["name"] for cr in get_json(kube, "-n", ns, "controllerrevisions", *selector)["items"])


def _vmi_memory(kube, ns, name):
    r = kube.kubectl("get", "-n", ns, f"vmi/{name}", "-o", "jsonpath={.spec.domain.memory.guest}", check=False)
    return r.stdout if r.returncode == 0 else None


@pytest.fixture
def switch(kube):
    """`switch(True/False)` sets the opt-in on the KubeVirt object (created when missing); undone after."""
    ensure_namespace(kube, "kubevirt")
    created = kube.kubectl("get", "-n", "kubevirt", "kubevirt/kubevirt", check=False).returncode != 0
    if created:
        _apply(kube, "kubevirt", {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
                                  "metadata": {"name": "kubevirt"}, "spec": {}})

    def set_(on: bool) -> None:
        patch = {"metadata": {"annotations": {SE.ANNOTATION_SHARED_REVISIONS: "true" if on else None}}}
        kube.kubectl("patch", "-n", "kubevirt", "kubevirt/kubevirt", "--type=merge", "-p", json.dumps(patch))

    yield set_
    if created:
        kube.kubectl("delete", "-n", "kubevirt", "kubevirt/kubevirt", "--wait=false", check=False)
    else:
        set_(False)


# --- the revision upgrade, as KubeVirt's pkg/instancetype/upgrade ---------------------------------

def test_an_old_payload_is_upgraded_to_a_new_revision_on_the_api_server(kube, namespace, controllers):
    # A revision's data is immutable on an API server (apps validation): a new revision, the VM
    # re-pointed (spec and status), the old one deleted.
    ns = namespace
    _apply(kube, ns, IT, PREF)
    uid = get_json(kube, "-n", ns, "virtualmachineinstancetype/csmall")["metadata"]["uid"]
    old = f"vm1-csmall-{uid}-1"
    spec = base64.b64encode(json.dumps(IT["spec"]).encode()).decode()     # KubeVirt v0.56's SpecRevision
    _apply(kube, ns, {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": old},
                      "data": {"apiVersion": "", "spec": spec}, "revision": 0})
    r = kube.kubectl("patch", "-n", ns, f"controllerrevision/{old}", "--type=merge",
                     "-p", '{"data":{"apiVersion":"x","spec":"e30="}}', check=False)
    assert r.returncode != 0 and "field is immutable" in r.stderr       # why it is never rewritten
    _apply(kube, ns, _vm("vm1", revision=old))
    controllers.start()
    new = f"vm1-csmall-v1beta1-{uid}-1"
    until(lambda: _vmi_memory(kube, ns, "vm1") == "128Mi", what="the VMI")
    vm = until(lambda: (lambda v: v if (v.get("status") or {}).get("instancetypeRef") else None)(
        get_json(kube, "-n", ns, "vm/vm1")), what="status.instancetypeRef")
    assert vm["spec"]["instancetype"]["revisionName"] == new
    assert vm["status"]["instancetypeRef"]["controllerRevisionRef"] == {"name": new}
    cr = get_json(kube, "-n", ns, f"controllerrevision/{new}")
    assert cr["metadata"]["labels"]["instancetype.kubevirt.io/object-version"] == "v1beta1"
    assert cr["metadata"]["ownerReferences"][0]["uid"] == vm["metadata"]["uid"]
    assert cr["data"]["apiVersion"] == "instancetype.kubevirt.io/v1beta1" and cr["data"]["metadata"]["name"] == "csmall"
    until(lambda: kube.kubectl("get", "-n", ns, f"controllerrevision/{old}", check=False).returncode != 0,
          what="the old revision deleted")


# --- shared revisions --------------------------------------------------------------------------------

def test_shared_revisions_on_the_api_server(kube, namespace, controllers, switch):
    ns = namespace
    _apply(kube, ns, IT, PREF)
    # Switch off: exactly the seeds' behaviour (per-VM revisions owned by the VM).
    _apply(kube, ns, _vm("before"))
    ctl = controllers.start()
    before = until(lambda: _pinned(kube, ns, "before"), what="before pinned")["before"]
    assert not any(SE.is_shared_name(n) for n in before)
    assert _revisions(kube, ns, "-l", SHARED_LABEL) == []

    # Switch on: many VMs started at once on one spec share one revision per side, created once.
    switch(True)
    names = [f"vm{i:02d}" for i in range(24)]
    _apply(kube, ns, *[_vm(n) for n in names])
    pins = until(lambda: _pinned(kube, ns, *names), what="24 VMs pinned")
    shared_pins = set(pins.values())
    assert len(shared_pins) == 1
    it_rev, pref_rev = shared_pins.pop()
    assert SE.is_shared_name(it_rev) and SE.is_shared_name(pref_rev)
    assert _revisions(kube, ns, "-l", SHARED_LABEL) == sorted([it_rev, pref_rev])
    shared_cr = get_json(kube, "-n", ns, f"controllerrevision/{it_rev}")
    assert "ownerReferences" not in shared_cr["metadata"]
    assert not [v for v in get_json(kube, "-n", ns, "vms")["items"]
                if any(c["type"] == "Failure" for c in (v.get("status") or {}).get("conditions") or ())]
    # `kubectl get controllerrevision` lists them as any other
    table = kube.kubectl("get", "-n", ns, "controllerrevision", "-l", SHARED_LABEL).stdout
    assert it_rev in table and pref_rev in table
    until(lambda: all(_vmi_memory(kube, ns, n) == "128Mi" for n in names[:3]), what="VMIs")
    # The VM pinned before the switch keeps its own revisions, across a restart too.
    assert _pins(kube, ns, "before") == before and _vmi_memory(kube, ns, "before") == "128Mi"
    kube.kubectl("patch", "-n", ns, "vm/before", "--type=merge", "-p", '{"spec":{"runStrategy":"Halted"}}')
    until(lambda: _vmi_memory(kube, ns, "before") is None, what="before stopped")
    kube.kubectl("patch", "-n", ns, "vm/before", "--type=merge", "-p", '{"spec":{"runStrategy":"Always"}}')
    until(lambda: _vmi_memory(kube, ns, "before") == "128Mi", what="before started again")
    assert _pins(kube, ns, "before") == before

    # virt-api's expand-spec (the handler, on the API server's objects) expands from the shared revision.
    from instancetype.store.kube import KubeStore
    from instancetype.webhook.virtapi.actions import expand_stored

    api = KubeStore(str(kube.kubeconfig))
    try:
        expanded = expand_stored(api, ns, names[0])
    finally:
        api.close()
    assert expanded["spec"]["template"]["spec"]["domain"]["memory"]["guest"] == "128Mi"

    # Editing the instancetype: the next VM that starts gets a new revision; pinned VMs keep theirs.
    kube.kubectl("patch", "-n", ns, "virtualmachineinstancetype/csmall", "--type=merge",
                 "-p", '{"spec":{"memory":{"guest":"256Mi"}}}')
    _apply(kube, ns, _vm("after"))
    after = until(lambda: _pinned(kube, ns, "after"), what="after pinned")["after"]
    assert after[0] != it_rev and SE.is_shared_name(after[0]) and after[1] == pref_rev
    until(lambda: _vmi_memory(kube, ns, "after") == "256Mi", what="after's VMI")
    assert _pins(kube, ns, names[0]) == (it_rev, pref_rev)

    # Deleting VMs: a shared revision goes only when no VM pins it.
    kube.kubectl("delete", "-n", ns, "vm", *names[1:], "--wait=false")
    until(lambda: len(get_json(kube, "-n", ns, "vms")["items"]) == 3, what="23 VMs deleted")
    assert it_rev in _revisions(kube, ns)                          # names[0] still pins it
    kube.kubectl("delete", "-n", ns, "vm", names[0], "--wait=false")
    until(lambda: it_rev not in _revisions(kube, ns), what=f"{it_rev} collected")
    assert pref_rev in _revisions(kube, ns)                        # "after" pins it

    # A controller restart: what VMs deleted while none ran pinned is collected at start. The VM's
    # finalizer holds it while no controller runs (Terminating, as on KubeVirt); its owner lets it go.
    controllers.stop(ctl)
    kube.kubectl("delete", "-n", ns, "vm", "after", "--wait=false")
    assert get_json(kube, "-n", ns, "vm/after")["metadata"].get("deletionTimestamp")
    kube.kubectl("patch", "-n", ns, "vm/after", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
    until(lambda: kube.kubectl("get", "-n", ns, "vm/after", check=False).returncode != 0, what="after deleted")
    assert after[0] in _revisions(kube, ns)
    controllers.start()
    until(lambda: _revisions(kube, ns, "-l", SHARED_LABEL) == [], what="shared revisions collected after restart")

    # Switching off again: per-VM revisions for new VMs, nothing else changes.
    switch(False)
    _apply(kube, ns, _vm("off"))
    off = until(lambda: _pinned(kube, ns, "off"), what="off pinned")["off"]
    assert not any(SE.is_shared_name(n) for n in off)
    assert _pins(kube, ns, "before") == before
