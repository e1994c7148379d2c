"""patch, label, annotate, edit, get -w, -o jsonpath / custom-columns, api-resources, explain and
completion, on the embedded store, through the real CLI and a real state file."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from tests.interrupt import interruptible_children

from ._helpers import INSTANCETYPE, VM, get_json, run, store_args


@pytest.fixture
def state(target):
    """vm1 and its instancetype, on either store."""
    r = run(target, "apply", "-f", "-", stdin=INSTANCETYPE + "---\n" + VM)
    assert r.code == 0, r.err
    return target


def vm(state) -> dict:
    return get_json(state, "vm", "vm1")


# --- patch ----------------------------------------------------------------------------------------

def test_patch_merge_json_and_no_change(state):
    r = run(state, "patch", "vm", "vm1", "--type", "merge", "-p", '{"metadata":{"labels":{"a":"b"}}}')
    assert (r.code, r.out, r.err) == (0, "virtualmachine.kubevirt.io/vm1 patched\n", "")
    r = run(state, "patch", "vm/vm1", "--type=merge", "-p", "metadata: {labels: {a: b}}")   # YAML is accepted
    assert r.out == "virtualmachine.kubevirt.io/vm1 patched (no change)\n"
    r = run(state, "patch", "vm", "vm1", "--type", "json", "-p",
            '[{"op":"add","path":"/metadata/annotations/x","value":"1"},{"op":"remove","path":"/metadata/labels/a"}]')
    assert r.out == "virtualmachine.kubevirt.io/vm1 patched\n"
    meta = vm(state)["metadata"]
    assert meta["annotations"]["x"] == "1" and "a" not in (meta.get("labels") or {})


def test_patch_refusals_as_kubectl(state):
    # kubectl's default type is strategic, which the API server refuses for custom resources.
    r = run(state, "patch", "vm", "vm1", "-p", '{"spec":{}}')
    assert (r.code, r.err) == (1, "error: application/strategic-merge-patch+json is not supported by kubevirt.io/v1, "
                                  "Kind=VirtualMachine: the body of the request was in an unknown format - accepted "
                                  "media types include: application/json-patch+json, application/merge-patch+json, "
                                  "application/apply-patch+yaml\n")
    r = run(state, "patch", "vm", "vm1", "--type", "json", "-p", '[{"op":"remove","path":"/spec/nothing"}]')
    assert (r.code, r.err) == (1, "The request is invalid: the server rejected our request due to an error in "
                                  "our request\n")
    r = run(state, "patch", "vm", "vm1", "--type", "bogus", "-p", "{}")
    assert r.err == 'error: --type must be one of [json merge strategic], not "bogus"\n'
    assert run(state, "patch", "vm", "vm1").err == \
        "error: must specify --patch or --patch-file containing the contents of the patch\n"
    r = run(state, "patch", "vm", "nope", "--type", "merge", "-p", "{}")
    assert (r.code, r.err) == (1, 'Error from server (NotFound): virtualmachines.kubevirt.io "nope" not found\n')


def test_patch_goes_through_admission(state):
    before = vm(state)["metadata"]["resourceVersion"]
    r = run(state, "patch", "vm", "vm1", "--type", "merge", "-p", '{"spec":{"runStrategy":"Bogus"}}')
    assert r.code == 1 and r.out == ""
    assert "spec.runStrategy" in r.err and "Bogus" in r.err and len(r.err.splitlines()) == 1
    assert vm(state)["metadata"]["resourceVersion"] == before          # nothing written


def test_patch_strategic_on_a_builtin_kind(state):
    r = run(state, "patch", "ns", "default", "-p", '{"metadata":{"labels":{"team":"x"}}}')
    assert (r.code, r.out) == (0, "namespace/default patched\n")


# --- label / annotate -------------------------------------------------------------------------------

def test_label_set_overwrite_remove(state):
    assert run(state, "label", "vm", "vm1", "a=b").out == "virtualmachine.kubevirt.io/vm1 labeled\n"
    r = run(state, "label", "vm", "vm1", "a=c")
    assert (r.code, r.err) == (1, "error: 'a' already has a value (b), and --overwrite is false\n")
    assert run(state, "label", "vm", "vm1", "a=c", "--overwrite").out == "virtualmachine.kubevirt.io/vm1 labeled\n"
    assert vm(state)["metadata"]["labels"] == {"a": "c"}
    r = run(state, "label", "vm", "vm1", "a-", "gone-")
    assert r.out == 'label "gone" not found.\nvirtualmachine.kubevirt.io/vm1 unlabeled\n'
    assert "labels" not in vm(state)["metadata"]
    assert run(state, "label", "vm", "vm1").err == "error: at least one label update is required\n"
    assert run(state, "label", "vm", "vm1", "a=b", "a-").err == \
        "error: can not both modify and remove a label in the same command\n"
    assert run(state, "label", "vm", "x=y").err == "error: resource(s) were provided, but no name was specified\n"
    assert run(state, "label", "vm", "vm1", "a=b", "vm2").err == \
        "error: all resources must be specified before label changes: vm2\n"


def test_label_selector_and_all(state):
    assert run(state, "label", "vm", "--all", "tier=web").out == "virtualmachine.kubevirt.io/vm1 labeled\n"
    r = run(state, "label", "vm", "-l", "tier=web", "tier=db", "--overwrite")
    assert r.out == "virtualmachine.kubevirt.io/vm1 labeled\n"
    assert run(state, "get", "vm", "-l", "tier=db", "-o", "name").out == "virtualmachine.kubevirt.io/vm1\n"
    r = run(state, "label", "vm", "--all", "-l", "x=y", "a=b")
    assert r.err == "error: cannot set --all and --selector at the same time\n"


def test_annotate(state):
    assert run(state, "annotate", "vm", "vm1", "note=one").out == "virtualmachine.kubevirt.io/vm1 annotated\n"
    r = run(state, "annotate", "vm", "vm1", "note=two")
    assert (r.code, r.err) == (1, "error: --overwrite is false but found the following declared annotation(s): "
                                  "'note' already has a value (one)\n")
    assert run(state, "annotate", "vm", "vm1", "note=one").code == 0    # the same value is no overwrite
    assert run(state, "annotate", "vm/vm1", "note=two", "--overwrite").code == 0
    assert vm(state)["metadata"]["annotations"]["note"] == "two"
    assert run(state, "annotate", "vm", "vm1", "note-").code == 0
    assert "note" not in vm(state)["metadata"]["annotations"]


def test_dry_run_keeps_nothing(state):
    r = run(state, "label", "vm", "vm1", "a=b", "--dry-run=server")
    assert r.out == "virtualmachine.kubevirt.io/vm1 labeled (server dry run)\n"
    r = run(state, "patch", "vm", "vm1", "--type", "merge", "-p", '{"metadata":{"labels":{"a":"b"}}}', "--dry-run")
    assert r.out == "virtualmachine.kubevirt.io/vm1 patched (dry run)\n"
    assert "labels" not in vm(state)["metadata"]


# --- edit ---------------------------------------------------------------------------------------------

def _editor(tmp_path, script: str) -> dict:
    """An editor program: a Python script run on the file; it counts its runs and keeps what it saw."""
    path = tmp_path / "editor.py"
    path.write_text(textwrap.dedent(f"""\
        import pathlib, sys
        f = pathlib.Path(sys.argv[1])
        box = pathlib.Path({str(tmp_path)!r})
        n = len(list(box.glob("seen-*"))) + 1
        (box / f"seen-{{n}}").write_text(f.read_text())
        text = f.read_text()
    """) + textwrap.dedent(script))
    return {"EDITOR": f"{sys.executable} {path}", "KUBE_EDITOR": ""}


def run_edit(state, env, *args):
    p = subprocess.run([sys.executable, "-m", "instancetype", *store_args(state), "edit", *args],
                       capture_output=True, text=True, env={**os.environ, **env}, timeout=60)
    return p


def test_edit_changes_the_object(state, tmp_path):
    env = _editor(tmp_path, 'f.write_text(text.replace("runStrategy: Halted", "runStrategy: Always"))\n')
    p = run_edit(state, env, "vm", "vm1")
    assert (p.returncode, p.stdout, p.stderr) == (0, "virtualmachine.kubevirt.io/vm1 edited\n", "")
    assert vm(state)["spec"]["runStrategy"] == "Always"
    seen = (tmp_path / "seen-1").read_text()
    assert seen.startswith("# Please edit the object below. Lines beginning with a '#' will be ignored,\n")
    assert "\nkind: VirtualMachine\n" in seen


def test_edit_unchanged_is_cancelled(state, tmp_path):
    p = run_edit(state, _editor(tmp_path, ""), "vm/vm1")
    assert (p.returncode, p.stdout, p.stderr) == (0, "", "Edit cancelled, no changes made.\n")


def test_edit_refusal_reopens_with_the_error_on_top(state, tmp_path):
    env = _editor(tmp_path, """\
        if n == 1:
            f.write_text(text.replace("runStrategy: Halted", "runStrategy: Bogus"))
        else:
            f.write_text(text.replace("runStrategy: Bogus", "runStrategy: Always"))
    """)
    p = run_edit(state, env, "vm", "vm1")
    assert p.returncode == 0
    assert p.stderr == 'error: virtualmachines.kubevirt.io "vm1" is invalid\n'
    assert p.stdout == "virtualmachine.kubevirt.io/vm1 edited\n"
    second = (tmp_path / "seen-2").read_text()
    assert '# virtualmachines.kubevirt.io "vm1" was not valid:\n# * spec.runStrategy: ' in second
    assert "runStrategy: Bogus" in second                   # the user's own text comes back
    assert vm(state)["spec"]["runStrategy"] == "Always"


def test_edit_same_invalid_file_again_gives_up(state, tmp_path):
    env = _editor(tmp_path, 'f.write_text(text.replace("runStrategy: Halted", "runStrategy: Bogus"))\n')
    p = run_edit(state, env, "vm", "vm1")
    assert p.returncode == 1
    lines = p.stderr.splitlines()
    assert lines[0] == 'error: virtualmachines.kubevirt.io "vm1" is invalid'
    assert lines[1].startswith('A copy of your changes has been stored to "')
    assert lines[2] == "error: Edit cancelled, no valid changes were saved."
    assert vm(state)["spec"]["runStrategy"] == "Halted"


def test_edit_syntax_error_reopens(state, tmp_path):
    env = _editor(tmp_path, """\
        if n == 1:
            f.write_text(text + "\\n: : [\\n")
        else:
            f.write_text("\\n".join(l for l in text.splitlines() if l != ": : [").replace("Halted", "Always"))
    """)
    p = run_edit(state, env, "vm", "vm1")
    assert (p.returncode, p.stdout) == (0, "virtualmachine.kubevirt.io/vm1 edited\n")
    assert "# The edited file had a syntax error: " in (tmp_path / "seen-2").read_text()


# --- get -w ---------------------------------------------------------------------------------------------

def test_get_watch_prints_changes_made_by_another_process(state):
    with interruptible_children():
        p = subprocess.Popen([sys.executable, "-m", "instancetype", *store_args(state), "get", "vm", "-w"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        header = p.stdout.readline()
        assert header.split() == ["NAME", "AGE", "STATUS", "READY"]
        assert p.stdout.readline().split()[0] == "vm1"
        assert run(state, "label", "vm", "vm1", "seen=yes").code == 0
        changed = p.stdout.readline()                          # bounded by the finally below
        assert changed.split()[0] == "vm1"
    finally:
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    assert p.returncode == 1 and "Traceback" not in err


def test_get_watch_one_type_only(state):
    r = run(state, "get", "vm,vmi", "-w")
    assert (r.code, r.err) == (1, "error: you may only specify a single resource type\n")


# --- -o jsonpath / custom-columns ------------------------------------------------------------------------

def test_jsonpath(state):
    assert run(state, "get", "vm", "vm1", "-o", "jsonpath={.metadata.name}").out == "vm1"
    assert run(state, "get", "vm", "-o", "jsonpath={.items[*].metadata.name}").out == "vm1"
    r = run(state, "get", "vmf", "-o",
            'jsonpath={range .items[?(@.metadata.name=="small")]}{.metadata.name}{"\\t"}{.spec.cpu.guest}{"\\n"}{end}')
    assert r.out == "small\t1\n"
    assert run(state, "get", "vm", "vm1", "-o", "jsonpath={.spec.instancetype}").out == \
        '{"kind":"VirtualMachineInstancetype","name":"small"}'
    assert run(state, "get", "vm", "vm1", "-o", "jsonpath={.no.such.key}").out == ""
    r = run(state, "get", "vm", "-o", "jsonpath")
    assert (r.code, r.err) == (1, "error: template format specified but no template given\n")
    r = run(state, "get", "vm", "-o", "jsonpath={.items[")
    assert (r.code, r.err) == (1, "error: error parsing jsonpath {.items[, unclosed action\n")


def test_jsonpath_file(state, tmp_path):
    f = tmp_path / "t.jsonpath"
    f.write_text("{.kind}/{.metadata.name}")
    assert run(state, "get", "vm", "vm1", "-o", f"jsonpath-file={f}").out == "VirtualMachine/vm1"


def test_custom_columns(state, tmp_path):
    r = run(state, "get", "vm", "-o", "custom-columns=NAME:.metadata.name,RUN:.spec.runStrategy,TYPE:spec.instancetype,"
                                      "X:{.nothing}")
    assert r.out == ("NAME   RUN      TYPE                                              X\n"
                     "vm1    Halted   map[kind:VirtualMachineInstancetype name:small]   <none>\n")
    f = tmp_path / "cols"
    f.write_text("NAME          RUN\n.metadata.name   .spec.runStrategy\n")
    assert run(state, "get", "vm", "--no-headers", "-o", f"custom-columns-file={f}").out == "vm1   Halted\n"
    r = run(state, "get", "vm", "-o", "custom-columns=NAME")
    assert r.err == "error: unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>\n"


# --- api-resources / explain / completion -------------------------------------------------------------

def test_api_resources(state):
    lines = run(state, "api-resources").out.splitlines()
    assert lines[0].split() == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    assert lines[1].split() == ["namespaces", "ns", "v1", "false", "Namespace"]
    assert ["virtualmachines", "vm,vms", "kubevirt.io/v1", "true", "VirtualMachine"] in [l.split() for l in lines]
    names = run(state, "api-resources", "--namespaced=false", "-o", "name").out.split()
    assert "virtualmachineclusterinstancetypes.instancetype.kubevirt.io" in names and "namespaces" in names
    assert "virtualmachines.kubevirt.io" not in names


def test_explain_field_layout(state):
    r = run(state, "explain", "vm.spec.runStrategy")
    assert r.out == ("GROUP:      kubevirt.io\nKIND:       VirtualMachine\nVERSION:    v1\n\n"
                     "FIELD: runStrategy <string>\n\n\nDESCRIPTION:\n    When the VM runs: Always, RerunOnFailure, "
                     "Once, Manual or Halted (virtctl\n    start and stop change it).\n    \n\n")
    r = run(state, "explain", "vm")
    assert r.out.startswith("GROUP:      kubevirt.io\nKIND:       VirtualMachine\nVERSION:    v1\n\nDESCRIPTION:\n"
                            "    VirtualMachine handles the VirtualMachines that are not running\n")
    assert "FIELDS:\n  apiVersion\t<string>\n    APIVersion defines the versioned schema" in r.out
    assert "  status\t<Object>\n    <no description>\n\n" in r.out      # a field no instancetype touches
    assert "  spec\t<Object> -required-\n" in r.out
    r = run(state, "explain", "vmf.spec.cpu.guest")
    assert r.out.startswith("GROUP:      instancetype.kubevirt.io\nKIND:       VirtualMachineInstancetype\n"
                            "VERSION:    v1beta1\n\nFIELD: guest <integer>\n")
    assert "  disks\t<[]Object>\n" in run(state, "explain", "vm.spec.template.spec.domain.devices").out
    assert run(state, "explain", "vm.spec.nope").err == 'error: field "nope" does not exist\n'
    assert run(state, "explain", "nothing").err == 'error: the server doesn\'t have a resource type "nothing"\n'


def _complete(state, words: str) -> list[str]:
    words = words.replace("instancetype ", "instancetype " + " ".join(store_args(state)) + " ", 1)
    cword = len(words.split()) - (0 if words.endswith(" ") else 1)
    env = dict(os.environ, COMP_WORDS=words, COMP_CWORD=str(cword), _INSTANCETYPE_COMPLETE="bash_complete")
    p = subprocess.run([sys.executable, "-m", "instancetype"], capture_output=True, text=True, env=env, timeout=60)
    return [line.partition(",")[2] for line in p.stdout.splitlines()]


def test_completion(state):
    script = run(state, "completion", "bash").out
    assert "_instancetype_completion()" in script and "_INSTANCETYPE_COMPLETE=bash_complete" in script
    assert "compdef" in run(state, "completion", "zsh").out
    assert run(state, "completion", "fish").err == 'error: Unsupported shell type "fish".\n'
    commands = _complete(state, "instancetype ")
    assert {"get", "patch", "label", "annotate", "edit", "explain", "api-resources", "create", "start"} <= set(commands)
    assert "vm" in _complete(state, "instancetype get v")
    assert _complete(state, "instancetype get vm ") == ["vm1"]
    assert _complete(state, "instancetype label vm/") == ["vm/vm1"]
    assert _complete(state, "instancetype start ") == ["vm1"]


# --- the cluster options, without a cluster ---------------------------------------------------------------

def test_cluster_options_before_create_are_skipped(tmp_path):
    state = tmp_path / "state.db"
    r = run(state, "--kubeconfig", "/nonexistent", "create", "vm", "--name", "x")
    assert r.code == 0 and r.out.startswith("apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n")


def test_state_and_a_cluster_together_are_refused(tmp_path):
    state = tmp_path / "state.db"
    r = run(state, "--kubeconfig", str(tmp_path / "kubeconfig"), "get", "vm")
    assert (r.code, r.out) == (1, "")
    assert r.err == ("error: --state is the embedded store's; it cannot be used with a cluster (--kubeconfig, "
                     "--cluster, --context)\n")


def test_a_missing_kubeconfig_is_one_line(tmp_path):
    env = dict(os.environ)
    env.pop("INSTANCETYPE_STATE", None)
    p = subprocess.run([sys.executable, "-m", "instancetype", "--kubeconfig", str(tmp_path / "none"), "get", "vm"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 1 and len(p.stderr.splitlines()) == 1 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.startswith("error: kubeconfig")
