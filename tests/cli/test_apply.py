"""`apply` on the embedded cluster: kubectl's lines, refusals, warnings, exit codes, --dry-run."""
from __future__ import annotations

import json

import pytest

from ._helpers import INSTANCETYPE, VM, doc, inferring_vm, run, run_process


@pytest.fixture
def state(target):
    """An empty store of either kind."""
    return target


def test_created_unchanged_configured(state):
    r = run(state, "apply", "-f", "-", stdin=INSTANCETYPE + "---\n" + VM)
    assert (r.code, r.err) == (0, "")
    assert r.out == ("virtualmachineinstancetype.instancetype.kubevirt.io/small created\n"
                     "virtualmachine.kubevirt.io/vm1 created\n")
    r = run(state, "apply", "-f", "-", stdin=INSTANCETYPE)
    assert r.out == "virtualmachineinstancetype.instancetype.kubevirt.io/small unchanged\n"
    r = run(state, "apply", "-f", "-", stdin=INSTANCETYPE.replace("128Mi", "256Mi"))
    assert r.out == "virtualmachineinstancetype.instancetype.kubevirt.io/small configured\n"


def test_files_and_directories(state, tmp_path):
    d = tmp_path / "manifests"
    d.mkdir()
    (d / "a-it.yaml").write_text(INSTANCETYPE)
    (d / "b-vm.yaml").write_text(VM)
    r = run(state, "apply", "-f", str(d))
    assert r.code == 0 and r.out.splitlines() == ["virtualmachineinstancetype.instancetype.kubevirt.io/small created",
                                                  "virtualmachine.kubevirt.io/vm1 created"]
    r = run(state, "apply", "-f", str(d / "a-it.yaml"), "-f", str(d / "b-vm.yaml"))
    assert r.out.split() == ["virtualmachineinstancetype.instancetype.kubevirt.io/small", "unchanged",
                             "virtualmachine.kubevirt.io/vm1", "unchanged"]


def test_refused_object_does_not_stop_the_others(state):
    bad_vm = VM.replace("devices: {}", "devices: {}\n        cpu:\n          sockets: 2")
    r = run(state, "apply", "-f", "-", stdin=INSTANCETYPE + "---\n" + bad_vm + "---\n" + VM.replace("vm1", "vm2"))
    assert r.code == 1
    assert r.out.splitlines() == ["virtualmachineinstancetype.instancetype.kubevirt.io/small created",
                                  "virtualmachine.kubevirt.io/vm2 created"]
    assert r.err == ("The request is invalid: spec.template.spec.domain.cpu.sockets: VM field(s) "
                     "spec.template.spec.domain.cpu.sockets conflicts with selected instance type\n")
    assert run(state, "get", "vm", "vm1").code == 1


def test_failed_inference_is_a_bad_request_naming_the_file(state, tmp_path):
    vm = inferring_vm("inferred", {"name": "disk", "persistentVolumeClaim": {"claimName": "missing"}},
                      instancetype={"inferFromVolume": "disk"})
    f = tmp_path / "vm.yaml"
    f.write_text(vm)
    r = run(state, "apply", "-f", str(f))
    assert r.code == 1 and r.out == ""
    assert r.err == (f'Error from server (BadRequest): error when creating "{f}": admission webhook '
                     '"virtualmachines-mutator.kubevirt.io" denied the request: persistentvolumeclaims "missing" '
                     "not found\n")


def test_several_errors_one_line_each(state):
    bad = VM.replace("devices: {}", "devices: {}\n        cpu:\n          sockets: 2")
    r = run(state, "apply", "-f", "-", stdin=INSTANCETYPE + "---\n" + bad + "---\n" + bad.replace("vm1", "vm3"))
    lines = r.err.splitlines()
    assert r.code == 1 and len(lines) == 2
    assert all(line.startswith('Error from server (Invalid): error when creating "STDIN": admission webhook '
                               '"virtualmachine-validator.kubevirt.io" denied the request: ') for line in lines)


def test_deprecated_version_warns_on_stderr(state):
    r = run(state, "apply", "-f", "-", stdin=INSTANCETYPE.replace("v1beta1", "v1alpha2"))
    assert r.code == 0
    assert r.out == "virtualmachineinstancetype.instancetype.kubevirt.io/small created\n"
    assert r.err.startswith("Warning: instancetype.kubevirt.io/v1alpha2 VirtualMachineInstancetypes is now deprecated")


def test_schema_refusal_names_the_object(state):
    r = run(state, "apply", "-f", "-", stdin=INSTANCETYPE.replace("guest: 1\n", "guest: one\n"))
    assert r.code == 1
    assert r.err.startswith('The VirtualMachineInstancetype "small" is invalid: spec.cpu.guest')


def test_unknown_kind_and_bad_input(state):
    r = run(state, "apply", "-f", "-", stdin="apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n")
    assert r.code == 1
    assert r.err == ('error: resource mapping not found for name: "d" namespace: "default" from "STDIN": no matches '
                     'for kind "Deployment" in version "apps/v1"\nensure CRDs are installed first\n')
    r = run(state, "apply")
    assert (r.code, r.err) == (1, "error: must specify one of -f and -k\n")
    r = run(state, "apply", "-f", "nope.yaml")
    assert (r.code, r.err) == (1, 'error: the path "nope.yaml" does not exist\n')
    r = run(state, "apply", "-n", "other", "-f", "-", stdin=VM.replace("name: vm1", "name: vm1\n  namespace: x"))
    assert r.code == 1 and "You must pass '--namespace=x' to perform this operation." in r.err


def test_missing_namespace(state):
    r = run(state, "apply", "-n", "elsewhere", "-f", "-", stdin=INSTANCETYPE)
    assert r.code == 1
    assert r.err == ('Error from server (NotFound): error when creating "STDIN": namespaces "elsewhere" not found\n')


def test_kubevirt_settings(tmp_path):
    # The embedded store only: on a cluster the settings are those of the KubeVirt object `install`
    # made, which this test must not change for the others. The settings are kubevirt/kubevirt's,
    # in KubeVirt's install namespace (store/kubevirt.py); a KubeVirt elsewhere configures nothing.
    state = tmp_path / "state.db"
    kv = doc("""
        apiVersion: kubevirt.io/v1
        kind: KubeVirt
        metadata:
          name: kubevirt
        spec:
          configuration:
            instancetype:
              referencePolicy: expand
        """)
    r = run(state, "apply", "-f", "-", stdin=kv)
    assert (r.code, r.out) == (0, "kubevirt.kubevirt.io/kubevirt created\n"), r.err    # in `default`
    run(state, "apply", "-f", "-", stdin=INSTANCETYPE)
    assert run(state, "apply", "-f", "-", stdin=VM).code == 0
    vm = json.loads(run(state, "get", "vm", "vm1", "-o", "json").out)
    assert "instancetype" in vm["spec"]                  # not expanded: that object configures nothing
    assert run(state, "delete", "vm", "vm1").code == 0
    r = run(state, "apply", "-n", "kubevirt", "-f", "-", stdin=kv)
    assert (r.code, r.out) == (0, "kubevirt.kubevirt.io/kubevirt configured\n"), r.err
    got = json.loads(run(state, "get", "kubevirt", "kubevirt", "-n", "kubevirt", "-o", "json").out)
    assert got["spec"]["configuration"]["instancetype"] == {"referencePolicy": "expand"}
    # With referencePolicy expand, a VM is stored expanded: no matcher left.
    run(state, "apply", "-f", "-", stdin=INSTANCETYPE)
    assert run(state, "apply", "-f", "-", stdin=VM).code == 0
    vm = json.loads(run(state, "get", "vm", "vm1", "-o", "json").out)
    assert "instancetype" not in vm["spec"]
    assert vm["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] == 1


def test_subprocess_apply_stdin_and_exit_codes(state):
    r = run_process(state, "apply", "-f", "-", stdin=INSTANCETYPE)
    assert (r.code, r.out) == (0, "virtualmachineinstancetype.instancetype.kubevirt.io/small created\n")
    r = run_process(state, "apply", "-f", "-", stdin="kind: [")
    assert r.code == 1 and r.err.startswith("error: ") and "Traceback" not in r.err


def test_kubevirt_configuration_of_the_wrong_type_is_refused(state):
    kv = ("apiVersion: kubevirt.io/v1\nkind: KubeVirt\nmetadata: {name: kubevirt, namespace: kubevirt}\n"
          "spec: {configuration: {instancetype: 5}}\n")
    r = run(state, "apply", "-f", "-", stdin=kv)
    assert r.code == 1
    assert r.err == ('The KubeVirt "kubevirt" is invalid: spec.configuration.instancetype: Invalid value: "integer": '
                     'spec.configuration.instancetype in body must be of type object: "integer"\n')


def test_a_name_that_is_not_a_string_is_an_empty_name(state):
    r = run(state, "apply", "-f", "-", stdin=INSTANCETYPE.replace("name: small", "name: [1]"))
    assert r.code == 1
    assert r.err.endswith('from server for: "STDIN": resource name may not be empty\n')
