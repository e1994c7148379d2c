"""The manifests `instancetype install --print` writes, parsed back: no cluster needed."""
from __future__ import annotations

import base64
import subprocess
import sys

import pytest
import yaml

from instancetype.api import kinds, v1alpha
from instancetype.deploy import WebhookTarget, manifests
from instancetype.lifecycle import catalog_sync

BASE = "https://127.0.0.1:8443"
CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "instancetype", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def printed(tmp_path_factory) -> list[dict]:
    ca = tmp_path_factory.mktemp("ca") / "ca.pem"
    ca.write_bytes(CA)
    proc = cli("install", "--print", "--webhook-url", BASE, "--ca-bundle", str(ca))
    assert proc.returncode == 0, proc.stderr
    assert "&id" not in proc.stdout and "*id" not in proc.stdout   # no YAML aliases
    return list(yaml.safe_load_all(proc.stdout))


def of_kind(objs: list[dict], kind: str) -> list[dict]:
    return [o for o in objs if o["kind"] == kind]


def test_print_is_the_manifests_in_install_order(printed):
    kinds_in_order = [o["kind"] for o in printed]
    assert kinds_in_order[:14] == ["CustomResourceDefinition"] * 14
    assert kinds_in_order[-2:] == ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]
    assert len(printed) == len(manifests(target=WebhookTarget(url=BASE, ca_bundle=CA)))


def _non_structural(node: dict, path: str) -> list[str]:
    """Nodes of an openAPIV3Schema without a `type` (allowed only where unknown fields are kept
    or for int-or-string), and metadata with properties."""
    bad = []
    if not isinstance(node, dict):
        return [path]
    if "type" not in node and not node.get("x-kubernetes-preserve-unknown-fields") \
            and not node.get("x-kubernetes-int-or-string"):
        bad.append(path)
    if node.get("x-kubernetes-int-or-string"):
        assert node.get("anyOf") in (None, [{"type": "integer"}, {"type": "string"}]), path
    for name, child in (node.get("properties") or {}).items():
        bad += _non_structural(child, f"{path}.{name}")
    if "items" in node:
        bad += _non_structural(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        bad += _non_structural(node["additionalProperties"], f"{path}{{}}")
    return bad


def test_every_crd_schema_is_structural(printed):
    for crd in of_kind(printed, "CustomResourceDefinition"):
        for version in crd["spec"]["versions"]:
            schema = version["schema"]["openAPIV3Schema"]
            assert schema["type"] == "object"
            assert schema["properties"]["metadata"] == {"type": "object"}
            assert _non_structural(schema, crd["metadata"]["name"]) == []


def test_every_crd_is_marked_ours_and_stores_one_version(printed):
    for crd in of_kind(printed, "CustomResourceDefinition"):
        assert crd["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "instancetype"
        assert sum(v["storage"] for v in crd["spec"]["versions"]) == 1


def test_the_type_crds_store_v1beta1_and_serve_the_alphas_deprecated(printed):
    for kind in kinds.ALL_TYPE_KINDS:
        r = kinds.BY_KIND[kind]
        crd = next(c for c in printed if c["metadata"].get("name") == r.qualified)
        versions = {v["name"]: v for v in crd["spec"]["versions"]}
        assert list(versions) == ["v1alpha1", "v1alpha2", "v1beta1"]
        assert versions["v1beta1"]["storage"] and not versions["v1beta1"].get("deprecated")
        assert crd["spec"]["conversion"] == {"strategy": "None"}
        for old in ("v1alpha1", "v1alpha2"):
            assert versions[old]["served"] and not versions[old]["storage"] and versions[old]["deprecated"]
            assert versions[old]["deprecationWarning"] == v1alpha.deprecation_warning(old, kind)
    crd = next(c for c in printed if c["metadata"].get("name") == "virtualmachineclusterinstancetypes.instancetype.kubevirt.io")
    # KubeVirt's own spelling (crds.go v1.0-v1.5)
    assert crd["spec"]["versions"][0]["deprecationWarning"] == (
        "instancetype.kubevirt.io/v1alpha1 VirtualMachineClusterInstanceTypes is now deprecated and will be removed in v1.")


def test_the_flavor_kinds_are_deprecated_with_the_flavor_warning(printed):
    flavors = [c for c in of_kind(printed, "CustomResourceDefinition") if c["spec"]["group"] == "flavor.kubevirt.io"]
    assert sorted(c["spec"]["names"]["kind"] for c in flavors) == sorted(kinds.FLAVOR_KINDS)
    for crd in flavors:
        (version,) = crd["spec"]["versions"]
        kind = crd["spec"]["names"]["kind"]
        assert version["deprecationWarning"] == v1alpha.flavor_warning(kind, kinds.FLAVOR_KINDS[kind])
        assert "shortNames" not in crd["spec"]["names"]   # they belong to the instancetype kinds


def test_kubevirt_kinds_have_kubevirts_names_columns_and_subresources(printed):
    by_name = {c["metadata"]["name"]: c for c in of_kind(printed, "CustomResourceDefinition")}
    vm = by_name["virtualmachines.kubevirt.io"]
    assert vm["spec"]["names"]["shortNames"] == ["vm", "vms"] and vm["spec"]["names"]["categories"] == ["all"]
    (v1,) = vm["spec"]["versions"]
    assert [c["name"] for c in v1["additionalPrinterColumns"]] == ["Age", "Status", "Ready"]
    assert v1["subresources"] == {"status": {}}
    assert v1["schema"]["openAPIV3Schema"]["required"] == ["spec"]
    # seed 002's spec.flavor is kept for the webhooks to rewrite
    assert "flavor" in v1["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    vmi = by_name["virtualmachineinstances.kubevirt.io"]
    assert vmi["spec"]["names"]["shortNames"] == ["vmi", "vmis"]
    assert "subresources" not in vmi["spec"]["versions"][0]   # as KubeVirt's: virt-handler writes it whole
    kv = by_name["kubevirts.kubevirt.io"]
    assert kv["spec"]["names"]["shortNames"] == ["kv", "kvs"]
    assert kv["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "x-kubernetes-preserve-unknown-fields"] is True
    for name, short in [("datavolumes.cdi.kubevirt.io", ["dv", "dvs"]), ("datasources.cdi.kubevirt.io", ["das"]),
                        ("volumesnapshots.snapshot.storage.k8s.io", ["vs"])]:
        assert by_name[name]["spec"]["names"]["shortNames"] == short


def test_the_vm_schema_lists_every_field_of_the_type_table(printed):
    from instancetype.api.kubevirt_types import kubevirt_types

    types = kubevirt_types()
    vm = next(c for c in printed if c["metadata"].get("name") == "virtualmachines.kubevirt.io")
    spec = vm["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert set(types["kv.VirtualMachineSpec"]) <= set(spec["properties"])
    domain = spec["properties"]["template"]["properties"]["spec"]["properties"]["domain"]
    assert set(domain["properties"]) == set(types["kv.DomainSpec"])


def test_the_vm_crd_and_the_schema_check_require_the_same_input_fields(printed):
    """v1.9 admits an input device without `type` (the conformance cases): the installed CRD and
    the webhooks' schema check agree, and both require its `name`."""
    from instancetype.engine.vm_validation.schema import check_vm_schema

    vm = next(c for c in printed if c["metadata"].get("name") == "virtualmachines.kubevirt.io")
    spec = vm["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    domain = spec["properties"]["template"]["properties"]["spec"]["properties"]["domain"]
    inputs = domain["properties"]["devices"]["properties"]["inputs"]["items"]
    assert inputs["required"] == ["name"]

    def causes(devices):
        return [c.message for c in check_vm_schema({"spec": {"template": {"spec": {"domain": {"devices": devices}}}}})]

    assert causes({"inputs": [{"name": "tablet"}]}) == []
    assert causes({"inputs": [{"type": "tablet"}]}) == [
        "spec.template.spec.domain.devices.inputs.name in body is required"]


def test_the_webhooks_are_kubevirts(printed):
    mutating, validating = printed[-2], printed[-1]
    assert mutating["metadata"]["name"] == "virt-api-mutator"
    assert validating["metadata"]["name"] == "virt-api-validator"
    got = {}
    for conf in (mutating, validating):
        for hook in conf["webhooks"]:
            assert hook["failurePolicy"] == "Fail" and hook["sideEffects"] == "None"
            assert hook["admissionReviewVersions"] == ["v1"] and hook["timeoutSeconds"] == 10
            assert base64.b64decode(hook["clientConfig"]["caBundle"]) == CA
            url = hook["clientConfig"]["url"]
            assert url.startswith(BASE + "/")
            got[hook["name"]] = (conf["kind"], url[len(BASE):], hook["rules"][0]["operations"],
                                 hook["rules"][0]["resources"])
    assert got == {
        "virtualmachines-mutator.kubevirt.io": ("MutatingWebhookConfiguration", "/virtualmachines-mutate",
                                                ["CREATE", "UPDATE"], ["virtualmachines"]),
        "virtualmachineinstances-mutator.kubevirt.io": ("MutatingWebhookConfiguration",
                                                        "/virtualmachineinstances-mutate", ["CREATE", "UPDATE"],
                                                        ["virtualmachineinstances"]),
        "virtualmachine-validator.kubevirt.io": ("ValidatingWebhookConfiguration", "/virtualmachines-validate",
                                                 ["CREATE", "UPDATE"], ["virtualmachines"]),
        "virtualmachineinstancetype-validator.instancetype.kubevirt.io": (
            "ValidatingWebhookConfiguration", "/virtualmachineinstancetypes-validate", ["CREATE", "UPDATE"],
            ["virtualmachineinstancetypes"]),
        "virtualmachineclusterinstancetype-validator.instancetype.kubevirt.io": (
            "ValidatingWebhookConfiguration", "/virtualmachineclusterinstancetypes-validate", ["CREATE", "UPDATE"],
            ["virtualmachineclusterinstancetypes"]),
        "virtualmachinepreference-validator.instancetype.kubevirt.io": (
            "ValidatingWebhookConfiguration", "/virtualmachinepreferences-validate", ["CREATE", "UPDATE"],
            ["virtualmachinepreferences"]),
        "virtualmachineclusterpreference-validator.instancetype.kubevirt.io": (
            "ValidatingWebhookConfiguration", "/virtualmachineclusterpreferences-validate", ["CREATE", "UPDATE"],
            ["virtualmachineclusterpreferences"]),
    }
    # the names are the ones admission's refusals carry
    from instancetype.lifecycle import admission

    assert admission.VM_MUTATOR in got and admission.VM_VALIDATOR in got
    assert all(admission.type_validator(k) in got for k in kinds.ALL_TYPE_KINDS)


def test_service_webhooks_for_gitops(tmp_path):
    proc = cli("install", "--print", "--service", "virt/instancetype-webhook", "--namespace", "virt")
    assert proc.returncode == 0, proc.stderr
    objs = list(yaml.safe_load_all(proc.stdout))
    for hook in objs[-1]["webhooks"] + objs[-2]["webhooks"]:
        ref = hook["clientConfig"]["service"]
        assert (ref["namespace"], ref["name"], ref["port"]) == ("virt", "instancetype-webhook", 443)
        assert ref["path"] == kinds.WEBHOOK_BY_PATH[ref["path"]].path
        assert "caBundle" not in hook["clientConfig"] and "url" not in hook["clientConfig"]
    sa = next(o for o in objs if o["kind"] == "ServiceAccount")
    assert sa["metadata"] == {"name": "instancetype-controller", "namespace": "virt",
                              "labels": {"app.kubernetes.io/managed-by": "instancetype"}}


def test_the_cluster_role_is_least_privilege(printed):
    (role,) = [r for r in of_kind(printed, "ClusterRole") if r["metadata"]["name"] == "instancetype-controller"]
    for rule in role["rules"]:
        assert "secrets" not in rule["resources"] and "configmaps" not in rule["resources"]
        assert "*" not in rule["verbs"] and "*" not in rule["resources"] and "*" not in rule["apiGroups"]
    writable = {(g, r) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]
                if set(rule["verbs"]) & {"create", "update", "patch", "delete"}}
    assert writable == {("kubevirt.io", "virtualmachines"), ("kubevirt.io", "virtualmachineinstances"),
                        ("kubevirt.io", "virtualmachines/status"),
                        ("kubevirt.io", "virtualmachineinstancemigrations"),       # the workload updater's
                        ("kubevirt.io", "virtualmachineinstancemigrations/status"),
                        (kinds.GROUP, "virtualmachineclusterinstancetypes"),
                        (kinds.GROUP, "virtualmachineclusterpreferences"),
                        ("apps", "controllerrevisions"), ("", "events"), ("events.k8s.io", "events"),
                        ("", "nodes"), ("", "nodes/status"),      # the simulated nodes
                        # a VM's dataVolumeTemplates, and the simulated CDI's claims and DataVolume status
                        ("cdi.kubevirt.io", "datavolumes"), ("cdi.kubevirt.io", "datavolumes/status"),
                        ("", "persistentvolumeclaims"), ("", "persistentvolumeclaims/status")}
    # leases: the leader's in its own namespace, the simulated nodes' heartbeats in kube-node-lease
    roles = of_kind(printed, "Role")
    assert sorted(r["metadata"]["namespace"] for r in roles) == ["instancetype-system", "kube-node-lease"]
    assert all(r["rules"] == [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                               "verbs": ["get", "create", "update"]}] for r in roles)


def test_the_kubevirt_object_and_the_catalogue(printed):
    (kv,) = of_kind(printed, "KubeVirt")
    assert (kv["metadata"]["namespace"], kv["metadata"]["name"], kv["spec"]) == ("kubevirt", "kubevirt", {})
    catalogue = of_kind(printed, kinds.CLUSTER_INSTANCETYPE) + of_kind(printed, kinds.CLUSTER_PREFERENCE)
    assert catalogue == catalog_sync.desired_objects(kv, registry="instancetype")
    ann = catalogue[0]["metadata"]["annotations"]
    assert ann["kubevirt.io/install-strategy-registry"] == "instancetype"


def test_catalog_sync_plan_decides_as_virt_operator():
    want = catalog_sync.desired_objects(None, registry="x")
    live = {(o["kind"], o["metadata"]["name"]): o for o in want}
    edited = dict(want[0], spec={"cpu": {"guest": 9}})
    live[(want[0]["kind"], want[0]["metadata"]["name"])] = edited
    del live[(want[1]["kind"], want[1]["metadata"]["name"])]
    stale = dict(want[2], metadata=dict(want[2]["metadata"], name="gone"))
    steps = catalog_sync.plan(want, lambda k, n: live.get((k, n)),
                              lambda k: [stale] if k == want[2]["kind"] else [])
    actions = [(s.action, s.name) for s in steps if s.action != "unchanged"]
    assert actions == [("configured", want[0]["metadata"]["name"]), ("created", want[1]["metadata"]["name"]),
                       ("deleted", "gone")]
    assert catalog_sync.desired_objects({"spec": {"configuration": {"commonInstancetypesDeployment": {
        "enabled": False}}}}, registry="x") == []


@pytest.mark.parametrize("args, message", [
    (["install", "--print"], "error: one of --webhook-url https://HOST:PORT or --service NAMESPACE/NAME is required"),
    (["install", "--print", "--webhook-url", "http://127.0.0.1:1"], 'error: invalid --webhook-url "http://127.0.0.1:1"'),
    (["install", "--print", "--webhook-url", "https://h:1/path"], 'error: invalid --webhook-url "https://h:1/path"'),
    (["install", "--print", "--webhook-url", "https://h:99999"], 'error: invalid --webhook-url "https://h:99999"'),
    (["install", "--print", "--service", "nope"], 'error: invalid --service "nope"'),
    (["install", "--print", "--service", "a/b", "--webhook-url", "https://h:1"], "error: --webhook-url and --service"),
    (["install", "--print", "--service", "a/b", "--ca-bundle", "/nonexistent"], "error: cannot read --ca-bundle"),
    (["install", "--webhook-url", "https://h:1", "--ca-bundle", "/etc/hostname"], "error: --ca-bundle"),
    (["install", "--bogus"], "error: unknown flag: --bogus"),
    (["uninstall"], "error: --kubeconfig is required"),
    (["uninstall", "--kubeconfig", "/nonexistent"], "error: cannot read --kubeconfig /nonexistent"),
])
def test_bad_flags_are_one_clear_line(args, message):
    proc = cli(*args)
    assert proc.returncode == 1
    assert proc.stderr.startswith(message), proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
