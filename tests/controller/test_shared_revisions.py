"""Shared ControllerRevisions on the embedded store: one per distinct spec, opt-in on the KubeVirt
object (engine/shared_revisions.py, controller/shared_revisions.py)."""
from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import sys

import pytest

from instancetype.api.names import subdomain_errors
from instancetype.controller import Cluster
from instancetype.controller import shared_revisions as S
from instancetype.engine import shared_revisions as SE
from instancetype.errors import Error
from instancetype.store.base import AlreadyExists, NotFound
from instancetype.store.sqlite import SqliteStore
from tests import builders

IT = builders.instancetype_obj("csmall", cpu=1, memory="128Mi")
PREF = builders.preference_obj("cirros", {"devices": {"preferredDiskBus": "virtio"}})
SHARED_LABEL = "instancetype.kubevirt.io/shared-revision"


def vm(name="vm1", strategy="Always", namespace=None, **spec):
    return builders.vm(name, namespace=namespace, runStrategy=strategy,
                       instancetype={"kind": "VirtualMachineInstancetype", "name": "csmall"},
                       preference={"kind": "VirtualMachinePreference", "name": "cirros"},
                       domain={"devices": {}}, volumes=[{"name": "containerdisk", "containerDisk": {"image": "cirros"}}],
                       **spec)


def switch(cluster, on: bool | None, **configuration):
    """Set (or with None remove) the opt-in annotation on the cluster's KubeVirt object."""
    kv = cluster.get("KubeVirt", "kubevirt", "kubevirt")
    annotations = dict(kv["metadata"].get("annotations") or {})
    annotations.pop(SE.ANNOTATION_SHARED_REVISIONS, None)
    if on is not None:
        annotations[SE.ANNOTATION_SHARED_REVISIONS] = "true" if on else "false"
    kv["metadata"]["annotations"] = annotations
    if configuration:
        kv["spec"]["configuration"] = configuration
    cluster.update(kv)


def pins(cluster, name, namespace=None):
    spec = cluster.get("VirtualMachine", name, namespace)["spec"]
    return spec["instancetype"]["revisionName"], spec["preference"]["revisionName"]


def revision_names(cluster, namespace=None):
    return sorted(cr["metadata"]["name"] for cr in builders.pins(cluster, namespace))


def guest_memory(cluster, name):
    return cluster.get("VirtualMachineInstance", name)["spec"]["domain"]["memory"]["guest"]


@pytest.fixture
def cluster(tmp_path):
    with Cluster.open(str(tmp_path / "state.db"), catalog=False) as c:
        yield c


@pytest.fixture
def shared(cluster):
    switch(cluster, True)
    cluster.apply(IT), cluster.apply(PREF)
    return cluster


# --- the switch -------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [None, False])
def test_off_is_the_seeds_per_vm_revisions(cluster, value):
    if value is not None:
        switch(cluster, value)
    cluster.apply(IT), cluster.apply(PREF), cluster.apply(vm()), cluster.apply(vm("vm2"))
    uid = cluster.get("VirtualMachineInstancetype", "csmall")["metadata"]["uid"]
    assert pins(cluster, "vm1")[0] == f"vm1-csmall-{uid}-1"
    assert len(revision_names(cluster)) == 4
    for cr in cluster.list("ControllerRevision"):
        assert SHARED_LABEL not in cr["metadata"]["labels"]
        assert cr["metadata"]["ownerReferences"][0]["kind"] == "VirtualMachine"


def test_on_vms_share_one_revision_per_distinct_spec(shared):
    for i in range(5):
        shared.apply(vm(f"vm{i}"))
    assert {pins(shared, f"vm{i}") for i in range(5)} == {pins(shared, "vm0")}
    it_name, pref_name = pins(shared, "vm0")
    assert revision_names(shared) == sorted([it_name, pref_name])
    assert re.fullmatch(r"csmall-vmit-[0-9a-f]{16}", it_name)
    assert re.fullmatch(r"cirros-vmp-[0-9a-f]{16}", pref_name)
    # the documented hash: sha256 of the canonical JSON of kind, name and spec
    payload = json.dumps({"kind": "VirtualMachineInstancetype", "name": "csmall", "spec": IT["spec"]},
                         sort_keys=True, separators=(",", ":"))
    assert it_name == "csmall-vmit-" + hashlib.sha256(payload.encode()).hexdigest()[:16]
    cr = shared.get("ControllerRevision", it_name)
    it = shared.get("VirtualMachineInstancetype", "csmall")
    assert cr["metadata"]["labels"] == {
        "instancetype.kubevirt.io/object-generation": "1",
        "instancetype.kubevirt.io/object-kind": "VirtualMachineInstancetype",
        "instancetype.kubevirt.io/object-name": "csmall",
        "instancetype.kubevirt.io/object-uid": it["metadata"]["uid"],
        "instancetype.kubevirt.io/object-version": "v1beta1",
        SHARED_LABEL: "true"}
    assert "ownerReferences" not in cr["metadata"]
    assert cr["data"]["spec"] == IT["spec"] and cr["revision"] == 0
    status = shared.get("VirtualMachine", "vm3")["status"]
    assert status["instancetypeRef"]["controllerRevisionRef"]["name"] == it_name
    assert status["printableStatus"] == "Running" and guest_memory(shared, "vm3") == "128Mi"


def test_each_namespace_has_its_own_shared_revision(shared):
    shared.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    cluster_it = builders.instancetype_obj("u1", cpu=1, memory="1Gi", kind="VirtualMachineClusterInstancetype")
    shared.apply(cluster_it)
    for ns in ("default", "other"):
        shared.apply(builders.vm("a", namespace=ns, runStrategy="Always", instancetype={"name": "u1"},
                                 domain={"devices": {}}, volumes=[{"name": "d", "containerDisk": {"image": "cirros"}}]))
    a = shared.get("VirtualMachine", "a", "default")["spec"]["instancetype"]["revisionName"]
    assert re.fullmatch(r"u1-vmcit-[0-9a-f]{16}", a)
    assert shared.get("VirtualMachine", "a", "other")["spec"]["instancetype"]["revisionName"] == a
    assert revision_names(shared, "default") == [a] == revision_names(shared, "other")


def test_long_object_names_are_shortened_within_a_dns_subdomain():
    name = ("a" * 60 + ".") * 4 + "b" * 8   # 252 characters, a valid subdomain
    obj = builders.instancetype_obj(name, cpu=1, memory="1Gi")
    built = SE.build_shared_revision(obj, "default")
    rev = built["metadata"]["name"]
    assert len(rev) <= 253 and subdomain_errors(rev) == []
    assert rev.startswith("a" * 60) and re.search(r"[a-z0-9]-vmit-[0-9a-f]{16}$", rev)
    assert SE.is_shared_name(rev) and not SE.is_shared_name(f"vm1-{name}-6709b990-f717-44fe-a8ff-cb441d20b904-1")


# --- immutability -----------------------------------------------------------------------------------

def test_a_pinned_vm_keeps_its_spec_when_the_object_changes(shared):
    shared.apply(vm("vm1"))
    first = pins(shared, "vm1")[0]
    before = shared.get("ControllerRevision", first)
    edited = json.loads(json.dumps(IT))
    edited["spec"]["memory"]["guest"] = "256Mi"
    shared.apply(edited)
    shared.restart("vm1")
    assert guest_memory(shared, "vm1") == "128Mi" and pins(shared, "vm1")[0] == first
    assert shared.get("ControllerRevision", first) == before          # never rewritten
    shared.apply(vm("vm2"))                                           # the next VM: the new spec
    second = pins(shared, "vm2")[0]
    assert second != first and guest_memory(shared, "vm2") == "256Mi"
    assert shared.get("ControllerRevision", second)["metadata"]["labels"][
        "instancetype.kubevirt.io/object-generation"] == "2"
    edited["spec"]["memory"]["guest"] = "128Mi"                       # back to the first spec
    shared.apply(edited)
    shared.apply(vm("vm3"))
    assert pins(shared, "vm3")[0] == first
    assert len(revision_names(shared)) == 3


# --- collection -------------------------------------------------------------------------------------

def test_deleting_vms_deletes_a_shared_revision_with_its_last_reference(shared):
    for i in range(3):
        shared.apply(vm(f"vm{i}"))
    names = revision_names(shared)
    shared.delete("VirtualMachine", "vm0")
    shared.delete("VirtualMachine", "vm1")
    assert revision_names(shared) == names
    shared.delete("VirtualMachine", "vm2")
    assert revision_names(shared) == []
    assert list(shared.list("VirtualMachineInstance")) == []


def test_repinning_or_clearing_releases_the_old_revision(shared):
    shared.apply(vm("vm1")), shared.apply(vm("vm2"))
    old_it, _ = pins(shared, "vm1")
    edited = json.loads(json.dumps(IT))
    edited["spec"]["cpu"]["guest"] = 2
    shared.apply(edited)
    shared.apply(vm("vm3"))
    new_it, _ = pins(shared, "vm3")
    for name in ("vm1", "vm2"):
        stored = shared.get("VirtualMachine", name)
        stored["spec"]["instancetype"]["revisionName"] = new_it     # re-pinned by hand
        shared.update(stored)
        if name == "vm1":
            assert old_it in revision_names(shared)                  # vm2 still pins it
    assert old_it not in revision_names(shared)
    # clearing the pin releases it too; the next start captures the current spec again
    stored = shared.get("VirtualMachine", "vm3")
    stored["spec"]["preference"].pop("revisionName")
    shared.update(stored)
    assert len(revision_names(shared)) == 2


def test_reference_policy_expand_releases_shared_revisions_without_deleting_them_for_others(shared):
    shared.apply(vm("vm1")), shared.apply(vm("vm2"))
    names = revision_names(shared)
    switch(shared, True, instancetype={"referencePolicy": "expandAll"})
    assert "instancetype" not in shared.get("VirtualMachine", "vm1")["spec"]
    assert revision_names(shared) == []       # both expanded: nobody pins them
    shared.apply(vm("vm3"))                   # expandAll: expanded at once, no revision
    assert revision_names(shared) == []
    switch(shared, True, instancetype={"referencePolicy": "reference"})
    shared.apply(vm("vm4")), shared.apply(vm("vm5"))
    assert revision_names(shared) == names


def test_a_stale_holder_hint_never_keeps_a_revision_nor_loses_one(shared):
    for name in ("a", "b", "c"):
        shared.apply(vm(name))
    first = pins(shared, "a")[0]
    shared.delete("VirtualMachine", "a")                       # remembers b or c as a holder
    edited = json.loads(json.dumps(IT))
    edited["spec"]["cpu"]["guest"] = 2
    shared.apply(edited)
    for name in ("b", "c"):                                    # whichever is remembered stops pinning it
        if name == "c":
            assert first in revision_names(shared)             # b pinned it until now... c still does
        stored = shared.get("VirtualMachine", name)
        stored["spec"]["instancetype"].pop("revisionName")
        shared.update(stored)
        shared.restart(name)
    assert first not in revision_names(shared)
    # a hint naming a VM that never pinned the revision is only a read
    edited["spec"]["cpu"]["guest"] = 3
    shared.apply(edited)
    shared.apply(vm("d"))
    third = pins(shared, "d")[0]
    shared.shared_revisions.holders[("default", third)] = "b"                      # b pins the second spec's revision
    shared.delete("VirtualMachine", "d")
    assert third not in revision_names(shared) and pins(shared, "b")[0] in revision_names(shared)
    shared.delete("VirtualMachine", "b"), shared.delete("VirtualMachine", "c")
    assert revision_names(shared) == []


def _delete_behind_the_controller(store, name):
    """The VM gone without the controller: its finalizer dropped, then deleted in the store."""
    vm_ = store.get("VirtualMachine", name)
    vm_["metadata"]["finalizers"] = []
    store.update(vm_)
    store.delete("VirtualMachine", name)


def test_sweep_collects_what_a_missed_release_left(shared):
    shared.apply(vm("vm1")), shared.apply(vm("vm2"))
    names = revision_names(shared)
    _delete_behind_the_controller(shared.store, "vm1")
    assert shared.shared_revisions.sweep(shared.store) == []
    _delete_behind_the_controller(shared.store, "vm2")
    assert revision_names(shared) == names
    assert sorted(shared.shared_revisions.sweep(shared.store)) == [("default", n) for n in names]
    assert revision_names(shared) == []


def test_a_collected_revision_is_restored_while_the_object_holds_its_spec(shared):
    shared.apply(vm("vm1"))
    it_name, pref_name = pins(shared, "vm1")
    shared.store.delete("ControllerRevision", it_name)      # as a racing collection would
    shared.restart("vm1")
    assert shared.get("ControllerRevision", it_name)["data"]["spec"] == IT["spec"]
    assert guest_memory(shared, "vm1") == "128Mi"
    edited = json.loads(json.dumps(PREF))
    edited["spec"]["devices"]["preferredDiskBus"] = "sata"
    shared.apply(edited)
    shared.store.delete("ControllerRevision", pref_name)    # gone, and its spec with it
    shared.stop("vm1")
    shared.start("vm1")
    failure = [c for c in shared.get("VirtualMachine", "vm1")["status"]["conditions"] if c["type"] == "Failure"][0]
    assert failure["reason"] == "FailedFindPreference" and f'"{pref_name}" not found' in failure["message"]


# --- concurrency ------------------------------------------------------------------------------------

class _RacingStore(SqliteStore):
    """A store whose first create loses to another writer that creates `rival` first (a real second
    connection to the same file, as a second controller process would be)."""

    rival: dict | None = None

    def create(self, obj, *, namespace=None):
        if self.rival is not None:
            rival, self.rival = self.rival, None
            with SqliteStore(self.path) as other:
                other.create(rival)
        return super().create(obj, namespace=namespace)


def test_a_lost_create_race_with_equal_content_reuses_the_winners_revision(shared):
    obj = shared.get("VirtualMachineInstancetype", "csmall")
    built = SE.build_shared_revision(obj, "default")
    with _RacingStore(shared.store.path) as store:
        store.rival = json.loads(json.dumps(built))
        store.get = _not_found_once(store.get)     # both saw no revision before creating
        cr = S.SharedRevisions().pin(store, obj, "VirtualMachineInstancetype", "default")
    assert cr["metadata"]["name"] == built["metadata"]["name"]
    assert revision_names(shared) == [built["metadata"]["name"]]


def test_a_lost_create_race_with_other_content_is_a_conflict(shared):
    obj = shared.get("VirtualMachineInstancetype", "csmall")
    built = SE.build_shared_revision(obj, "default")
    rival = json.loads(json.dumps(built))
    rival["data"]["spec"]["cpu"]["guest"] = 8
    with _RacingStore(shared.store.path) as store:
        store.rival = rival
        store.get = _not_found_once(store.get)
        with pytest.raises(Error, match="found existing ControllerRevision with unexpected data: csmall-vmit-"):
            S.SharedRevisions().pin(store, obj, "VirtualMachineInstancetype", "default")


def _not_found_once(get):
    seen = []

    def first_get_misses(kind, name, namespace=None):
        if kind == "ControllerRevision" and not seen:
            seen.append(name)
            raise NotFound(f'controllerrevisions.apps "{name}" not found')
        return get(kind, name, namespace)
    return first_get_misses


def test_an_existing_revision_of_other_content_under_the_shared_name_is_an_error(shared):
    obj = shared.get("VirtualMachineInstancetype", "csmall")
    forged = SE.build_shared_revision(obj, "default")
    forged["data"]["spec"]["cpu"]["guest"] = 4
    shared.store.create(forged)
    shared.apply(vm("vm1"))
    failure = [c for c in shared.get("VirtualMachine", "vm1")["status"]["conditions"] if c["type"] == "Failure"][0]
    assert failure["reason"] == "FailedCreate"
    assert "found existing ControllerRevision with unexpected data: csmall-vmit-" in failure["message"]


def test_concurrent_processes_starting_vms_on_one_spec_create_it_once(shared, tmp_path):
    state = shared.store.path
    shared.close()
    files = []
    for i in range(6):
        path = tmp_path / f"vm{i}.json"
        path.write_text(json.dumps(vm(f"vm{i}")))
        files.append(path)
    procs = [subprocess.Popen([sys.executable, "-m", "instancetype", "--state", str(state), "apply", "-f", str(f)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for f in files]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    with Cluster.open(str(state), catalog=False) as c:
        assert len(revision_names(c)) == 2
        assert len({pins(c, f"vm{i}") for i in range(6)}) == 1
        assert all(c.get("VirtualMachine", f"vm{i}")["status"]["printableStatus"] == "Running" for i in range(6))


def test_the_store_refuses_a_second_create_of_the_same_name(shared):
    shared.apply(vm("vm1"))
    cr = shared.get("ControllerRevision", pins(shared, "vm1")[0])
    with pytest.raises(AlreadyExists):
        shared.store.create({k: v for k, v in cr.items() if k != "metadata"} |
                            {"metadata": {"name": cr["metadata"]["name"], "namespace": "default"}})


# --- switching ----------------------------------------------------------------------------------------

def test_vms_pinned_before_the_switch_keep_their_own_revisions(cluster):
    cluster.apply(IT), cluster.apply(PREF), cluster.apply(vm("old"))
    own = pins(cluster, "old")
    switch(cluster, True)
    cluster.restart("old")
    assert pins(cluster, "old") == own and guest_memory(cluster, "old") == "128Mi"
    cluster.apply(vm("new"))
    assert all(SE.is_shared_name(n) for n in pins(cluster, "new"))
    cluster.delete("VirtualMachine", "old")
    assert revision_names(cluster) == sorted(pins(cluster, "new"))


def test_turning_the_switch_off_again_is_safe(shared):
    shared.apply(vm("a")), shared.apply(vm("b"))
    shared_pins = pins(shared, "a")
    switch(shared, False)
    shared.apply(vm("c"))
    assert not any(SE.is_shared_name(n) for n in pins(shared, "c"))    # per-VM again
    shared.restart("a")
    assert pins(shared, "a") == shared_pins and guest_memory(shared, "a") == "128Mi"
    shared.delete("VirtualMachine", "a")
    assert set(shared_pins) <= set(revision_names(shared))
    shared.delete("VirtualMachine", "b")                                # still collected when off
    assert revision_names(shared) == sorted(pins(shared, "c"))


# --- old payloads ---------------------------------------------------------------------------------------

def test_an_old_payload_under_a_shared_name_is_replaced_by_a_new_shared_revision(shared):
    # Never rewritten (data is immutable on an API server): the VMs pinned to it move, one by one,
    # to the shared revision of the decoded object, and it goes when the last one has moved.
    obj = shared.get("VirtualMachineInstancetype", "csmall")
    built = SE.build_shared_revision(obj, "default")
    name = built["metadata"]["name"]
    spec = base64.b64encode(json.dumps(IT["spec"]).encode()).decode()
    shared.store.create({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": name},
                         "data": {"apiVersion": "", "spec": spec}})
    for n in ("stopped", "pinned"):
        v = vm(n, strategy="Always" if n == "pinned" else "Halted")
        v["spec"]["instancetype"]["revisionName"] = name         # pinned to it by an older release
        shared.apply(v)
    new = pins(shared, "pinned")[0]          # named by the decoded object's content
    assert new != name and SE.is_shared_name(new)
    assert shared.get("VirtualMachine", "pinned")["status"]["instancetypeRef"]["controllerRevisionRef"]["name"] == new
    cr = shared.get("ControllerRevision", new)
    assert SE.is_shared(cr) and cr["metadata"]["labels"]["instancetype.kubevirt.io/object-version"] == "v1beta1"
    assert cr["data"]["spec"]["memory"] == IT["spec"]["memory"]
    assert guest_memory(shared, "pinned") == "128Mi"
    assert shared.get("ControllerRevision", name)                # "stopped" still pins it
    shared.start("stopped")
    assert pins(shared, "stopped")[0] == new
    with pytest.raises(NotFound):
        shared.get("ControllerRevision", name)
    shared.apply(vm("fresh"))                                    # a new pin on that spec: the same one
    assert pins(shared, "fresh")[0] in (name, new)


def test_an_unlabelled_payload_found_when_capturing_is_not_reused(shared):
    # Version detection is by label (revisions.needs_upgrade): a payload without them is old, so
    # the pin goes to its replacement (engine upgraded_shared_name), never to it.
    obj = shared.get("VirtualMachineInstancetype", "csmall")
    built = SE.build_shared_revision(obj, "default")
    old = built["metadata"]["name"]
    name = SE.upgraded_shared_name(built, old)
    shared.store.create({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": old},
                         "data": {"apiVersion": "instancetype.kubevirt.io/v1beta1",
                                  "kind": "VirtualMachineInstancetype", "metadata": {"name": "csmall"},
                                  "spec": {"memory": {"guest": "128Mi"}, "cpu": {"guest": 1}}}})
    shared.apply(vm("vm1"))
    assert pins(shared, "vm1")[0] == name
    cr = shared.get("ControllerRevision", name)
    assert SE.is_shared(cr) and cr["data"]["kind"] == "VirtualMachineInstancetype"
    assert cr["data"]["metadata"]["name"] == "csmall"
    assert guest_memory(shared, "vm1") == "128Mi"


# --- whose memory ---------------------------------------------------------------------------------

def test_each_cluster_remembers_its_own_pins(tmp_path):
    """Two stores in one process: what one controller remembers (built, pinned, holders) is its
    own, and the module keeps no state of its own."""
    with Cluster.open(str(tmp_path / "a.db"), catalog=False) as a, \
            Cluster.open(str(tmp_path / "b.db"), catalog=False) as b:
        for c in (a, b):
            switch(c, True)
            c.apply(IT), c.apply(PREF)
        a.apply(vm("vm1")), a.apply(vm("vm2")), a.apply(vm("vm3"))
        a.delete("VirtualMachine", "vm3")                  # a release: vm1 or vm2 remembered holding
        assert a.shared_revisions.built and a.shared_revisions.holders
        assert not b.shared_revisions.built and not b.shared_revisions.holders
        b.apply(vm("vm1"))
        assert pins(a, "vm1") == pins(b, "vm1")            # the same content, the same names
        assert a.shared_revisions is not b.shared_revisions
    assert not [k for k, v in vars(S).items() if isinstance(v, (dict, list, set)) and not k.startswith("__")]
