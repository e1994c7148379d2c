"""The pure deployment view for the store: virt-operator's metadata on the cluster objects."""
from __future__ import annotations

from instancetype import catalog


def test_operator_metadata():
    objs = catalog.cluster_objects(version="v1.9.0", registry="quay.io/kubevirt", identifier="abc",
                                   generation=3, product_name="my product", product_version="1.2",
                                   product_component="")
    assert len(objs) == len(catalog.instancetypes()) + len(catalog.preferences())
    assert {o["kind"] for o in objs} == {"VirtualMachineClusterInstancetype", "VirtualMachineClusterPreference"}
    for o in objs:
        labels, ann = o["metadata"]["labels"], o["metadata"]["annotations"]
        assert labels["app.kubernetes.io/component"] == "kubevirt"
        assert labels["app.kubernetes.io/managed-by"] == "virt-operator"
        assert labels["app.kubernetes.io/version"] == "1.2"
        assert "app.kubernetes.io/part-of" not in labels          # "my product" is not a valid label value
        assert labels["instancetype.kubevirt.io/common-instancetypes-version"] == "v1.7.0"
        assert ann["kubevirt.io/install-strategy-version"] == "v1.9.0"
        assert ann["kubevirt.io/install-strategy-registry"] == "quay.io/kubevirt"
        assert ann["kubevirt.io/install-strategy-identifier"] == "abc"
        assert ann["kubevirt.io/generation"] == "3"


def test_exact_vendored_set_and_purity():
    objs = catalog.cluster_objects(deprecated=False, product_component="cnv")
    assert len(objs) == 65 + 54
    assert all(o["metadata"]["labels"]["app.kubernetes.io/component"] == "cnv" for o in objs)
    assert all("kubevirt.io/generation" not in o["metadata"]["annotations"] for o in objs)
    # the catalogue itself is untouched
    assert "app.kubernetes.io/component" not in catalog.instancetypes()[0]["metadata"]["labels"]


def test_all_objects_has_every_kind():
    objs = catalog.all_objects()
    assert len(objs) == 2 * (77 + 54)
    assert len({(o["kind"], o["metadata"]["name"]) for o in objs}) == len(objs)
