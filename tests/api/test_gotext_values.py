"""Go's texts of values, one function each (`api.gotext`), against what Go prints.

The vectors were printed by Go 1.26 (`json.Marshal(v)` and `fmt.Sprint(v)` of a float64). Before,
three copies disagreed: `cli/tables.py` printed 1e6 as `1e+06`, `cli/jsonpath.py` as `1000000`
(and 1234567.5 as `1234567.5`, which Go's `%v` never prints), `describe` used Python's repr; four
helpers named a value's JSON type with four fallbacks (None was `null`, `array`, `value` or
`object`).
"""
from __future__ import annotations

import datetime
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from instancetype.api.gotext import format_float, go_json, json_float, json_type, served_number

# (float64, json.Marshal, fmt %v) as Go prints them
GO_FLOATS = [
    (1e6, "1000000", "1e+06"),
    (1234567.5, "1234567.5", "1.2345675e+06"),
    (1e21, "1e+21", "1e+21"),
    (1e20, "100000000000000000000", "1e+20"),
    (1.2345678901234567e19, "12345678901234567000", "1.2345678901234567e+19"),
    (0.000015, "0.000015", "1.5e-05"),
    (1e-7, "1e-7", "1e-07"),
    (1.5, "1.5", "1.5"),
    (0.0, "0", "0"),
    (-0.0, "-0", "-0"),
    (100000.0, "100000", "100000"),
    (0.0001, "0.0001", "0.0001"),
    (1e-05, "0.00001", "1e-05"),
    (2.0 ** 63, "9223372036854776000", "9.223372036854776e+18"),
    (123456789012.0, "123456789012", "1.23456789012e+11"),
    (5e-324, "5e-324", "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308", "1.7976931348623157e+308"),
    (0.1, "0.1", "0.1"),
    (2.5e-6, "0.0000025", "2.5e-06"),
    (999999.9999, "999999.9999", "999999.9999"),
    (1e15, "1000000000000000", "1e+15"),
    (1.5e16, "15000000000000000", "1.5e+16"),
]


@pytest.mark.parametrize(("v", "marshal", "sprint"), GO_FLOATS)
def test_float_texts_are_go_s(v, marshal, sprint):
    assert json_float(v) == marshal
    assert format_float(v) == sprint
    assert json_float(-v) == ("-" + marshal if not marshal.startswith("-") else marshal[1:])


def test_format_float_of_non_finite_values():
    assert [format_float(x) for x in (math.inf, -math.inf, math.nan)] == ["+Inf", "-Inf", "NaN"]
    with pytest.raises(ValueError, match="unsupported value: NaN"):
        json_float(math.nan)


@pytest.mark.parametrize(("v", "text"), [
    (1e6, "1000000"),                 # stored as `1000000`, read back as int64
    (1000000, "1000000"),
    (1234567.5, "1.2345675e+06"),     # a float64 stays one: `%v`
    (1e21, "1e+21"),
    (1e20, "1e+20"),                  # the integer text does not fit int64: a float64 again
    (2 ** 63, "9.223372036854776e+18"),
    (-(2 ** 63), "-9223372036854775808"),
    (-0.0, "0"),
    (1.5e-7, "1.5e-07"),
    (True, "true"),
])
def test_served_number_is_what_kubectl_prints_after_the_api_server(v, text):
    """The one rule of the table cells, jsonpath, custom-columns and describe (the copies printed
    1e6 as `1e+06` and `1000000`, 1234567.5 as `1.2345675e+06` and `1234567.5`)."""
    assert served_number(v) == text


def test_the_printers_agree_on_numbers():
    from instancetype.cli import tables
    from instancetype.cli.jsonpath import JSONPath, go_value

    for v in (1e6, 1234567.5, 1e21, 3, 0.5):
        texts = {tables.go_cell(v), JSONPath("{.v}").text({"v": v}), go_value(v)}
        assert texts == {served_number(v)}, (v, texts)


@pytest.mark.parametrize(("v", "name"), [
    (True, "bool"), (1, "number"), (1.5, "number"), ("x", "string"), ([], "array"), ({}, "object"),
    (None, "null"),           # the copies said null, array, value and object
    ((1, 2), "array"),        # a Python caller's tuple: null, array, value, object
    (b"x", "bytes"),          # no JSON type: named by its Python type
])
def test_json_type_names_go_s_unmarshal_types(v, name):
    assert json_type(v) == name


def test_json_type_is_the_one_in_every_error_text():
    from instancetype.store.base import BadRequest, check_create
    from instancetype.webhook.jsonpatch import apply

    with pytest.raises(Exception, match="cannot unmarshal object into Go value of type jsonpatch.Patch"):
        apply({}, {"op": "add"})
    with pytest.raises(BadRequest, match="cannot unmarshal array into Go struct field"):
        check_create({"apiVersion": "v1", "kind": "Namespace", "metadata": []}, None)


def test_go_json_as_json_marshal_writes_an_unstructured_object():
    """Printed by Go: the map json.Unmarshal'd as apimachinery does (int64 or float64), then
    json.NewEncoder(w).Encode (the newline is the Encoder's)."""
    obj = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
           "metadata": {"name": "a<b>&c", "namespace": "ns", "labels": {"x": "é\u2028"}, "annotations": {}},
           "spec": {"cpu": {"guest": 2}, "memory": {"guest": "1Gi", "overcommitPercent": 1e6},
                    "x": [1.5, 1e-7, 1e21, 0.000015]}}
    assert go_json(obj) + "\n" == (
        '{"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"VirtualMachineInstancetype","metadata":'
        '{"annotations":{},"labels":{"x":"é\\u2028"},"name":"a\\u003cb\\u003e\\u0026c","namespace":"ns"},'
        '"spec":{"cpu":{"guest":2},"memory":{"guest":"1Gi","overcommitPercent":1000000},'
        '"x":[1.5,1e-7,1e+21,0.000015]}}\n')


def test_go_json_leaves_its_input_alone():
    obj = {"a": [1.5, {"b": 2.0}], "c": "x"}
    assert go_json(obj) == '{"a":[1.5,{"b":2}],"c":"x"}'
    assert obj == {"a": [1.5, {"b": 2.0}], "c": "x"} and type(obj["a"][1]["b"]) is float
    assert go_json({"b": 1, "a": {}}, indent=4) == '{\n    "a": {},\n    "b": 1\n}'


def _reference_go_json(v):
    """go_json as it was written with `json` alone (the text msgspec's path must equal)."""
    import json
    import re

    from instancetype.api import gotext

    data = gotext._go_floats(v)
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    text = re.sub(gotext._FLOAT_TOKEN, r"\1", text)
    for ch, esc in gotext._GO_ESCAPES:
        text = text.replace(ch, esc)
    return text


_TEXT = st.text(st.one_of(st.characters(max_codepoint=0x7F), st.sampled_from("é漢😀\u2028\u2029\ud800\x7f<>&"),
                          st.characters()), max_size=12)
_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
              st.floats(allow_nan=False, allow_infinity=False), _TEXT),
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(_TEXT, children, max_size=4)),
    max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(_JSON)
def test_go_json_by_msgspec_is_the_json_module_s_text(v):
    """The compact text is written by msgspec; it equals what `json.dumps` wrote before for every
    JSON value: control characters, U+2028/9, HTML characters, non-BMP characters, lone surrogates
    (msgspec refuses them: `json` writes them), integers past 64 bits, floats, key order."""
    assert go_json(v) == _reference_go_json(v)


@pytest.mark.parametrize("value", [(1, "a"), {"k": (1, 2)}, {"b": b"x"}, {"k": [b"x", 1.5]}, {1: "int key"},
                                   {"t": datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)}])
def test_go_json_of_values_json_does_not_decode_answers_as_json_does(value):
    """A tuple is an array for both; bytes, an aware datetime or an int key are refused, or
    written, by `json` as before (msgspec would write bytes and a datetime)."""
    import json

    try:
        expected = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except TypeError:
        with pytest.raises(TypeError):
            go_json(value)
    else:
        assert go_json(value) == expected
