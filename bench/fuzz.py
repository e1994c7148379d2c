"""The long fuzz run (the test suite runs the same properties with a bounded number of examples).

    python bench/fuzz.py [--examples 5000]

Properties: the `-f` loader on arbitrary text and bytes raises nothing but `instancetype.Error`;
the offline commands (`expand`, `validate`, `convert`) on YAML made of KubeVirt-ish lines exit 0
or 1 and never print a traceback or an internal error; the engine's entry points on mutated VMs
and specs raise nothing but `instancetype.Error`.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import instancetype
from instancetype.cli.loader import documents_from_text
from instancetype.cli.main import main as cli_main

WORDS = ["apiVersion: kubevirt.io/v1", "apiVersion: instancetype.kubevirt.io/v1beta1",
         "apiVersion: instancetype.kubevirt.io/v1alpha1", "apiVersion: flavor.kubevirt.io/v1alpha1",
         "kind: VirtualMachine", "kind: VirtualMachineInstancetype", "kind: VirtualMachinePreference",
         "kind: VirtualMachineFlavor", "kind: List", "items:", "- kind: VirtualMachine", "metadata: {name: x}",
         "metadata: 7", "spec:", "spec: []", "  cpu: {guest: 2}", "  cpu: {guest: -1}", "  memory: {guest: 1Gi}",
         "  memory: {guest: 12Qi}", "  memory: {guest: []}", "  template: 3", "  template: {spec: {domain: {}}}",
         "  instancetype: {name: x}", "  preference: {name: y, kind: nope}", "  flavor: {name: x}", "---",
         "a: &a [1, 2]", "b: *a", ": :", "- a", "  running: yes", "\t", "{", "\x00"]
VM = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "x"},
      "spec": {"instancetype": {"name": "it"}, "preference": {"name": "p"},
               "template": {"spec": {"domain": {"devices": {}}, "volumes": [{"name": "d", "containerDisk": {"image": "i"}}]}}}}
values = st.one_of(st.none(), st.booleans(), st.integers(-3, 2 ** 40), st.text(max_size=4),
                   st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
paths = st.lists(st.sampled_from(["spec", "template", "domain", "devices", "volumes", "instancetype", "preference",
                                  "cpu", "memory", "guest", "name", "kind", "metadata", "disks", "0"]),
                 min_size=1, max_size=5)


def _set(obj, path, value):
    for p in path[:-1]:
        nxt = obj.get(p) if isinstance(obj, dict) else None
        if not isinstance(nxt, dict):
            return
        obj = nxt
    if isinstance(obj, dict):
        obj[path[-1]] = value


def run(examples: int) -> None:
    cfg = settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))

    @cfg
    @given(st.one_of(st.text(max_size=400), st.binary(max_size=400).map(lambda b: b.decode("latin-1"))))
    def loader(text):
        try:
            documents_from_text(text, "fuzz.yaml")
        except instancetype.Error:
            pass

    tmp = tempfile.mkdtemp()

    @cfg
    @given(st.lists(st.sampled_from(WORDS), max_size=16), st.sampled_from(["expand", "validate", "convert"]))
    def commands(lines, cmd):
        path = os.path.join(tmp, "fuzz.yaml")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            try:
                cli_main([cmd, "-f", path])
            except SystemExit as e:
                assert e.code in (0, 1), e.code
        assert "Traceback" not in err.getvalue() and "internal error" not in err.getvalue(), err.getvalue()

    @cfg
    @given(paths, values, st.sampled_from(["expand", "admit_vm", "build_vmi", "infer"]),
           st.dictionaries(st.sampled_from(["cpu", "memory", "nodeSelector", "annotations"]), values, max_size=2))
    def engine(path, value, fn, it_patch):
        import json
        vm = json.loads(json.dumps(VM))
        _set(vm, path, value)
        it = {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}, **it_patch}
        try:
            if fn == "infer":
                instancetype.infer(vm, [])
            else:
                getattr(instancetype, fn)(vm, instancetype=it, preference={"devices": {}})
        except instancetype.Error:
            pass

    for name, prop in (("loader", loader), ("commands", commands), ("engine", engine)):
        prop()
        print(f"{name}: {examples} examples, no escape", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=5000)
    run(ap.parse_args().examples)
    sys.exit(0)
