"""kubectl's last-applied-configuration annotation, written once (`controller.apply`) for both
stores. The two copies disagreed: the embedded store wrote Python's `json.dumps` (`<` unescaped,
`1e6` as `1000000.0`, no namespace, no empty `annotations`); the cluster command line Go's
escaping. The expected texts are what kubectl writes (`GetModifiedConfiguration`: json.Encoder of
the unstructured object), printed by Go."""
from __future__ import annotations

import json

from instancetype.controller.apply import LAST_APPLIED, last_applied_text, original_of, with_last_applied


def _it(**meta) -> dict:
    return {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
            "metadata": {"name": "a<b>&c", **meta},
            "spec": {"cpu": {"guest": 2}, "memory": {"guest": "1Gi", "overcommitPercent": 1e6}}}


EXPECTED = ('{"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"VirtualMachineInstancetype",'
            '"metadata":{"annotations":{},"name":"a\\u003cb\\u003e\\u0026c","namespace":"ns"},'
            '"spec":{"cpu":{"guest":2},"memory":{"guest":"1Gi","overcommitPercent":1000000}}}\n')


def test_the_text_is_kubectl_s():
    assert last_applied_text(_it(), "ns") == EXPECTED
    # an earlier annotation is left out, the others kept; the namespace the object names wins
    old = _it(namespace="ns", annotations={LAST_APPLIED: "{}", "k": "<v>"})
    assert last_applied_text(old, None) == EXPECTED.replace('"annotations":{}', '"annotations":{"k":"\\u003cv\\u003e"}')


def test_a_cluster_scoped_object_gets_no_namespace():
    obj = dict(_it(), kind="VirtualMachineClusterInstancetype")
    assert '"namespace"' not in last_applied_text(obj, None)


def test_with_last_applied_sets_namespace_and_annotation_and_reads_back():
    applied = with_last_applied(_it(), "ns")
    assert applied["metadata"]["namespace"] == "ns"
    assert applied["metadata"]["annotations"] == {LAST_APPLIED: EXPECTED}
    assert original_of(applied) == json.loads(EXPECTED)


def test_both_stores_write_the_same_annotation(tmp_path):
    """The embedded store's apply writes the text kubectl would (the cluster command line sends
    `with_last_applied` too: `cli/remote.RemoteCluster.apply`)."""
    from instancetype.controller import Cluster

    obj = dict(_it(namespace="ns", annotations={"note": "<&>"}), metadata={"name": "it1", "namespace": "ns",
                                                                        "annotations": {"note": "<&>"}})
    with Cluster.open(str(tmp_path / "state.db")) as cluster:
        cluster.store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
        obj["spec"] = {"cpu": {"guest": 2}, "memory": {"guest": "1Gi"}}
        stored = cluster.apply(obj).object
    text = stored["metadata"]["annotations"][LAST_APPLIED]
    assert text == last_applied_text(obj, "ns")
    assert '"note":"\\u003c\\u0026\\u003e"' in text
