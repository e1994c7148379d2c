"""The four CRDs generated from the typed specs (virt-operator components/crds.go
NewVirtualMachineInstancetypeCrd and its three siblings)."""
from instancetype.api.crd import crd_for, generate_crds


def test_four_crds_with_kubevirts_names_and_shape():
    crds = generate_crds()
    assert [c["metadata"]["name"] for c in crds] == [
        "virtualmachineinstancetypes.instancetype.kubevirt.io",
        "virtualmachineclusterinstancetypes.instancetype.kubevirt.io",
        "virtualmachinepreferences.instancetype.kubevirt.io",
        "virtualmachineclusterpreferences.instancetype.kubevirt.io"]
    for c in crds:
        assert c["metadata"]["labels"] == {"kubevirt.io": ""}
        spec = c["spec"]
        assert spec["conversion"] == {"strategy": "None"}
        [v] = spec["versions"]
        assert (v["name"], v["served"], v["storage"]) == ("v1beta1", True, True)
        assert "subresources" not in v and "additionalPrinterColumns" not in v
        assert v["schema"]["openAPIV3Schema"]["required"] == ["spec"]


def test_categories_and_short_names():
    it = crd_for("VirtualMachineInstancetype")["spec"]
    assert it["names"]["categories"] == ["all"] and it["scope"] == "Namespaced"
    assert it["names"]["shortNames"] == ["vminstancetype", "vminstancetypes", "vmf", "vmfs"]
    cit = crd_for("VirtualMachineClusterInstancetype")["spec"]
    assert "categories" not in cit["names"] and cit["scope"] == "Cluster"


def test_cluster_schema_equals_namespaced_but_for_description():
    def schema(kind):
        s = crd_for(kind)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        s.pop("description")
        return s
    assert schema("VirtualMachineInstancetype") == schema("VirtualMachineClusterInstancetype")
    assert schema("VirtualMachinePreference") == schema("VirtualMachineClusterPreference")
    spec = schema("VirtualMachinePreference")["properties"]["spec"]["properties"]
    rng = spec["devices"]["properties"]["preferredRng"]
    assert rng["type"] == "object" and set(rng) == {"type", "description"}
    assert "preferredLaunchSecurity" in spec
