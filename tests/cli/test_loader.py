"""The `-f` loader: formats, directories, stdin, and every kind of bad input as one clear error."""
from __future__ import annotations

import io
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from instancetype.cli.loader import MAX_FILE_BYTES, documents_from_text, read_source, read_sources
from instancetype.errors import Error, LoadError

VM = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm1\n"


def test_multi_document_yaml_skips_empty_documents():
    docs = documents_from_text(VM + "---\n---\n" + VM.replace("vm1", "vm2"), "f.yaml")
    assert [d.name for d in docs] == ["vm1", "vm2"]
    assert [d.index for d in docs] == [1, 3]


def test_json_and_list_objects():
    text = '{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}]}'
    docs = documents_from_text(text, "l.json")
    assert len(docs) == 1 and docs[0].item == 0 and docs[0].name == "a"


def test_timestamps_stay_text_and_binary_becomes_base64():
    d = documents_from_text(VM + "x: 2020-01-01\ny: !!binary aGVsbG8=\n", "f")[0]
    assert d.obj["x"] == "2020-01-01" and d.obj["y"] == "aGVsbG8="


@pytest.mark.parametrize("text, needle", [
    ("a: [1\n", "f.yaml: document 1: invalid YAML"),
    ("- 1\n- 2\n", "f.yaml: document 1: expected an object, got a list"),
    ("kind: VirtualMachine\n", "f.yaml: document 1: apiVersion: Required value"),
    ("apiVersion: v1\n", "f.yaml: document 1: kind: Required value"),
    (VM + "---\na: &a [*a]\n", "f.yaml: document 2"),
    ("apiVersion: v1\nkind: X\nmetadata: 3\n", "metadata: expected an object"),
    ("apiVersion: v1\nkind: X\nv: .inf\n", "v: inf is not a number"),
    ("apiVersion: v1\nkind: X\n1: a\n", "key 1 is not a string"),
])
def test_bad_documents_name_file_document_and_reason(text, needle):
    with pytest.raises(LoadError) as e:
        documents_from_text(text, "f.yaml")
    assert needle in str(e.value)


def test_alias_bomb_is_refused_quickly():
    lines, prev = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'], "a"
    for name in "bcdefghijk":
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
        prev = name
    with pytest.raises(LoadError, match="alias bomb"):
        documents_from_text("\n".join(lines) + "\napiVersion: v1\nkind: X\n", "bomb.yaml")


def test_directories_are_read_recursively_in_order(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "a.yaml").write_text(VM)
    (tmp_path / "b" / "c.yml").write_text(VM.replace("vm1", "vm2"))
    (tmp_path / "b" / "notes.txt").write_text("not a manifest")
    docs = read_source(str(tmp_path))
    assert [d.name for d in docs] == ["vm1", "vm2"]


def test_stdin():
    docs = read_sources(["-"], stdin=io.BytesIO(VM.encode()))
    assert docs[0].source == "<stdin>"


def test_binary_and_missing_and_large_files(tmp_path):
    b = tmp_path / "disk.img"
    b.write_bytes(b"\x00\x01\x02" * 100)
    with pytest.raises(LoadError, match="binary data"):
        read_source(str(b))
    with pytest.raises(LoadError, match='"nope.yaml" does not exist'):
        read_source("nope.yaml")
    big = tmp_path / "big.yaml"
    with open(big, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)
    with pytest.raises(LoadError, match="larger than 64 MiB"):
        read_source(str(big))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads unreadable files")
def test_unreadable_file(tmp_path):
    f = tmp_path / "x.yaml"
    f.write_text(VM)
    f.chmod(0)
    with pytest.raises(LoadError, match="x.yaml"):
        read_source(str(f))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=200), st.binary(max_size=200).map(lambda b: b.decode("latin-1"))))
def test_fuzz_only_load_errors_escape(text):
    try:
        docs = documents_from_text(text, "fuzz.yaml")
    except Error as e:
        # one line that names the file
        assert isinstance(e, LoadError) and str(e).startswith("fuzz.yaml") and "\n" not in str(e), repr(e)
        return
    # what loads is objects with their type meta, numbered by document
    for d in docs:
        assert d.source == "fuzz.yaml" and d.index >= 1, d
        assert isinstance(d.obj["apiVersion"], str) and d.obj["apiVersion"] and d.obj["kind"], d
