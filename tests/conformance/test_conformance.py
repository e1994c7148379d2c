"""Every shared conformance case, through the adapter, under the README's comparison rule.

The cases are KubeVirt v1.9's own answers (`create.jsonl` runs as real command lines in
`tests/cli/test_create*.py`). Every one must pass.
"""
from __future__ import annotations

import json
import pathlib

import pytest

from instancetype.conformance import answer

from .canon import diff, equal

HERE = pathlib.Path(__file__).parent
FILES = ["expand.jsonl", "expand-harvested.jsonl", "requirements.jsonl", "validate.jsonl",
         "admit-vm.jsonl", "infer.jsonl", "vmi.jsonl", "vm-admission.jsonl"]


def _cases():
    for name in FILES:
        with open(HERE / name) as f:
            for line in f:
                if line.strip():
                    v = json.loads(line)
                    yield pytest.param(v, id=v["id"])


def run(v: dict) -> dict:
    req = dict(v["request"])
    req["id"] = v["id"]
    return answer(json.dumps(req))


@pytest.mark.parametrize("case", list(_cases()))
def test_case(case):
    got = run(case)
    assert got.get("id") == case["id"]
    if not equal(case["expect"], got):
        pytest.fail("\n".join(diff(case["expect"], got)))

