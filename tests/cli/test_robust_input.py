"""Input and streams a user or the machine gets wrong (issue 17): duplicate keys, input nested
100,000 deep, huge numbers, strings and lists, closed or full standard streams, `--state ""`.
Each gives one clear line naming file, document and field, and exit status 1; never a traceback,
never `internal error:`. Refusals are asserted, not timed; the inputs are a few MB at most."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from instancetype.cli import loader
from instancetype.cli.loader import MAX_DEPTH, MAX_INT_DIGITS, MAX_STRING_CHARS, MAX_VALUES, documents_from_text
from instancetype.errors import LoadError

from ._helpers import INSTANCETYPE, run

HEAD = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"


def _one_error_line(r, *needles: str) -> str:
    assert r.code == 1, r
    assert "Traceback" not in r.err and "internal error" not in r.err, r.err
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.err
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def _process(*args: str, stdin=None, stdout=subprocess.PIPE, shell_suffix: str | None = None, env=None):
    """The installed CLI as a user runs it; `shell_suffix` adds redirections such as `>&-`."""
    cmd = [sys.executable, "-m", "instancetype", *args]
    if shell_suffix is not None:
        cmd = ["bash", "-c", f'"$@" {shell_suffix}', "_", *cmd]
    return subprocess.run(cmd, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120,
                          env=env)


def _clean(p) -> None:
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr and "Exception ignored" not in p.stderr, \
        p.stderr


# --- duplicate keys, as kube-apiserver's strict decoding refuses them --------------------------------

@pytest.mark.parametrize("text, needle", [
    (HEAD + "  name: again\n", 'f.yaml: document 1: metadata.name: line 5: key "name" already set in map'),
    (HEAD + "data:\n  a: 1\n  b: 2\n  a: 3\n", 'f.yaml: document 1: data.a: line 8: key "a" already set in map'),
    (HEAD + "kind: Secret\n", 'f.yaml: document 1: kind: line 5: key "kind" already set in map'),
    ("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, data: {x: 1, x: 2}}\n",
     'f.yaml: document 1: items[0].data.x: line 4: key "x" already set in map'),
    (HEAD + "---\n" + HEAD + "data: {}\ndata: {}\n",   # lines count from the top of the file
     'f.yaml: document 2: data: line 11: key "data" already set in map'),
])
def test_duplicate_yaml_keys_are_refused(text, needle):
    with pytest.raises(LoadError) as e:
        documents_from_text(text, "f.yaml")
    assert str(e.value) == needle


def test_duplicate_json_fields_are_refused():
    text = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labels": {"x": "1", "x": "2"}}}'
    with pytest.raises(LoadError) as e:
        documents_from_text(text, "f.json")
    assert str(e.value) == 'f.json: document 1: duplicate field "metadata.labels.x"'


def test_merge_keys_are_not_duplicates():
    text = HEAD + "base: &b {x: 1, y: 2}\ndata:\n  <<: *b\n  y: 3\n"
    (d,) = documents_from_text(text, "f.yaml")
    assert d.obj["data"] == {"x": 1, "y": 3}


@pytest.mark.parametrize("command", ["validate", "apply"])
def test_duplicate_keys_through_the_cli(tmp_path, state, command):
    f = tmp_path / "vm.yaml"
    f.write_text(INSTANCETYPE.replace("  name: small\n", "  name: small\n  name: other\n"))
    r = run(state, command, "-f", str(f))
    _one_error_line(r, str(f), "document 1", 'metadata.name: line 5: key "name" already set in map')
    if command == "apply":
        assert run(state, "get", "vmf", "-A").out == ""


# --- nesting, numbers, strings, sizes -----------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "a: " + "[" * 100_000 + "]" * 100_000,          # flow YAML: crashed the interpreter (C recursion)
    "a:\n" + "".join("  " * i + "- \n" for i in range(1, 150)),
    "- " * 50_000 + "1\n",
    '{"a":' * 100_000 + "1" + "}" * 100_000,          # JSON
    "[" * 100_000 + "]" * 100_000,
])
def test_deep_nesting_is_refused_in_a_subprocess(tmp_path, text):
    f = tmp_path / "deep.yaml"
    f.write_text(text)
    p = _process("validate", "-f", str(f))
    _clean(p)
    assert p.returncode == 1
    assert "deep.yaml: document 1: " in p.stderr and f"nested deeper than {MAX_DEPTH} levels" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_nesting_up_to_the_limit_is_read():
    doc = {"apiVersion": "v1", "kind": "X", "a": 1}
    x: object = 1
    for _ in range(MAX_DEPTH - 1):
        x = [x]
    doc["a"] = x
    assert documents_from_text(json.dumps(doc), "f.json")
    assert documents_from_text("apiVersion: v1\nkind: X\na: " + json.dumps(x) + "\n", "f.yaml")


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_a_5000_digit_integer_is_one_clear_line(tmp_path, state, fmt):
    f = tmp_path / f"n.{fmt}"
    big = "1" * 5000
    f.write_text(HEAD + f"data:\n  n: {big}\n" if fmt == "yaml" else
                 '{"apiVersion": "v1", "kind": "ConfigMap", "data": {"n": ' + big + "}}")
    r = run(state, "validate", "-f", str(f))
    line = _one_error_line(r, f"n.{fmt}: document 1: data.n: a number of 5000 digits is too large")
    assert "set_int_max_str_digits" not in line
    assert f"(at most {MAX_INT_DIGITS})" in line


def test_a_long_base60_integer_is_refused_before_it_is_computed():
    with pytest.raises(LoadError, match="data.n: a number of"):
        documents_from_text(HEAD + "data:\n  n: " + ":".join(["59"] * 300_000) + "\n", "f.yaml")


def test_a_10mb_name_is_refused_by_length(tmp_path, state):
    f = tmp_path / "vm.yaml"
    f.write_text(INSTANCETYPE.replace("name: small", "name: " + "a" * 10_000_000))
    r = run(state, "apply", "-f", str(f))
    _one_error_line(r, "vm.yaml: document 1: metadata.name: a string of 10000000 characters is longer than",
                    str(MAX_STRING_CHARS))


def test_a_long_key_is_refused():
    with pytest.raises(LoadError, match=r"f.yaml: document 1: data: a string of 2000000 characters"):
        documents_from_text(HEAD + "data:\n  " + "k" * 2_000_000 + ": 1\n", "f.yaml")


def test_a_4m_integer_yaml_list_is_refused_for_its_size(tmp_path):
    f = tmp_path / "ints.yaml"
    with open(f, "w") as out:
        out.write("apiVersion: v1\nkind: X\nitems:\n")
        out.write("- 1\n" * 4_000_000)
    p = _process("validate", "-f", str(f))
    _clean(p)
    assert p.returncode == 1
    assert f"ints.yaml: document 1: more than {MAX_VALUES} values in one file" in p.stderr, p.stderr


@pytest.mark.parametrize("text", [
    json.dumps({"apiVersion": "v1", "kind": "X", "a": [1] * 5_000_000}),
    "[" + "[]," * 3_000_000 + "[]]",
])
def test_a_huge_json_list_is_refused_for_its_true_reason(text):
    with pytest.raises(LoadError) as e:
        documents_from_text(text, "big.json")
    assert str(e.value).startswith(f"big.json: document 1: more than {MAX_VALUES} values in one file")
    assert "alias" not in str(e.value)


def test_values_are_counted_across_documents(monkeypatch):
    monkeypatch.setattr(loader, "MAX_VALUES", 50)
    with pytest.raises(LoadError, match="document 6: more than 50 values"):
        documents_from_text((HEAD + "---\n") * 20, "f.yaml")


def test_an_alias_bomb_still_says_so(monkeypatch):
    monkeypatch.setattr(loader, "MAX_VALUES", 1000)
    text = HEAD + "a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n" \
                  "c: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
    with pytest.raises(LoadError, match="alias bomb"):
        documents_from_text(text, "f.yaml")


@pytest.mark.parametrize("text, needle", [
    (HEAD + "a: &a [1, *a]\n", "f.yaml: document 1: a[1]: a YAML alias refers to itself"),
    (HEAD + "a: *nope\n", "f.yaml: document 1: a: found undefined alias 'nope' (line 5)"),
    (HEAD + "a: !!set {x}\n", "a: could not determine a constructor for the tag 'tag:yaml.org,2002:set'"),
    (HEAD + "a: !custom 1\n", "a: could not determine a constructor for the tag '!custom'"),
    (HEAD + "? [1]\n: 2\n", "f.yaml: document 1: (root): key a list is not a string"),
    (HEAD + "a: {1: x}\n", "f.yaml: document 1: a: key 1 is not a string"),
    (HEAD + "a: .nan\n", "f.yaml: document 1: a: nan is not a number JSON can hold"),
    ('{"apiVersion": "v1", "kind": "X", "a": [1e999]}', "f.yaml: document 1: a[0]: inf is not a number"),
])
def test_other_yaml_refusals(text, needle):
    with pytest.raises(LoadError) as e:
        documents_from_text(text, "f.yaml")
    assert needle in str(e.value)


# --- the standard streams -----------------------------------------------------------------------------

CREATE = ("create", "vm", "--name", "x")


@pytest.mark.parametrize("args", [CREATE, ("create", "--help"), ("catalog", "list"), ("--help",)])
def test_stdout_full(args):
    with open("/dev/full", "w") as full:
        p = _process(*args, stdout=full)
    _clean(p)
    assert p.returncode == 1
    assert p.stderr == "error: cannot write the output: No space left on device\n"


def test_stdout_full_after_reading_a_state(tmp_path):
    state = tmp_path / "state.db"
    assert run(state, "apply", "-f", "-", stdin=INSTANCETYPE).code == 0
    with open("/dev/full", "w") as full:
        p = _process("--state", str(state), "get", "vmf", "-o", "yaml", stdout=full)
    _clean(p)
    assert (p.returncode, p.stderr) == (1, "error: cannot write the output: No space left on device\n")


@pytest.mark.parametrize("args", [CREATE, ("catalog", "list"), ("--help",)])
def test_stdout_closed(args):
    p = _process(*args, shell_suffix=">&-")
    _clean(p)
    assert (p.returncode, p.stderr) == (1, "error: cannot write the output: standard output is closed\n")


@pytest.mark.parametrize("args", [CREATE, ("catalog", "bundle"), ("--help",)])
def test_reader_gone_is_silent(args):
    r, w = os.pipe()
    os.close(r)
    try:
        p = _process(*args, stdout=w)
    finally:
        os.close(w)
    assert (p.returncode, p.stderr) == (1, "")


def test_stderr_closed_too():
    p = _process(*CREATE, shell_suffix=">&- 2>&-")
    assert p.returncode == 1


@pytest.mark.parametrize("command", ["apply", "validate", "delete"])
def test_stdin_closed(tmp_path, command):
    p = _process("--state", str(tmp_path / "s.db"), command, "-f", "-", shell_suffix="<&-")
    _clean(p)
    assert (p.returncode, p.stderr) == (1, "error: <stdin>: standard input is closed\n")


# --- --state "" -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [("--state", "", "get", "vm"), ("--state=", "get", "vm"),
                                  ("--state", "", "apply", "-f", "-"), ("--state", "", "create", "vm", "--name", "x"),
                                  ("--state=", "create", "vm")])
def test_empty_state_path_is_an_error(tmp_path, args):
    p = _process(*args, stdin=subprocess.DEVNULL, env=dict(os.environ, HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path)))
    _clean(p)
    assert p.returncode == 1
    assert p.stderr == ("error: --state: the path is empty (name the state file, or leave --state out for the "
                        "default)\n")
    assert p.stdout == ""
    assert not (tmp_path / "instancetype").exists()


def test_stdin_none_in_process(monkeypatch):
    monkeypatch.setattr(sys, "stdin", None)
    with pytest.raises(LoadError, match=r"^<stdin>: standard input is closed$"):
        loader.read_sources(["-"])


# --- hostile YAML, generated (bench/fuzz.py runs the long version) ---------------------------------------

PIECES = ['"a\\nb": {"c\\nd": 1, "c\\nd": 2}',
          "apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: a", "  name: a", "data: &d {a: 1}",
          "data: {a: 1, a: 2}", "x: *d", "x: *nope", "y: &s [*s]", "z:\n  <<: *d\n  a: 2", "<<: 1", "? [1]\n: 2",
          "1: a", "~: c", "n: " + "9" * 1200, "n: " + ":".join(["59"] * 600), "f: .nan", "b: !!binary a",
          "s: !!set {a}", "q: !!int x", "d: " + "[" * 150 + "]" * 150, "- " * 120 + "1", "---", "'", "\t"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=10), st.sampled_from(["", "  ", "- "]))
def test_hostile_yaml_gives_only_load_errors(lines, indent):
    try:
        documents_from_text("\n".join(indent + line for line in lines) + "\n", "fuzz.yaml")
    except LoadError as e:
        assert "\n" not in str(e), str(e)
