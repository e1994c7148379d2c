"""Every admission outcome is the same through the cluster as through the Python API: the public
conformance objects (validate.jsonl, admit-vm.jsonl) that pass the CRD schema, created (server-side
dry run) through the real API server with `install` + `serve`, against the Python API's answer.

Compared: the HTTP code, the reason, the message after the API server's `admission webhook "NAME"
denied the request: ` prefix, the causes, and the warnings (the API server's Warning headers).
The cases are a deterministic sample (every Nth CREATE case, at most ~75 of each file) to keep
the run short. `serve` reads through informers: the objects a case needs are created first, and
the answer is asked again until the caches have them (bounded).
"""
from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

import instancetype
from instancetype.api import kinds
from instancetype.api.versions import needs_upgrade, upgrade
from instancetype.engine.validation import review
from instancetype.engine.vm_validation.schema import check_vm_schema_shaped
from instancetype.errors import Error
from instancetype.store.base import AlreadyExists, APIError, NotFound
from instancetype.store.kube import KubeStore
from tests.kube.served import installed_and_served
from tests.waits import eventually

CONFORMANCE = Path(__file__).resolve().parents[1] / "conformance"
PER_FILE = 75
SETTLE_S = 15.0          # how long the informers may take to show a case's objects


def _cases(name: str) -> list[dict]:
    cases = [json.loads(line) for line in (CONFORMANCE / name).read_text().splitlines() if line.strip()]
    eligible = [c for c in cases if c["request"].get("operation") in (None, "CREATE")]
    step = max(1, -(-len(eligible) // PER_FILE))
    return eligible[::step]


VALIDATE = _cases("validate.jsonl")
ADMIT_VM = _cases("admit-vm.jsonl")


@pytest.fixture(scope="module")
def served(kube, webhook_certs):
    with installed_and_served(kube, webhook_certs) as served:
        yield served


@pytest.fixture(scope="module")
def store(kube, served):
    s = KubeStore(str(kube.kubeconfig))
    yield s
    s.close()


def _prefix(webhook: str) -> str:
    return f'admission webhook "{webhook}" denied the request: '


class SchemaRefused(Exception):
    """The API server refused the object itself (its CRD's schema), before any webhook."""


def _warnings(store: KubeStore) -> list[str]:
    # `unknown field "x"`: the API server's field validation (the CRD's schema prunes the field),
    # not admission's; the engine's own schema check prunes it silently.
    return [w for w in store.last_warnings if not w.startswith("unknown field ")]


def _cluster_answer(store: KubeStore, obj: dict, namespace: str | None) -> dict:
    try:
        store.create(obj, namespace=namespace, dry_run=True)
    except APIError as e:
        status = getattr(e, "status_body", {}) or {}
        if e.code == 422 and not e.message.startswith("admission webhook "):
            raise SchemaRefused(e.message) from None
        return {"allowed": False, "code": e.code, "reason": status.get("reason", ""),
                "message": e.message, "causes": (status.get("details") or {}).get("causes", []),
                "warnings": _warnings(store)}
    return {"allowed": True, "warnings": _warnings(store)}


def _python_answer(result, webhook: str, warnings: list[str]) -> dict:
    if result.allowed:
        return {"allowed": True, "warnings": warnings + list(result.warnings)}
    return {"allowed": False, "code": result.code, "reason": result.reason or "",
            "message": _prefix(webhook) + result.message, "causes": [c.to_dict() for c in result.causes],
            "warnings": warnings}


def _settled(store, obj, namespace, expected) -> dict:
    """The cluster's answer once it is `expected`, or its last one after SETTLE_S (for the diff)."""
    answers = []

    def answered() -> bool:
        try:
            answers.append(_cluster_answer(store, obj, namespace))
        except SchemaRefused as e:
            pytest.skip(f"refused by the CRD's schema: {e}")
        return answers[-1] == expected

    with contextlib.suppress(AssertionError):
        eventually(answered, SETTLE_S, interval=0.1, what="the informers to show the case's objects")
    return answers[-1]


@pytest.mark.parametrize("case", VALIDATE, ids=[c["id"] for c in VALIDATE])
def test_validate_case(store, namespace, case):
    obj = json.loads(json.dumps(case["request"]["object"]))
    warnings: list[str] = []
    probe = obj
    if needs_upgrade(obj):
        probe, warnings = upgrade(obj)
    result, _ = review(probe, operation="CREATE")
    if result.stage == "schema":
        pytest.skip("refused by the CRD's schema (the API server's, not a webhook's)")
    res = kinds.BY_KIND.get(probe.get("kind"))
    meta = obj.setdefault("metadata", {})
    # A name of its own: the catalogue's cluster-wide objects (`install`) may hold the case's.
    meta["name"] = "replay-" + case["id"].split("-")[2]
    if res is not None and res.namespaced:
        meta["namespace"] = namespace
    else:
        meta.pop("namespace", None)
    expected = _python_answer(result, kinds.type_validator_webhook(probe["kind"]), warnings)
    assert _settled(store, obj, namespace if res and res.namespaced else None, expected) == expected


def _stored_types(vm: dict, request: dict, namespace: str) -> list[dict]:
    """The case's instancetype and preference as the objects they stand for (api: admit_vm)."""
    out = []
    for side, table, given in (("instancetype", kinds.INSTANCETYPE_MATCHER_KINDS, request.get("instancetype")),
                               ("preference", kinds.PREFERENCE_MATCHER_KINDS, request.get("preference"))):
        matcher = (vm.get("spec") or {}).get(side)
        if given is None or not isinstance(matcher, dict):
            continue
        kind = table.get(str(matcher.get("kind") or "").lower())
        if isinstance(given, dict) and isinstance(given.get("spec"), dict) and "apiVersion" in given:
            obj = json.loads(json.dumps(given))
            obj.setdefault("kind", kind or table[""])
            obj.setdefault("metadata", {}).setdefault("name", matcher.get("name"))
        elif kind is not None:
            obj = {"apiVersion": kinds.API_VERSION, "kind": kind, "metadata": {"name": matcher.get("name")},
                   "spec": given}
        else:
            continue
        out.append(obj)
    for obj in request.get("objects") or ():
        out.append(json.loads(json.dumps(obj)))
    for obj in out:
        res = kinds.BY_KIND.get(obj.get("kind"))
        meta = obj.setdefault("metadata", {})
        if res is not None and res.namespaced:
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        for k in ("uid", "resourceVersion", "creationTimestamp"):
            meta.pop(k, None)
    return out


@pytest.mark.parametrize("case", ADMIT_VM, ids=[c["id"] for c in ADMIT_VM])
def test_admit_vm_case(store, namespace, case):
    request = json.loads(json.dumps(case["request"]))
    vm = request["vm"]
    if not isinstance(vm, dict) or check_vm_schema_shaped(vm)[0]:
        pytest.skip("refused by the VirtualMachine CRD's schema")
    vm.setdefault("metadata", {})["namespace"] = namespace
    objects = _stored_types(vm, request, namespace)
    config = request.get("config")
    made, replaced = [], []
    try:
        for obj in objects:
            try:
                made.append(store.create(obj))
            except AlreadyExists:
                # A catalogue object (`install`) of the same name: the case's spec for a while.
                current = store.get(obj["kind"], obj["metadata"]["name"])
                replaced.append(current)
                store.update({**current, "spec": obj.get("spec")})
            except APIError as e:
                pytest.skip(f"an object of the case cannot be created on a cluster: {e}")
        # What exists for the Python API: the case's objects and the cluster-wide types.
        existing = [o for o in made if o["kind"] not in (kinds.CLUSTER_INSTANCETYPE, kinds.CLUSTER_PREFERENCE)]
        existing += list(store.list(kinds.CLUSTER_INSTANCETYPE)) + list(store.list(kinds.CLUSTER_PREFERENCE))
        if config:
            try:
                store.patch("KubeVirt", "kubevirt", {"spec": {"configuration": config}}, "kubevirt")
            except APIError as e:
                pytest.skip(f"the case's configuration is refused by the KubeVirt CRD: {e}")
        try:
            result = instancetype.admit_vm(vm, objects=existing, config=config)
        except Error as e:
            pytest.skip(f"the Python API refuses the case's input: {e}")
        webhook = kinds.WEBHOOK_VM_MUTATOR if result.stage == "mutate" else kinds.WEBHOOK_VM_VALIDATOR
        expected = _python_answer(result, webhook, [])
        assert _settled(store, vm, namespace, expected) == expected
    finally:
        if config:
            store.patch("KubeVirt", "kubevirt", {"spec": {"configuration": None}}, "kubevirt")
        for obj in made:
            meta = obj["metadata"]
            try:
                store.delete(obj["kind"], meta["name"], meta.get("namespace"))
            except NotFound:
                pass
        for obj in replaced:
            store.update({**store.get(obj["kind"], obj["metadata"]["name"]), "spec": obj["spec"]})
