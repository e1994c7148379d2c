"""`instancetype catalog list|bundle|fit`, run as real processes."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from instancetype import catalog


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, INSTANCETYPE_STATE=os.devnull + ".no-such-store")
    proc = subprocess.run([sys.executable, "-m", "instancetype", "catalog", *args],
                          capture_output=True, text=True, env=env, timeout=60)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


# --- fit ---------------------------------------------------------------------------------------
def test_fit_table_includes_u1_xlarge():
    out = run("fit", "--builtin", "--cpu", "3", "--memory", "6Gi").stdout
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["NAME", "CLASS", "CPUS", "MEMORY"]
    assert lines[1].split()[:4] == ["u1.xlarge", "general.purpose", "4", "16Gi"]
    assert "4 vCPUs >= 3" in lines[1] and "16Gi memory >= 6Gi" in lines[1]


def test_fit_name_composes_with_create_vm():
    out = run("fit", "--builtin", "--cpu", "3", "--memory", "6Gi", "-o", "name").stdout
    assert out.splitlines()[0] == "virtualmachineclusterinstancetype/u1.xlarge"


def test_fit_dedicated_json_ranked():
    data = json.loads(run("fit", "--builtin", "--cpu", "3", "--memory", "6Gi", "--dedicated-cpu", "-o", "json").stdout)
    assert [d["name"] for d in data] == ["cx1.xlarge", "n1.large", "d1.xlarge", "rt1.xlarge"]
    assert [(d["extraCPU"], d["extraMemoryBytes"]) for d in data] == sorted(
        (d["extraCPU"], d["extraMemoryBytes"]) for d in data)


def test_fit_yaml_and_class():
    data = yaml.safe_load(run("fit", "--builtin", "--cpu", "3", "--memory", "6Gi", "--class", "m", "-o", "yaml").stdout)
    assert [d["name"] for d in data] == ["m1.xlarge"]
    data = yaml.safe_load(run("fit", "--builtin", "--cpu", "4", "--gpus", "1", "--class", "gn", "-o", "yaml").stdout)
    assert [d["name"] for d in data] == ["gn1.xlarge"]


@pytest.mark.parametrize("args, flag", [
    (["--cpu", "0"], "--cpu"),
    (["--cpu", "-1"], "--cpu"),
    (["--cpu", "two"], "--cpu"),
    (["--memory", "12Qi"], "--memory"),
    (["--memory", "0"], "--memory"),
    (["--class", "nosuchclass"], "--class"),
    (["--cpu", "1000"], "--cpu"),
    (["--cpu", "1", "--memory", "10Ti"], "--memory"),
    (["--gpus", "-2"], "--gpus"),
    (["-o", "xml"], "--output"),
])
def test_fit_bad_input_is_one_line(args, flag):
    proc = run("fit", "--builtin", *args, check=False)
    assert proc.returncode == 1
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ") and flag in lines[0]
    assert "Traceback" not in proc.stderr


def test_fit_unsatisfiable_feature_request():
    proc = run("fit", "--builtin", "--cpu", "1", "--gpus", "1", check=False)
    assert proc.returncode == 1 and "--gpus" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


# --- list --------------------------------------------------------------------------------------
def test_list_table_everything():
    lines = run("list").stdout.splitlines()
    assert lines[0].split() == ["NAME", "KIND", "CLASS", "CPUS", "MEMORY", "FEATURES"]
    assert len(lines) == 1 + 77 + 1 + 1 + 54
    assert lines[1 + 77] == ""
    assert lines[1 + 77 + 1].split() == ["NAME", "KIND", "OS", "REQUIRED", "CPUS", "REQUIRED", "MEMORY", "FEATURES"]
    row = next(l for l in lines if l.startswith("cx1.large "))
    assert row.split()[1:5] == ["instancetype", "compute.exclusive", "2", "4Gi"]
    assert "hugepages=2Mi" in row and "dedicatedCPUPlacement" in row and "numa" in row
    row = next(l for l in lines if l.startswith("windows.11 "))
    assert row.split()[1:5] == ["preference", "windows", "2", "4Gi"]


def test_list_selectors_from_the_seed():
    names = run("list", "-l", "instancetype.kubevirt.io/deprecated=true", "-o", "name").stdout.split()
    assert {n.split("/")[1] for n in names} == {
        "highperformance.large", "highperformance.medium", "highperformance.small", "server.large",
        "server.medium", "server.micro", "server.small", "server.tiny",
        "gn1.2xlarge", "gn1.4xlarge", "gn1.8xlarge", "gn1.xlarge"}
    names = run("list", "-l", "instancetype.kubevirt.io/cpu=4,instancetype.kubevirt.io/hugepages=2Mi",
                "-o", "name").stdout.split()
    assert names == ["virtualmachineclusterinstancetype/cx1.xlarge", "virtualmachineclusterinstancetype/m1.xlarge"]
    names = run("list", "-l", "instancetype.kubevirt.io/os-type=windows", "-o", "name").stdout.split()
    assert len(names) == 20 and all(n.startswith("virtualmachineclusterpreference/windows.") for n in names)


def test_list_class_and_kinds():
    names = run("list", "--class", "general.purpose", "-o", "name").stdout.split()
    assert len(names) == 10 and all("/u1." in n for n in names)
    names = run("list", "--preferences", "--namespaced", "-o", "name").stdout.split()
    assert len(names) == 54 and all(n.startswith("virtualmachinepreference/") for n in names)


def test_list_json_and_yaml_are_the_objects():
    data = json.loads(run("list", "--instancetypes", "-o", "json").stdout)
    assert data["kind"] == "List"
    assert sorted(data["items"], key=lambda o: o["metadata"]["name"]) == catalog.instancetypes()
    names = [o["metadata"]["name"] for o in data["items"]]
    assert names.index("u1.small") < names.index("u1.2xlarge")       # sizes in natural order
    data = yaml.safe_load(run("list", "--preferences", "-o", "yaml").stdout)
    assert data["items"] == catalog.preferences()


def test_list_matrix_is_class_by_size():
    lines = run("list", "-o", "matrix").stdout.splitlines()
    assert lines[0].split()[:8] == ["SERIES", "NANO", "MICRO", "TINY", "SMALL", "MEDIUM", "2XMEDIUM", "LARGE"]
    u1 = next(l for l in lines if l.startswith("u1 ")).split()
    assert u1[:8] == ["u1", "1/512Mi", "1/1Gi", "-", "1/2Gi", "1/4Gi", "2/4Gi", "2/8Gi"]
    assert any(l.startswith("cx1 (1gi) ") for l in lines)
    legend = lines[lines.index("") + 1:]
    assert legend[0].split() == ["SERIES", "NAME", "DESCRIPTION"]
    row = next(l for l in legend if l.startswith("u1 "))
    assert "General Purpose" in row and row.endswith("resources for general purpose applications.")


def test_list_bad_selector():
    proc = run("list", "-l", "a in 1", check=False)
    assert proc.returncode == 1 and proc.stderr.startswith("error: unable to parse requirement")
    proc = run("list", "--class", "zz", check=False)
    assert proc.returncode == 1 and "--class" in proc.stderr


# --- bundle ------------------------------------------------------------------------------------
def test_bundle_object_for_object():
    text = run("bundle").stdout
    assert text.startswith("---\n")
    docs = list(yaml.safe_load_all(text))
    assert docs == catalog.instancetypes() + catalog.preferences()
    versions = {d["metadata"]["labels"]["instancetype.kubevirt.io/common-instancetypes-version"] for d in docs}
    assert versions == {"v1.7.0"}


def test_bundle_kinds_and_selection():
    docs = list(yaml.safe_load_all(run("bundle", "--namespaced", "--instancetypes").stdout))
    assert len(docs) == 77 and {d["kind"] for d in docs} == {"VirtualMachineInstancetype"}
    docs = list(yaml.safe_load_all(run("bundle", "--preferences").stdout))
    assert len(docs) == 54 and {d["kind"] for d in docs} == {"VirtualMachineClusterPreference"}
    docs = list(yaml.safe_load_all(run("bundle", "--without-deprecated", "--instancetypes").stdout))
    assert len(docs) == 65


# --- no store, no engine, fast -----------------------------------------------------------------
_PROBE = """
import sys
from instancetype.cli.entry import main
try:
    main(sys.argv[1:])
except SystemExit as e:
    code = e.code
bad = sorted(m for m in sys.modules if m.startswith(("instancetype.engine", "instancetype.store")))
sys.stderr.write("MODULES:" + ",".join(bad) + "\\n")
"""


@pytest.mark.parametrize("args", [["fit", "--builtin", "--cpu", "3", "--memory", "6Gi"], ["list"], ["bundle"]])
def test_never_imports_engine_or_store(args):
    proc = subprocess.run([sys.executable, "-c", _PROBE, "catalog", *args], capture_output=True, text=True)
    assert "MODULES:\n" in proc.stderr, proc.stderr[-500:]


def test_fit_name_feeds_create_vm():
    name = run("fit", "--builtin", "--cpu", "3", "--memory", "6Gi", "-o", "name").stdout.splitlines()[0]
    proc = subprocess.run([sys.executable, "-m", "instancetype", "create", "vm", "--name", "vm1",
                           "--instancetype", name], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    vm = yaml.safe_load(proc.stdout)
    assert vm["spec"]["instancetype"] == {"kind": "virtualmachineclusterinstancetype", "name": "u1.xlarge"}
