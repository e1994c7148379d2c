"""The pflag-compatible parser and the Go parsing helpers behind `create` (exact texts)."""
from __future__ import annotations

import pytest

from instancetype.api import names as dns1123
from instancetype.cli.create import goparse, params
from instancetype.cli.create.flags import (
    BOOL,
    INT64,
    STRING,
    STRING_ARRAY,
    STRING_SLICE,
    UINT32,
    Flag,
    FlagError,
    FlagSet,
)
from instancetype.errors import CLIError


def flagset() -> FlagSet:
    fs = FlagSet()
    for f in (Flag("name", STRING), Flag("on", BOOL, True), Flag("grace", INT64, 180), Flag("cpu", UINT32),
              Flag("vol", STRING_ARRAY, []), Flag("key", STRING_SLICE, []), Flag("help", BOOL, shorthand="h"),
              Flag("namespace", STRING, shorthand="n")):
        fs.add(f)
    return fs


def parsed(*argv: str) -> FlagSet:
    fs = flagset()
    fs.parse(list(argv))
    return fs


def parse_error(*argv: str) -> str:
    with pytest.raises(FlagError) as exc:
        parsed(*argv)
    return str(exc.value)


# -- syntax ------------------------------------------------------------------------------

def test_long_forms_and_last_value_wins():
    fs = parsed("--name", "a", "--name=b", "--grace=0x10")
    assert fs.value("name") == "b" and fs.changed("name")
    assert fs.value("grace") == 16
    assert not fs.changed("cpu") and fs.value("cpu") == 0


def test_value_may_start_with_a_dash_and_be_empty():
    assert parsed("--name", "-1Gi").value("name") == "-1Gi"
    fs = parsed("--name", "")
    assert fs.value("name") == "" and fs.changed("name")


def test_bool_takes_a_value_only_with_equals():
    fs = parsed("--on", "false")
    assert fs.value("on") is True and fs.args == ["false"]
    assert parsed("--on=F").value("on") is False
    assert parse_error("--on=yes") == \
        'invalid argument "yes" for "--on" flag: strconv.ParseBool: parsing "yes": invalid syntax'


def test_shorthands():
    assert parsed("-n", "ns").value("namespace") == "ns"
    assert parsed("-nns").value("namespace") == "ns"
    assert parsed("-n=ns").value("namespace") == "ns"
    fs = parsed("-hn", "ns")
    assert fs.value("help") is True and fs.value("namespace") == "ns"
    assert parse_error("-m") == "unknown shorthand flag: 'm' in -m"
    assert parse_error("-hm") == "unknown shorthand flag: 'm' in -m"
    assert parse_error("-n") == "flag needs an argument: 'n' in -n"


def test_double_dash_ends_flags():
    fs = parsed("a", "--", "--name", "x")
    assert fs.args == ["a", "--name", "x"] and not fs.changed("name")
    assert parsed("-", "").args == ["-", ""]


@pytest.mark.parametrize("argv, message", [
    (["--bogus"], "unknown flag: --bogus"),
    (["--bogus=1"], "unknown flag: --bogus"),
    (["--name"], "flag needs an argument: --name"),
    (["---x"], "bad flag syntax: ---x"),
    (["--=x"], "bad flag syntax: --=x"),
    (["--grace", "1.5"], 'invalid argument "1.5" for "--grace" flag: strconv.ParseInt: parsing "1.5": invalid syntax'),
    (["--grace", "9223372036854775808"], 'invalid argument "9223372036854775808" for "--grace" flag: '
                                         'strconv.ParseInt: parsing "9223372036854775808": value out of range'),
    (["--cpu", "-1"], 'invalid argument "-1" for "--cpu" flag: strconv.ParseUint: parsing "-1": invalid syntax'),
    (["--cpu", "4294967296"], 'invalid argument "4294967296" for "--cpu" flag: '
                              'strconv.ParseUint: parsing "4294967296": value out of range'),
    (["-n=a", "--key", 'a"b'], 'invalid argument "a\\"b" for "--key" flag: '
                               'parse error on line 1, column 2: bare " in non-quoted-field'),
])
def test_errors(argv, message):
    assert parse_error(*argv) == message


def test_first_error_wins():
    assert parse_error("--cpu", "x", "--bogus") == \
        'invalid argument "x" for "--cpu" flag: strconv.ParseUint: parsing "x": invalid syntax'


def test_string_array_and_slice():
    fs = parsed("--vol", "a,b", "--vol=", "--key", '"x,y",z', "--key", "w")
    assert fs.value("vol") == ["a,b", ""]
    assert fs.value("key") == ["x,y", "z", "w"]
    assert parsed("--key", "").value("key") == []


# -- Go's strconv ------------------------------------------------------------------------------

@pytest.mark.parametrize("text, value", [
    ("0", 0), ("010", 8), ("0x1F", 31), ("0o17", 15), ("0b101", 5), ("1_000", 1000), ("+7", 7), ("-7", -7),
    ("9223372036854775807", 2**63 - 1), ("-9223372036854775808", -2**63),
])
def test_parse_int(text, value):
    assert goparse.parse_int(text, 0, 64) == value


@pytest.mark.parametrize("text", ["", "-", "1_", "_1", "1__0", "0x", "08", "1e3", " 1"])
def test_parse_int_syntax_errors(text):
    with pytest.raises(goparse.NumError) as exc:
        goparse.parse_int(text, 0, 64)
    assert str(exc.value) == f"strconv.ParseInt: parsing {goparse.quote(text)}: invalid syntax"


def test_parse_uint_base10_for_params():
    assert goparse.parse_uint("4294967295", 10, 32) == 4294967295
    with pytest.raises(goparse.NumError, match="value out of range"):
        goparse.parse_uint("4294967296", 10, 32)
    with pytest.raises(goparse.NumError, match="invalid syntax"):
        goparse.parse_uint("0x1", 10, 32)


def test_quote():
    assert goparse.quote('a"b\\c\n\t\x01é') == '"a\\"b\\\\c\\n\\t\\x01é"'
    assert goparse.quote_byte("'") == "'\\''"


@pytest.mark.parametrize("text, record", [
    ("a,b", ["a", "b"]), ('"a,b",c', ["a,b", "c"]), ('"a""b"', ['a"b']), ("a,", ["a", ""]),
    ("a\nb", ["a"]), ("\n\na", ["a"]), ('"a\nb",c', ["a\nb", "c"]), ("a\r\n", ["a"]),
])
def test_csv(text, record):
    assert goparse.read_csv_record(text) == record


@pytest.mark.parametrize("text, message", [
    ('a"b', 'parse error on line 1, column 2: bare " in non-quoted-field'),
    ('"a"b', 'parse error on line 1, column 3: extraneous or missing " in quoted-field'),
    ('"ab', 'parse error on line 1, column 4: extraneous or missing " in quoted-field'),
    ("\n", "EOF"),
])
def test_csv_errors(text, message):
    with pytest.raises(goparse.CSVError) as exc:
        goparse.read_csv_record(text)
    assert str(exc.value) == message


# -- key:value params -------------------------------------------------------------------------

FIELDS = (("name", params.STR), ("bootorder", params.UINT), ("size", params.QUANTITY), ("h", params.LIST))


def test_params_parse():
    got = params.parse("f", "name:a:b/c,bootorder:3,size:5000M,h:x;y,name:d", FIELDS)
    assert got == {"name": "d", "bootorder": 3, "size": "5G", "h": ["x", "y"]}
    assert params.parse("f", "size:0.5Ti", FIELDS) == {"size": "512Gi"}


@pytest.mark.parametrize("text, message", [
    ("", "params may not be empty"),
    ("name:a,", "params need to have at least one colon: "),
    ("foo", "params need to have at least one colon: foo"),
    ("Name:x", "unknown param(s): Name:x"),
    ("bootorder:-1", 'failed to parse param "bootorder": strconv.ParseUint: parsing "-1": invalid syntax'),
    ("size:1Gu", "failed to parse param \"size\": unable to parse quantity's suffix"),
    ("size:1,bootorder:x", 'failed to parse param "bootorder": strconv.ParseUint: parsing "x": invalid syntax'),
])
def test_params_errors(text, message):
    with pytest.raises(CLIError) as exc:
        params.parse("volume-pvc", text, FIELDS)
    assert str(exc.value) == f'failed to parse "--volume-pvc" flag: {message}'


def test_split_prefixed_name():
    assert params.split_prefixed_name("a") == ("", "a")
    assert params.split_prefixed_name("ns/a") == ("ns", "a")
    for text, message in (("a/b/c", "invalid count 2 of slashes in prefix/name"), ("ns/", "name cannot be empty"),
                          ("", "name cannot be empty")):
        with pytest.raises(params.ParamError, match=message):
            params.split_prefixed_name(text)


def test_dns1123_label():
    assert dns1123.label_errors("my-disk-0") == []
    assert dns1123.label_errors("a.b") == ["must not contain dots"]
    assert dns1123.label_errors("x" * 64) == ["must be no more than 63 characters"]
    (regex,) = dns1123.label_errors("MyVM")
    assert regex.startswith("a lowercase RFC 1123 label must consist of") and "(e.g. 'my-name',  or '123-abc'" in regex
    assert dns1123.label_errors("a\n") != []  # Go's `$` does not match before a final newline
