"""Shell completion as kubectl's scripts complete (issue 29, item 3): the generated bash script run
in bash, completing file names, flags, `-o` values, kinds and names; zsh's script generated."""
from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import instancetype

from ._helpers import INSTANCETYPE, VM, run, store_args

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def _script(tmp_path) -> str:
    r = run(tmp_path / "unused.db", "completion", "bash")
    assert r.code == 0, r.err
    path = tmp_path / "completion.bash"
    path.write_text(r.out)
    return str(path)


def complete(tmp_path, *words: str, cwd=None) -> list[str]:
    """What bash offers for the last word of `instancetype WORDS...`, through the script's own
    completion function (as bash calls it on TAB)."""
    line = " ".join(shlex.quote(w) for w in ("instancetype", *words))
    # the function calls `$1`: a small wrapper that runs this checkout's CLI
    wrapper = tmp_path / "bin" / "instancetype"
    wrapper.parent.mkdir(exist_ok=True)
    src = shlex.quote(str(Path(instancetype.__file__).parents[1]))       # this checkout, whatever the cwd
    wrapper.write_text(f"#!/bin/sh\nPYTHONPATH={src} exec {shlex.quote(sys.executable)} -m instancetype \"$@\"\n")
    wrapper.chmod(0o755)
    program = f"""
        source {shlex.quote(_script(tmp_path))}
        complete -p instancetype >&2
        COMP_WORDS=({line}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); COMPREPLY=()
        _instancetype_completion {shlex.quote(str(wrapper))}
        printf '%s\\n' "${{COMPREPLY[@]}}"
    """
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], capture_output=True, text=True,
                       cwd=cwd or tmp_path, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "complete -o nosort -F _instancetype_completion instancetype" in p.stderr   # registered
    return sorted(x for x in p.stdout.splitlines() if x)


def test_file_names_flags_and_output_values(tmp_path):
    work = tmp_path / "work"
    (work / "certs").mkdir(parents=True)
    (work / "vm.yaml").write_text("")
    (work / "vmit.json").write_text("")
    assert complete(tmp_path, "apply", "-f", "vm", cwd=work) == ["vm.yaml", "vmit.json"]
    assert complete(tmp_path, "create", "-f", "vmi", cwd=work) == ["vmit.json"]
    assert complete(tmp_path, "image-upload", "dv", "x", "--image-path", "v", cwd=work) == ["vm.yaml", "vmit.json"]
    assert complete(tmp_path, "install", "--cert-dir", "c", cwd=work) == ["certs"]
    assert complete(tmp_path, "get", "vm", "-o", "j") == ["json", "jsonpath-file=", "jsonpath="]
    assert complete(tmp_path, "expand", "-o", "") == ["json", "yaml"]
    assert complete(tmp_path, "catalog", "list", "-o", "") == ["json", "matrix", "name", "table", "yaml"]
    assert "--sort-by" in complete(tmp_path, "get", "--s")
    assert complete(tmp_path, "wait", "--al") == ["--all", "--all-namespaces"]
    assert complete(tmp_path, "create", "") == ["instancetype", "namespace", "preference", "vm"]
    assert complete(tmp_path, "create", "vm", "--instancetype") == ["--instancetype"]
    assert {"--cpu", "--memory", "--name"} <= set(complete(tmp_path, "create", "instancetype", "--"))


def test_kinds_and_names(target, tmp_path):
    assert run(target, "apply", "-f", "-", stdin=INSTANCETYPE + "---\n" + VM).code == 0
    assert "virtualmachines" in complete(tmp_path, "get", "virtualm")
    assert complete(tmp_path, *store_args(target), "get", "vm", "") == ["vm1"]
    assert complete(tmp_path, *store_args(target), "start", "v") == ["vm1"]


def test_zsh_script(tmp_path):
    r = run(tmp_path / "unused.db", "completion", "zsh")
    assert r.code == 0 and r.out.startswith("#compdef instancetype\n") and "_path_files -f" in r.out
