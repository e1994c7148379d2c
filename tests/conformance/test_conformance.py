"""Every shared conformance case, through the adapter, under the README's comparison rule.

The cases are KubeVirt v1.9's own answers. `known_failures.txt` lists case ids that
do not pass yet (one per line, `#` comments); it must shrink to empty. A listed
case that passes is reported by `test_known_failures_are_current`.
"""
from __future__ import annotations

import json
import pathlib

import pytest

from instancetype.conformance import answer

from .canon import diff, equal

HERE = pathlib.Path(__file__).parent
FILES = ["expand.jsonl", "expand-harvested.jsonl", "requirements.jsonl", "validate.jsonl",
         "admit-vm.jsonl", "infer.jsonl", "vmi.jsonl"]


def _known() -> set[str]:
    p = HERE / "known_failures.txt"
    if not p.exists():
        return set()
    return {ln.split("#")[0].strip() for ln in p.read_text().splitlines()} - {""}


KNOWN = _known()


def _cases():
    for name in FILES:
        with open(HERE / name) as f:
            for line in f:
                if line.strip():
                    v = json.loads(line)
                    marks = [pytest.mark.xfail(reason="known failure", strict=False)] if v["id"] in KNOWN else []
                    yield pytest.param(v, id=v["id"], marks=marks)


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
