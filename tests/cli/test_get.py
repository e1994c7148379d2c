"""`get`, `describe`, `delete`, virtctl `start/stop/restart` and `expand --vm` on the embedded cluster."""
from __future__ import annotations

import json

import pytest

from instancetype.cli.tables import TabWriter, human_duration

from ..builders import vm_object
from ._helpers import INSTANCETYPE, VM, get_json, on_cluster, run, run_process


@pytest.fixture
def state(target):
    """vm1 and its instancetype, on either store."""
    r = run(target, "apply", "-f", "-", stdin=INSTANCETYPE + "---\n" + VM)
    assert r.code == 0, r.err
    return target


@pytest.fixture
def embedded(tmp_path):
    """The same on the embedded store only: the virtctl verbs need KubeVirt's subresource API,
    which only a cluster in a network namespace serves (tests/kube/test_virtctl.py drives them)."""
    s = tmp_path / "state.db"
    assert run(s, "apply", "-f", "-", stdin=INSTANCETYPE + "---\n" + VM).code == 0
    return s


@pytest.mark.parametrize("seconds,text", [(0, "0s"), (113, "113s"), (188, "3m8s"), (347, "5m47s"), (600, "10m"),
                                          (13980, "3h53m"), (7200, "120m"), (4 * 3600, "4h"), (30 * 3600, "30h"),
                                          (3 * 86400 + 3600, "3d1h"), (20 * 86400, "20d"), (-5, "<invalid>")])
def test_age_as_kubectl(seconds, text):
    assert human_duration(seconds) == text


def test_names_plurals_short_names(state):
    for word in ("vm", "vms", "virtualmachine", "virtualmachines", "VirtualMachine", "virtualmachines.kubevirt.io"):
        r = run(state, "get", word)
        assert r.code == 0 and r.out.splitlines()[0].split() == ["NAME", "AGE", "STATUS", "READY"], word
        # The status is the controller's (inline on the embedded store; none runs beside this cluster).
        assert r.out.splitlines()[1].split()[0::2] == (["vm1"] if on_cluster(state) else ["vm1", "Stopped"])
    for word in ("vminstancetype", "virtualmachineinstancetypes", "vmf"):
        assert run(state, "get", word).out.split()[:3] == ["NAME", "AGE", "small"]
    r = run(state, "get", "nosuchthing")
    assert (r.code, r.err) == (1, 'error: the server doesn\'t have a resource type "nosuchthing"\n')


def test_not_found_and_empty(state):
    r = run(state, "get", "vm", "vm1", "x")
    assert r.code == 1 and r.out.split()[4] == "vm1"
    assert r.err == 'Error from server (NotFound): virtualmachines.kubevirt.io "x" not found\n'
    assert run(state, "get", "vmis").err == "No resources found in default namespace.\n"
    assert run(state, "get", "vmis", "-n", "kube-system").err == "No resources found in kube-system namespace.\n"
    assert run(state, "get", "vmis", "-A").err == "No resources found\n"
    assert run(state, "get", "vm", "x", "--ignore-not-found").code == 0


def test_all_namespaces_and_outputs(state):
    r = run(state, "get", "vm", "-A")
    assert r.out.splitlines()[0].split() == ["NAMESPACE", "NAME", "AGE", "STATUS", "READY"]
    rows = [line.split()[:2] for line in r.out.splitlines()[1:]]
    # A cluster's other namespaces hold other tests' objects.
    assert ["default", "vm1"] in rows and (on_cluster(state) or len(rows) == 1)
    assert run(state, "get", "vm", "-o", "name").out == "virtualmachine.kubevirt.io/vm1\n"
    lst = get_json(state, "vm")
    assert lst["kind"] == "List" and [i["metadata"]["name"] for i in lst["items"]] == ["vm1"]
    text = run(state, "get", "vm/vm1", "-o", "yaml").out
    assert text.startswith("apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n")
    assert 'creationTimestamp: "' in text and 'resourceVersion: "' in text
    # One type asked for: plain names (cli-runtime MultipleTypesRequested); several: <kind>.<group>/<name>.
    assert run(state, "get", "vm/vm1").out.splitlines()[1].startswith("vm1 ")
    assert run(state, "get", "vm,vmf").out.splitlines()[1].startswith("virtualmachine.kubevirt.io/vm1 ")
    assert run(state, "get", "vm/vm1", "vmf/small").out.splitlines()[1].startswith("virtualmachine.kubevirt.io/vm1 ")
    assert run(state, "get", "vm", "-o", "json", "--ignore-not-found", "-l", "x=y").out == ""
    r = run(state, "get", "vm", "-o", "bogus")
    assert r.code == 1 and "unable to match a printer" in r.err


def test_label_selector_and_show_labels(state):
    run(state, "apply", "-f", "-", stdin=VM.replace("name: vm1", "name: vm2\n  labels:\n    app: web"))
    assert run(state, "get", "vm", "-l", "app=web", "-o", "name").out == "virtualmachine.kubevirt.io/vm2\n"
    assert run(state, "get", "vm", "-l", "app!=web", "-o", "name").out == "virtualmachine.kubevirt.io/vm1\n"
    out = run(state, "get", "vm", "--show-labels").out.splitlines()
    assert out[0].split()[-1] == "LABELS" and out[1].split()[-1] == "<none>" and out[2].split()[-1] == "app=web"


def test_tabwriter_alignment_matches_go():
    import io

    buf = io.StringIO()
    tw = TabWriter(buf, minwidth=6, padding=3)
    for row in (["NAME", "AGE"], ["cx1.xlarge", "3m8s"], ["m1.xlarge", "3m8s"]):
        tw.row(row)
    tw.flush()
    assert buf.getvalue() == "NAME         AGE\ncx1.xlarge   3m8s\nm1.xlarge    3m8s\n"


def test_describe(state):
    r = run(state, "describe", "vm", "vm1")
    assert r.code == 0
    lines = r.out.splitlines()
    assert lines[0] == "Name:         vm1" and lines[1] == "Namespace:    default"
    assert "API Version:  kubevirt.io/v1" in lines and lines[-1].startswith("Events:")
    assert any(line.strip().startswith("Run Strategy:") for line in lines)
    r = run(state, "describe", "vm", "nope")
    assert (r.code, r.err) == (1, 'Error from server (NotFound): virtualmachines.kubevirt.io "nope" not found\n')


def test_start_stop_restart_messages(embedded):
    state = embedded
    assert run(state, "restart", "vm1").err == (
        'error: error restarting VirtualMachine: Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm1": '
        "RunStategy Halted does not support manual restart requests\n")
    assert run(state, "start", "vm1", "--dry-run").out == "VM vm1 was scheduled to start\n"
    assert run(state, "get", "vmi").err == "No resources found in default namespace.\n"
    assert run(state, "start", "vm1").out == "VM vm1 was scheduled to start\n"
    r = run(state, "start", "vm1")
    assert (r.code, r.err) == (1, 'error: Error starting VirtualMachine Operation cannot be fulfilled on '
                                  'virtualmachine.kubevirt.io "vm1": VM is already running\n')
    assert run(state, "restart", "vm1").out == "VM vm1 was scheduled to restart\n"
    assert run(state, "stop", "vm1").out == "VM vm1 was scheduled to stop\n"
    assert run(state, "get", "vmi").err == "No resources found in default namespace.\n"
    r = run(state, "start", "ghost")
    assert (r.code, r.err) == (1, 'error: Error starting VirtualMachine virtualmachine.kubevirt.io "ghost" not found\n')
    r = run(state, "stop", "ghost")
    assert (r.code, r.err) == (1, 'error: error stopping VirtualMachine virtualmachine.kubevirt.io "ghost" not found\n')
    assert run(state, "stop", "vm1", "--force").err == "error: Must both use --force=true and set --grace-period.\n"
    assert run(state, "start").err == "error: accepts 1 arg(s), received 0\n"


def test_start_paused_and_force_options(embedded):
    """virtctl's `start --paused` (a paused VMI, the VM Paused) and `--force --grace-period`
    (on a cluster: tests/kube/test_virtctl.py::test_start_paused)."""
    state = embedded
    assert run(state, "start", "vm1", "--paused", "--dry-run").out == "VM vm1 was scheduled to start\n"
    assert run(state, "get", "vmi").err == "No resources found in default namespace.\n"
    assert run(state, "start", "vm1", "--paused").out == "VM vm1 was scheduled to start\n"
    vm = get_json(state, "vm", "vm1")
    assert (vm["spec"]["runStrategy"], vm["status"]["printableStatus"]) == ("Always", "Paused")
    vmi = get_json(state, "vmi", "vm1")
    assert vmi["spec"]["startStrategy"] == "Paused"
    assert {c["type"]: c["status"] for c in vmi["status"]["conditions"]} == {
        "Ready": "False", "Paused": "True", "LiveMigratable": "False"}       # a bridge on the pod network
    assert run(state, "get", "vm").out.splitlines()[1].split()[2:] == ["Paused", "False"]
    r = run(state, "restart", "vm1", "--force", "--grace-period=5")
    assert (r.code, r.err) == (1, "error: error force restarting VirtualMachine: For force restart, only gracePeriod=0 "
                                  "is supported for now\n")
    assert run(state, "restart", "vm1", "--force", "--grace-period=0").out == "VM vm1 was scheduled to restart\n"
    assert run(state, "stop", "vm1", "--force", "--grace-period=0").out == "VM vm1 was scheduled to stop\n"
    assert run(state, "get", "vmi").err == "No resources found in default namespace.\n"
    r = run(state, "stop", "vm1", "--force", "--grace-period=0")
    assert (r.code, r.err) == (1, 'error: error force stopping VirtualMachine: Operation cannot be fulfilled on '
                                  'virtualmachine.kubevirt.io "vm1": VM is not running\n')


def test_delete_forms(state, tmp_path):
    f = tmp_path / "vm.yaml"
    f.write_text(VM)
    assert run(state, "delete", "-f", str(f)).out == 'virtualmachine.kubevirt.io "vm1" deleted from default namespace\n'
    r = run(state, "delete", "-f", str(f))
    assert (r.code, r.err) == (1, f'Error from server (NotFound): error when deleting "{f}": '
                                  'virtualmachines.kubevirt.io "vm1" not found\n')
    r = run(state, "delete", "vm", "vm1")
    assert (r.code, r.err) == (1, 'Error from server (NotFound): virtualmachines.kubevirt.io "vm1" not found\n')
    assert run(state, "delete", "vm").err == "error: resource(s) were provided, but no name was specified\n"
    # A selector that matches nothing: kubectl says so on stdout and succeeds.
    assert (run(state, "delete", "vm", "-l", "app=none").out, run(state, "delete", "vm", "--all").code) == (
        "No resources found\n", 0)
    assert run(state, "delete", "vmf/small", "--dry-run=server").out == (
        'virtualmachineinstancetype.instancetype.kubevirt.io "small" deleted from default namespace (server dry run)\n')
    assert run(state, "delete", "vmf", "small", "-o", "name", "--dry-run").out == (
        "virtualmachineinstancetype.instancetype.kubevirt.io/small\n")
    assert run(state, "delete", "vmf/small").out == ('virtualmachineinstancetype.instancetype.kubevirt.io "small" '
                                                     "deleted from default namespace\n")


def test_expand_stored(embedded):
    state = embedded
    r = run(state, "expand", "--vm", "vm1", "-o", "json")
    spec = json.loads(r.out)["spec"]
    assert "instancetype" not in spec and spec["template"]["spec"]["domain"]["cpu"]["sockets"] == 1
    r = run(state, "expand", "--vm", "non-existing-vm")
    assert (r.code, r.err) == (1, "error: error expanding VirtualMachine - non-existing-vm in namespace - default: "
                                  'virtualmachines.kubevirt.io "non-existing-vm" not found\n')


def test_expand_file_against_the_store(embedded, tmp_path):
    """virtctl `expand --file`: a VM that is not stored, expanded as the stored one is (on a
    cluster, through the subresource API: tests/kube/test_virtctl.py)."""
    state = embedded
    f = tmp_path / "vm.yaml"
    f.write_text(VM)
    posted = json.loads(run(state, "expand", "--file", str(f), "-o", "json").out)
    stored = json.loads(run(state, "expand", "--vm", "vm1", "-o", "json").out)
    # The stored VM also has what the VM mutator gives at CREATE only (not run on a posted VM).
    assert stored["spec"]["template"].pop("metadata") == {"annotations": {"kubevirt.io/pci-topology-version": "v3"}}
    assert posted["spec"]["template"].pop("metadata", {}) == {}
    assert posted["spec"] == stored["spec"]
    r = run(state, "expand", "--file", str(tmp_path / "nope.yaml"))
    assert (r.code, r.err) == (1, f"error: error reading file open {tmp_path / 'nope.yaml'}: no such file or directory\n")
    r = run(state, "expand", "--file", str(f), "-n", "other")
    assert r.code == 1 and r.err.startswith("error: error expanding VirtualMachine - vm1 in namespace - other: ")
    r = run(state, "expand", "--file", str(f), "--vm", "vm1")
    assert (r.code, r.err) == (1, "error: if any flags in the group [file vm] are set none of the others can be; "
                                  "[file vm] were all set\n")


def test_get_all_namespaces_lists_10000_vms_in_order(tmp_path):
    """`get vm -A` of 10,000 VMs prints every row, in order, on the real CLI process."""
    from instancetype.store.sqlite import SqliteStore

    state = tmp_path / "big.db"
    store = SqliteStore(state)
    with store.transaction():
        for i in range(10_000):
            store.create(vm_object(f"vm-{i:05d}", {"runStrategy": "Halted", "template": {}}, namespace=None,
                                   status={"printableStatus": "Stopped",
                                           "conditions": [{"type": "Ready", "status": "False"}]}))
    store.close()
    run_process(state, "get", "vm", "vm-00000")  # first open: deploys the catalogue
    r = run_process(state, "get", "vm", "-A")   # (its speed is measured by bench/lifecycle.py --mode cli)
    lines = r.out.splitlines()
    assert r.code == 0 and lines[0].split()[:2] == ["NAMESPACE", "NAME"]
    rows = [line.split() for line in lines[1:]]
    assert [row[:2] for row in rows] == [["default", f"vm-{i:05d}"] for i in range(10_000)]
    assert all("Stopped" in row for row in rows)
