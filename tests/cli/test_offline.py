"""The offline commands (issue 6): expand, validate, convert on files, with no store; never a traceback."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from instancetype.cli.entry import main

IT = """apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineInstancetype
metadata:
  name: csmall
spec:
  cpu:
    guest: 1
  memory:
    guest: 128Mi
"""
PREF = """apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachinePreference
metadata:
  name: cirros
spec:
  devices:
    preferredDiskBus: virtio
  requirements:
    memory:
      guest: 512Mi
"""
VM = """apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: vm-cirros-csmall
spec:
  instancetype:
    kind: VirtualMachineInstancetype
    name: csmall
  preference:
    kind: VirtualMachinePreference
    name: cirros
  running: false
  template:
    spec:
      domain:
        devices: {}
      volumes:
      - containerDisk:
          image: cirros
        name: containerdisk
"""


def run(*args, cwd=None, stdin=None):
    p = subprocess.run([sys.executable, "-m", "instancetype", *args], cwd=cwd, input=stdin,
                       capture_output=True, text=True, timeout=60)
    assert "Traceback" not in p.stderr, p.stderr
    return p


def call(capsys, *args):
    with pytest.raises(SystemExit) as e:
        main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return e.value.code, out, err


def test_the_issue_flow(tmp_path):
    def create(*args):
        p = run("create", *args, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        return p.stdout

    (tmp_path / "it.yaml").write_text(create("instancetype", "--name", "csmall", "--cpu", "1", "--memory", "128Mi"))
    (tmp_path / "pref.yaml").write_text(create("preference", "--name", "cirros", "--cpu-topology", "cores"))
    (tmp_path / "vm.yaml").write_text(create("vm", "--name", "vm1", "--instancetype",
                                             "virtualmachineclusterinstancetype/csmall", "--preference", "cirros",
                                             "--volume-containerdisk", "src:quay.io/containerdisks/cirros:latest"))
    p = run("expand", "-f", "vm.yaml", "-f", "it.yaml", "-f", "pref.yaml", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    vm = yaml.safe_load(p.stdout)
    domain = vm["spec"]["template"]["spec"]["domain"]
    assert domain["memory"]["guest"] == "128Mi"
    assert domain["cpu"] == {"sockets": 1, "cores": 1, "threads": 1}
    assert "instancetype" not in vm["spec"] and "preference" not in vm["spec"]
    p = run("expand", "-f", "vm.yaml", "-f", "it.yaml", "-f", "pref.yaml", "-o", "json", cwd=tmp_path)
    assert json.loads(p.stdout)["kind"] == "VirtualMachine"
    (tmp_path / "manifests").mkdir()
    for f in ("it.yaml", "pref.yaml", "vm.yaml"):
        (tmp_path / "manifests" / f).write_text((tmp_path / f).read_text())
    p = run("validate", "-f", "manifests/", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "virtualmachine.kubevirt.io/vm1 valid" in p.stdout.splitlines()


def test_expand_json_list_of_several_vms(tmp_path, capsys):
    f = tmp_path / "all.yaml"
    f.write_text(IT + "---\n" + PREF + "---\n" + VM + "---\n" + VM.replace("vm-cirros-csmall", "vm2"))
    code, out, err = call(capsys, "expand", "-f", str(f), "-o", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["kind"] == "List" and [v["metadata"]["name"] for v in doc["items"]] == ["vm-cirros-csmall", "vm2"]


def test_validate_prints_kubectl_refusal_and_exits_1(tmp_path, capsys):
    f = tmp_path / "all.yaml"
    f.write_text(IT + "---\n" + PREF + "---\n" + VM)
    code, out, err = call(capsys, "validate", "-f", str(f))
    assert code == 1
    assert "virtualmachineinstancetype.instancetype.kubevirt.io/csmall valid" in out
    assert ("The request is invalid: spec.instancetype: failure checking preference requirements: insufficient "
            "Memory resources of 128Mi provided by instance type, preference requires 512Mi") in err
    assert "document 3" in err


def test_validate_admits_a_vm_whose_types_are_missing_with_a_warning(tmp_path, capsys):
    f = tmp_path / "vm.yaml"
    f.write_text(VM)
    code, out, err = call(capsys, "validate", "-f", str(f))
    assert code == 0
    assert "virtualmachine.kubevirt.io/vm-cirros-csmall valid" in out
    assert 'Warning: virtualmachine.kubevirt.io/vm-cirros-csmall: virtualmachineinstancetypes.instancetype.kubevirt.io "csmall" not found' in err


def test_validate_instancetype_rules(tmp_path, capsys):
    f = tmp_path / "it.yaml"
    f.write_text(IT.replace("    guest: 128Mi", "    guest: 128Mi\n    overcommitPercent: 150"))
    code, out, err = call(capsys, "validate", "-f", str(f))
    assert code == 1 and "spec.memory.overcommitPercent" in err


def test_convert_v1alpha1_and_flavor(tmp_path, capsys):
    f = tmp_path / "old.yaml"
    f.write_text(IT.replace("v1beta1", "v1alpha1") + "---\n"
                 "apiVersion: flavor.kubevirt.io/v1alpha1\nkind: VirtualMachineFlavor\nmetadata:\n  name: f\n"
                 "spec:\n  cpu:\n    guest: 2\n  memory:\n    guest: 1Gi\n---\n"
                 "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\ndata:\n  a: b\n")
    code, out, err = call(capsys, "convert", "-f", str(f))
    assert code == 0, err
    docs = list(yaml.safe_load_all(out))
    assert [d["apiVersion"] for d in docs] == ["instancetype.kubevirt.io/v1beta1"] * 2 + ["v1"]
    assert docs[1]["kind"] == "VirtualMachineInstancetype"
    assert docs[2] == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "keep"}, "data": {"a": "b"}}
    assert "deprecated" in err


@pytest.mark.parametrize("text, needle", [
    ("a: [", "invalid YAML"),
    ("kind: VirtualMachine\n", "apiVersion: Required value"),
    ("apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstanceType\nmetadata: {name: x}\n", 'no matches for kind'),
    (IT.replace("128Mi", "12Qi"), "spec.memory.guest"),
    (IT.replace("guest: 1\n", "guest: one\n"), "spec.cpu.guest"),
    (VM, 'virtualmachineinstancetypes.instancetype.kubevirt.io "csmall" not found'),
])
def test_bad_input_is_one_clear_line(tmp_path, capsys, text, needle):
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    cmd = "validate" if "12Qi" in text or "one" in text else "expand"
    code, out, err = call(capsys, cmd, "-f", str(f))
    assert code == 1
    assert needle in err and str(f) in err
    assert out == "" or "valid" not in out.split(str(f))[0]


def test_other_groups_are_skipped_with_a_note(tmp_path, capsys):
    f = tmp_path / "svc.yaml"
    f.write_text("apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n---\n" + IT)
    code, out, err = call(capsys, "validate", "-f", str(f))
    assert code == 0 and "skipping v1 Service" in err


def test_usage_errors_exit_1(capsys):
    assert call(capsys, "expand")[0] == 1
    assert call(capsys, "expand", "-f", "x", "-o", "toml")[0] == 1
    assert call(capsys, "no-such-command")[0] == 1


def test_kubevirt_config_file(tmp_path, capsys):
    (tmp_path / "kv.yaml").write_text("network:\n  defaultNetworkInterface: masquerade\n")
    f = tmp_path / "all.yaml"
    f.write_text(IT + "---\n" + PREF + "---\n" + VM)
    code, out, err = call(capsys, "expand", "-f", str(f), "--kubevirt-config", str(tmp_path / "kv.yaml"))
    assert code == 0, err
    assert yaml.safe_load(out)["spec"]["template"]["spec"]["domain"]["devices"]["interfaces"][0]["masquerade"] == {}


words = st.sampled_from(["apiVersion: kubevirt.io/v1", "kind: VirtualMachine", "kind: VirtualMachineInstancetype",
                         "apiVersion: instancetype.kubevirt.io/v1beta1", "metadata: {name: x}", "spec:",
                         "  cpu: {guest: 2}", "  memory: {guest: 1Gi}", "  template: 3", "---", "  instancetype: x",
                         "  cpu: {guest: -1}", "  memory: {guest: []}", "spec: []", "metadata: 7", "- a", ": :"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.lists(words, max_size=12), st.sampled_from(["expand", "validate", "convert"]))
def test_fuzz_commands_never_show_a_traceback(tmp_path, capsys, lines, cmd):
    f = tmp_path / "fuzz.yaml"
    f.write_text("\n".join(lines) + "\n")
    code, out, err = call(capsys, cmd, "-f", str(f))
    assert code in (0, 1)
    assert "internal error" not in err, err
