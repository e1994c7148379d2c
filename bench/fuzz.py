"""The long fuzz run (the test suite runs the same properties with a bounded number of examples).

    python bench/fuzz.py [--examples 5000] [--only loader,commands,...]

Properties:
- loader: the `-f` loader on arbitrary text and bytes raises nothing but `instancetype.Error`;
- yaml: the loader on YAML made of hostile pieces (duplicate keys, aliases, merge keys, tags,
  deep nesting, huge numbers, non-string keys) raises nothing but `instancetype.Error`;
- commands: the offline commands (`expand`, `validate`, `convert`) on YAML made of KubeVirt-ish
  lines exit 0 or 1 and never print a traceback or an internal error;
- engine: the engine's entry points on mutated VMs and specs, with values that no YAML or JSON
  file can hold (non-string keys, bytes, tuples, sets), raise nothing but `instancetype.Error`;
- cluster: `Cluster.apply` on the same mutated objects, on a real state file, raises nothing but
  `instancetype.Error`;
- corpus: the conformance requests (tests/conformance/*.jsonl: real KubeVirt-shaped VMs, specs
  and configurations) with one value anywhere replaced by a hostile one, through the same entry
  points the conformance adapter calls, raise nothing but `instancetype.Error` (and never an
  `InternalError`: a bug on input the engine should have read or refused);
- streams: the console script (a subprocess) with stdin closed, stdout closed, full (/dev/full)
  or a pipe nobody reads exits 0 or 1, and prints no traceback, no `internal error`, no
  "Exception ignored" (a tenth of the examples: each is a process).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import instancetype
from instancetype.cli.entry import main as cli_main
from instancetype.cli.loader import documents_from_text

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
# keys and values no YAML or JSON file can hold, but a Python caller can pass
odd_keys = st.one_of(st.integers(-2, 2), st.booleans(), st.none(), st.binary(max_size=3), st.just(("a", 1)),
                     st.floats(allow_nan=True))
odd_scalars = st.one_of(st.binary(max_size=4), st.just(b"1Gi"), st.just(b"virtio"), st.floats(allow_nan=True),
                        st.just(float("inf")), st.integers(-2 ** 70, 2 ** 70), st.just(("x",)),
                        st.frozensets(st.integers(), max_size=2))
values = st.one_of(st.none(), st.booleans(), st.integers(-3, 2 ** 40), st.text(max_size=4),
                   st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
                   odd_scalars,
                   st.dictionaries(odd_keys, st.one_of(st.integers(), st.text(max_size=3), odd_scalars), max_size=2),
                   st.lists(odd_scalars, max_size=2))
YAML_PIECES = ['"a\\nb": {"c\\nd": 1, "c\\nd": 2}',
               "apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: a", "  name: a", "data: &d {a: 1}",
               "data: {a: 1, a: 2}", "x: *d", "x: *nope", "y: &s [*s]", "z:\n  <<: *d\n  a: 2", "<<: 1",
               "? [1]\n: 2", "1: a", "true: b", "~: c", "n: " + "9" * 1200, "n: 0x" + "f" * 900,
               "n: " + ":".join(["59"] * 600), "f: .nan", "f: 1e999", "b: !!binary aGk=", "b: !!binary a",
               "t: 2020-01-01", "s: !!set {a}", "o: !!omap [a: 1]", "c: !custom x", "q: !!int x", "r: !!float y",
               "d: " + "[" * 150 + "]" * 150, "e: " + "{a: " * 120 + "1" + "}" * 120, "- " * 120 + "1",
               "---", "...", "%YAML 1.1", "&a", "*a", "'", "\"\\x\"", "\t", "k: |\n  text", "- [a, b]"]
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


STREAM_COMMANDS = [["create", "vm", "--name", "x"], ["create", "instancetype", "--cpu", "1", "--memory", "1Gi"],
                   ["create", "--help"], ["--help"], ["catalog", "list"], ["catalog", "bundle"],
                   ["get", "vmf"], ["get", "vm", "-o", "yaml"], ["apply", "-f", "-"], ["validate", "-f", "-"],
                   ["expand", "-f", "-"], ["delete", "-f", "-"], ["--state", "", "get", "vm"]]
STREAM_SETUPS = ["stdin closed", "stdout closed", "stdout full", "stdout unread pipe", "stderr closed",
                 "stdout and stderr full"]


ESCAPES: dict[tuple[str, str], tuple[int, str]] | None = None   # (type, where) -> (count, example)


def _escaped(e: Exception) -> None:
    """An exception other than `instancetype.Error`: a finding. Raised (hypothesis shrinks it), or
    with --collect counted by type and the line that raised it, so one run lists every escape."""
    if ESCAPES is None:
        raise e
    import traceback

    if isinstance(e, instancetype.InternalError) and e.__cause__ is not None:
        e = e.__cause__     # where the bug is, not where it was reported
    frames = traceback.extract_tb(e.__traceback__)
    ours = [f for f in frames if f"{os.sep}instancetype{os.sep}" in f.filename]
    frame = (ours or frames)[-1]
    where = f"{os.path.relpath(frame.filename)}:{frame.lineno}"
    key = (type(e).__name__, where)
    count, example = ESCAPES.get(key, (0, str(e)[:120]))
    ESCAPES[key] = (count + 1, example)


def _corpus() -> list[str]:
    """The conformance requests, one JSON text each (the fuzz mutates a fresh copy)."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "conformance")
    lines = []
    for name in sorted(os.listdir(here)):
        if name.endswith(".jsonl") and name != "create.jsonl":
            with open(os.path.join(here, name)) as f:
                lines.extend(json.dumps(json.loads(line)["request"]) for line in f if line.strip())
    return lines


def _nodes(obj):
    """Every (container, key) of a request below its `op`, iteratively."""
    stack = [obj]
    while stack:
        x = stack.pop()
        items = x.items() if isinstance(x, dict) else enumerate(x)
        for k, v in items:
            if x is obj and k == "op":
                continue
            yield x, k
            if isinstance(v, (dict, list)):
                stack.append(v)


def _cli_with_streams(args: list[str], setup: str, state: str, stdin_text: str) -> tuple[int, str]:
    """Run the console script with its standard streams broken as `setup` says; (status, stderr)."""
    cmd = [sys.executable, "-m", "instancetype", "--state", state, *args]
    redirect = {"stdin closed": "<&-", "stdout closed": ">&-", "stdout full": ">/dev/full",
                "stderr closed": "2>&-", "stdout and stderr full": ">/dev/full 2>/dev/full"}.get(setup)
    if redirect is not None:
        cmd = ["bash", "-c", f'"$@" {redirect}', "_", *cmd]
    stdout: int = subprocess.DEVNULL
    r = w = -1
    if setup == "stdout unread pipe":
        r, w = os.pipe()
        os.close(r)
        stdout = w
    try:
        p = subprocess.run(cmd, input=stdin_text, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        if w >= 0:
            os.close(w)
    return p.returncode, p.stderr


def run(examples: int, only: set[str] | None = None) -> None:
    cfg = settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))

    @cfg
    @given(st.one_of(st.text(max_size=400), st.binary(max_size=400).map(lambda b: b.decode("latin-1"))))
    def loader(text):
        try:
            documents_from_text(text, "fuzz.yaml")
        except instancetype.InternalError as e:     # a bug in instancetype: an escape too
            _escaped(e)
        except instancetype.Error:
            pass
        except Exception as e:  # noqa: BLE001 - an escape: fail, or with --collect note it and go on
            _escaped(e)

    @cfg
    @given(st.lists(st.sampled_from(YAML_PIECES), max_size=12), st.sampled_from(["", "  ", "- "]))
    def yaml_pieces(lines, indent):
        try:
            documents_from_text("\n".join(indent + line for line in lines) + "\n", "fuzz.yaml")
        except instancetype.InternalError as e:     # a bug in instancetype: an escape too
            _escaped(e)
        except instancetype.Error as e:
            assert "\n" not in str(e), str(e)      # one line, whatever the keys hold
        except Exception as e:  # noqa: BLE001 - an escape: fail, or with --collect note it and go on
            _escaped(e)

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
    @given(paths, values, st.sampled_from(["expand", "admit_vm", "build_vmi", "infer", "validate"]),
           st.dictionaries(st.sampled_from(["cpu", "memory", "nodeSelector", "annotations"]), values, max_size=2),
           st.one_of(st.just({"devices": {}}), st.dictionaries(odd_keys, values, max_size=2)),
           st.one_of(st.none(), st.dictionaries(st.one_of(odd_keys, st.sampled_from(["vmRolloutStrategy"])), values,
                                                max_size=2)))
    def engine(path, value, fn, it_patch, preference, config):
        vm = json.loads(json.dumps(VM))
        _set(vm, path, value)
        it = {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}, **it_patch}
        try:
            if fn == "infer":
                instancetype.infer(vm, [])
            elif fn == "validate":
                target = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
                          "metadata": {"name": "x"}, "spec": it}
                instancetype.validate(vm if path[0] == "spec" else target)
            else:
                getattr(instancetype, fn)(vm, instancetype=it, preference=preference, config=config)
        except instancetype.InternalError as e:     # a bug in instancetype: an escape too
            _escaped(e)
        except instancetype.Error:
            pass
        except Exception as e:  # noqa: BLE001 - an escape: fail, or with --collect note it and go on
            _escaped(e)

    from instancetype.controller.cluster import Cluster

    cluster = Cluster.open(os.path.join(tmp, "cluster.db"), catalog=False)
    IT = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
          "metadata": {"name": "it"}, "spec": {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}}

    @cfg
    @given(paths, values, st.sampled_from(["vm", "instancetype"]))
    def cluster_apply(path, value, which):
        obj = json.loads(json.dumps(VM if which == "vm" else IT))
        _set(obj, path, value)
        try:
            cluster.apply(obj, namespace="default")
        except instancetype.InternalError as e:     # a bug in instancetype: an escape too
            _escaped(e)
        except instancetype.Error:
            pass
        except Exception as e:  # noqa: BLE001 - an escape: fail, or with --collect note it and go on
            _escaped(e)

    from instancetype.conformance import OPS

    corpus = _corpus()

    @cfg
    @given(st.integers(0, len(corpus) - 1), st.integers(0, 10 ** 6), values)
    def corpus_requests(index, where, value):
        req = json.loads(corpus[index])
        nodes = list(_nodes(req))
        parent, key = nodes[where % len(nodes)]
        parent[key] = value
        try:
            OPS[req["op"]](req)
        except instancetype.InternalError as e:     # a bug in instancetype: an escape too
            _escaped(e)
        except instancetype.Error:
            pass
        except Exception as e:  # noqa: BLE001 - an escape: fail, or with --collect note it and go on
            _escaped(e)

    state = os.path.join(tmp, "streams.db")
    stream_cfg = settings(max_examples=max(1, examples // 10), deadline=None, suppress_health_check=list(HealthCheck))

    @stream_cfg
    @given(st.sampled_from(STREAM_COMMANDS), st.sampled_from(STREAM_SETUPS),
           st.sampled_from(["", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", json.dumps(IT)]))
    def streams(args, setup, stdin_text):
        code, err = _cli_with_streams(args, setup, state, stdin_text)
        assert code in (0, 1), (args, setup, code, err)
        for bad in ("Traceback", "internal error", "Exception ignored", "Fatal Python error"):
            assert bad not in err, (args, setup, err)

    props = (("loader", loader), ("yaml", yaml_pieces), ("commands", commands), ("engine", engine),
             ("cluster", cluster_apply), ("corpus", corpus_requests), ("streams", streams))
    for name, prop in props:
        if only and name not in only:
            continue
        prop()
        n = max(1, examples // 10) if name == "streams" else examples
        print(f"{name}: {n} examples" + (", no escape" if not ESCAPES else ""), flush=True)
    cluster.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=5000)
    ap.add_argument("--only", default="", help="comma-separated property names (default: all)")
    ap.add_argument("--collect", action="store_true",
                    help="list every distinct escape (type and raising line) instead of stopping at the first")
    a = ap.parse_args()
    if a.collect:
        ESCAPES = {}
    run(a.examples, set(filter(None, a.only.split(","))) or None)
    if ESCAPES:
        print(f"{len(ESCAPES)} distinct escapes:")
        for (kind, where), (count, example) in sorted(ESCAPES.items(), key=lambda kv: -kv[1][0]):
            print(f"  {count:6d}  {kind} at {where}: {example}")
        sys.exit(1)
    sys.exit(0)
