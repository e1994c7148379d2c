"""Names as kube-apiserver checks them (apimachinery's texts), through the API and the CLI."""
from __future__ import annotations

import pytest
import yaml

from instancetype.api import names
from instancetype.controller import Cluster
from instancetype.store.base import BadRequest, Invalid
from tests import builders

from ._helpers import run

SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
             "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
         "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


def test_the_rules():
    assert names.subdomain_errors("vm-1.example") == []
    assert names.subdomain_errors("x" * 253) == []
    assert names.subdomain_errors("x" * 254) == ["must be no more than 253 characters"]
    assert names.subdomain_errors("é" * 127) == ["must be no more than 253 characters", SUBDOMAIN]  # bytes, as Go
    for bad in ("MyVM", "a/b", "a b", "vmé", "-a", "a-", "a..b", "", "a_b", ".", "..", "a\n"):
        assert names.subdomain_errors(bad) == [SUBDOMAIN], bad
    assert names.label_errors("a.b") == ["must not contain dots"]
    assert names.label_errors("A") == [LABEL]
    assert names.path_segment_errors("..") == ["may not be '..'"]
    assert names.path_segment_errors(".") == ["may not be '.'"]
    assert names.path_segment_errors("a/%b") == ["may not contain '/'", "may not contain '%'"]
    assert names.path_segment_errors("...") == []
    assert names.name_errors("Namespace", "a.b") == ["must not contain dots"]
    assert names.name_errors("PersistentVolumeClaim", "a.b") == []


def _refused(call) -> Exception:
    with pytest.raises((Invalid, BadRequest)) as e:
        call()
    return e.value


def test_every_write_of_the_api_refuses_with_the_api_servers_text(tmp_path):
    vm = builders.vm("MyVM", domain={"devices": {}}, namespace=None, runStrategy="Halted")
    with Cluster.open(str(tmp_path / "s.db")) as c:
        for write in (c.apply, c.create, c.store.create):
            e = _refused(lambda write=write: write(vm))
            assert str(e) == f'VirtualMachine.kubevirt.io "MyVM" is invalid: metadata.name: Invalid value: "MyVM": {SUBDOMAIN}'
            assert [tuple(x) for x in e.causes] == [("metadata.name", f'Invalid value: "MyVM": {SUBDOMAIN}')]
        e = _refused(lambda: c.apply({**vm, "metadata": {"name": "x" * 254}}))
        assert str(e).endswith(f'is invalid: metadata.name: Invalid value: "{"x" * 254}": must be no more than 253 '
                               'characters')
        e = _refused(lambda: c.apply({**vm, "metadata": {"name": "X" * 254}}))
        assert str(e).endswith(f'is invalid: [metadata.name: Invalid value: "{"X" * 254}": must be no more than 253 '
                               f'characters, metadata.name: Invalid value: "{"X" * 254}": {SUBDOMAIN}]')
        e = _refused(lambda: c.apply({**vm, "metadata": {"name": "vm", "namespace": "Prod"}}))
        assert str(e) == f'VirtualMachine.kubevirt.io "vm" is invalid: metadata.namespace: Invalid value: "Prod": {LABEL}'
        e = _refused(lambda: c.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}}))
        assert str(e) == 'Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots'
        e = _refused(lambda: c.apply({**vm, "metadata": {"generateName": "Vm-"}}))
        assert str(e).startswith('VirtualMachine.kubevirt.io "Vm-xxxxx" is invalid: [metadata.generateName: Invalid '
                                 'value: "Vm-": ')
        e = _refused(lambda: c.apply({**vm, "metadata": {"name": "tab\there"}}))
        assert 'Invalid value: "tab\\there"' in str(e)          # Go's %q
        e = _refused(lambda: c.create({**vm, "metadata": {"name": None}}))
        assert str(e) == ('VirtualMachine.kubevirt.io "" is invalid: metadata.name: Required value: name or '
                          'generateName is required')
        assert c.store.count("VirtualMachine") == 0
        ok = c.create({**vm, "metadata": {"generateName": "vm-"}}).object
        assert ok["metadata"]["name"].startswith("vm-")


def test_apply_prints_the_invalid_error_as_kubectl(target, tmp_path):
    state = target
    manifest = tmp_path / "vm.yaml"
    vm = builders.vm("MyVM", domain={"devices": {}}, namespace=None, runStrategy="Halted")
    manifest.write_text(yaml.safe_dump(vm))
    r = run(state, "apply", "-f", str(manifest))
    assert (r.code, r.out) == (1, "")
    assert r.err == f'The VirtualMachine "MyVM" is invalid: metadata.name: Invalid value: "MyVM": {SUBDOMAIN}\n'
    manifest.write_text(yaml.safe_dump({**vm, "metadata": {"name": "a/b", "namespace": "A_B"}}))
    r = run(state, "apply", "-f", str(manifest))
    assert r.err == ('The VirtualMachine "a/b" is invalid: \n'
                     f'* metadata.name: Invalid value: "a/b": {SUBDOMAIN}\n'
                     f'* metadata.namespace: Invalid value: "A_B": {LABEL}\n')
    manifest.write_text(yaml.safe_dump_all([vm, {**vm, "metadata": {"name": "b c"}}]))
    r = run(state, "apply", "-f", str(manifest))
    assert r.err.splitlines() == [
        f'Error from server (Invalid): error when creating "{manifest}": VirtualMachine.kubevirt.io "MyVM" is '
        f'invalid: metadata.name: Invalid value: "MyVM": {SUBDOMAIN}',
        f'Error from server (Invalid): error when creating "{manifest}": VirtualMachine.kubevirt.io "b c" is '
        f'invalid: metadata.name: Invalid value: "b c": {SUBDOMAIN}']


def test_validate_gives_one_line_for_a_null_or_non_string_name(tmp_path):
    vm = builders.vm("", domain={"devices": {}}, namespace=None, runStrategy="Halted")   # each document names it
    it = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
          "spec": {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}}
    manifest = tmp_path / "m.yaml"
    manifest.write_text(yaml.safe_dump_all([{**vm, "metadata": {"name": None}}, {**vm, "metadata": {"name": 5}},
                                            {**it, "metadata": {"name": [1]}}, {**vm, "metadata": {"name": "ok"}}]))
    r = run(tmp_path / "unused.db", "validate", "-f", str(manifest))
    assert r.code == 1
    assert r.out == "virtualmachine.kubevirt.io/ok valid\n"       # a refused document poisons no other
    assert r.err.splitlines() == [
        f'error: {manifest}: document 1: virtualmachine.kubevirt.io/: The VirtualMachine "" is invalid: '
        "metadata.name: Required value: name or generateName is required",
        f"error: {manifest}: document 2: virtualmachine.kubevirt.io/: Error from server (BadRequest): json: cannot "
        "unmarshal number into Go struct field ObjectMeta.metadata.name of type string",
        f"error: {manifest}: document 3: virtualmachineinstancetype.instancetype.kubevirt.io/: Error from server "
        "(BadRequest): json: cannot unmarshal array into Go struct field ObjectMeta.metadata.name of type string"]
    assert "None" not in r.err


def test_delete_and_image_upload_refuse_names_that_cannot_be_a_path_segment(target, tmp_path):
    state = target
    image = tmp_path / "i.img"
    image.write_bytes(b"x")
    r = run(state, "delete", "pvc", "..", "a%b")
    assert r.err.splitlines() == ["invalid resource name \"..\": [may not be '..']",
                                  "invalid resource name \"a%b\": [may not contain '%']"]
    r = run(state, "image-upload", "dv", "../../x/%y", "--size=1Mi", f"--image-path={image}")
    assert (r.code, r.err) == (1, "invalid resource name \"../../x/%y\": [may not contain '/' may not contain '%']\n")


def test_the_store_keeps_exactly_the_names_the_rule_accepts(tmp_path):
    import re

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    rule = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
    with Cluster.open(str(tmp_path / "s.db")) as c:
        @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
        @given(st.one_of(st.text(max_size=20), st.from_regex(rule, fullmatch=True),
                         st.text(alphabet="a-.%/\\é0Z", max_size=12)))
        def check(name):
            valid = bool(rule.fullmatch(name)) and len(name.encode()) <= 253
            try:
                c.store.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                "metadata": {"name": name}})
            except Invalid as e:
                assert not valid, (name, str(e))
                assert e.causes and all(x.field == "metadata.name" for x in e.causes)
            except Exception as e:      # already stored by an earlier example
                assert valid and "already exists" in str(e), (name, str(e))
            else:
                assert valid, name

        check()
