"""The conformance adapter: JSON Lines in, JSON Lines out, through the public API.

    python -m instancetype.conformance < requests.jsonl > answers.jsonl

One answer per request, in order, flushed as it goes. No rules live here: each
op calls the public API and turns its result or error into the protocol's
answer shape (see shared/conformance/README.md). A line that cannot be read,
or an op not implemented, gets `{"id": ..., "error": "..."}` so the stream
never stops.
"""
from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import msgspec

import instancetype as it
from instancetype.errors import (
    ConflictError,
    DecodeError,
    Error,
    InferError,
    RequirementsError,
    VMIError,
)


def _lookup_kwargs(req: dict) -> dict[str, Any]:
    """Translate the request's lookup keys into public API keywords.

    Without `finder`, the given specs are the ones found (pass them directly).
    With `finder: real`, the given specs are objects stored under the matchers'
    names and kinds, so they join `objects` and the engine resolves the matchers.
    """
    kw: dict[str, Any] = {"config": req.get("config")}
    objects = req.get("objects") or []
    if not isinstance(objects, list):
        raise DecodeError(f"objects: must be a list of objects, not {type(objects).__name__}")
    objects = list(objects)
    if req.get("finder") == "real":
        from instancetype.engine.find import objects_for_matchers

        objects.extend(objects_for_matchers(req["vm"], req.get("instancetype"), req.get("preference")))
    else:
        kw["instancetype"] = req.get("instancetype")
        kw["preference"] = req.get("preference")
    kw["objects"] = objects
    return kw


def op_expand(req: dict) -> dict:
    try:
        return {"vm": it.expand(req["vm"], **_lookup_kwargs(req))}
    except ConflictError as e:
        return {"error": str(e), "conflicts": list(e.fields)}


def op_requirements(req: dict) -> dict:
    try:
        it.check_requirements(req["vm"], instancetype=req.get("instancetype"),
                              preference=req.get("preference"), config=req.get("config"),
                              admission=req.get("mode") == "admission")
        return {"ok": True}
    except RequirementsError as e:
        return {"error": str(e), "field": ", ".join(e.fields), "conflicts": list(e.fields)}
    except ConflictError as e:
        return {"error": str(e), "stage": "apply", "conflicts": list(e.fields)}
    except Error as e:
        return {"error": str(e), "stage": "defaults"}


def op_validate(req: dict) -> dict:
    res = it.validate(req["object"], operation=req.get("operation") or "CREATE", old=req.get("oldObject"))
    return res.to_dict()


def op_admit_vm(req: dict) -> dict:
    res = it.admit_vm(req["vm"], operation=req.get("operation") or "CREATE", old=req.get("oldVM"),
                      whole=False, **_lookup_kwargs(req))
    return res.to_dict()


def op_vm_admission(req: dict) -> dict:
    res = it.admit_vm(req["vm"], operation=req.get("operation") or "CREATE", old=req.get("oldVM"),
                      **_lookup_kwargs(req))
    out = res.to_dict()
    out.pop("vm", None)     # the stored VM is not part of this answer
    if len(out["causes"]) > 10:
        out["causes"] = out["causes"][:10]     # the answer lists the first ten causes
    return out


def op_infer(req: dict) -> dict:
    try:
        res = it.infer(req["vm"], req.get("objects") or ())
    except InferError as e:
        return {"error": str(e), "ignorable": bool(e.ignorable)}
    return {"instancetype": res.instancetype, "preference": res.preference, "vm": res.vm}


def op_vmi(req: dict) -> dict:
    try:
        vmi = it.build_vmi(req["vm"], **_lookup_kwargs(req))
    except VMIError as e:
        out: dict[str, Any] = {"error": str(e), "stage": e.stage}
        if e.requirements_error is not None:
            out["requirementsError"] = e.requirements_error
        if e.causes:
            out["causes"] = [c.to_dict() for c in e.causes]
        return out
    return {"vmi": {k: v for k, v in vmi.items() if k not in ("apiVersion", "kind")}}


OPS: dict[str, Callable[[dict], dict]] = {
    "expand": op_expand,
    "requirements": op_requirements,
    "validate": op_validate,
    "admit-vm": op_admit_vm,
    "vm-admission": op_vm_admission,
    "infer": op_infer,
    "vmi": op_vmi,
}


def answer(line: str | bytes) -> dict:
    """One request line -> one answer; never raises."""
    rid = None
    try:
        try:
            req = _decode(line)
        except msgspec.DecodeError:
            req = json.loads(line)  # Python's reader accepts what msgspec refuses (NaN...), or says why
        if not isinstance(req, dict):
            return {"error": "request is not a JSON object"}
        rid = req.get("id")
        op = req.get("op")
        fn = OPS.get(op) if isinstance(op, str) else None     # (an unhashable op is unsupported, not a TypeError)
        if fn is None:
            out = {"error": f"unsupported op: {op!r}"}
        else:
            try:
                out = fn(req)
            except Error as e:
                out = {"error": str(e)}
    except Exception as e:  # a broken request or a bug: answer, never stop the stream
        out = {"error": f"{type(e).__name__}: {e}"}
    if rid is not None:
        out = {"id": rid, **out}
    return out


_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode


def _line(out: dict) -> bytes:
    try:
        return _encode(out) + b"\n"
    except (TypeError, ValueError, OverflowError):
        return (json.dumps(out, separators=(",", ":"), ensure_ascii=False, default=str) + "\n").encode()


def main() -> None:
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        out.write(_line(answer(line)))
        out.flush()


if __name__ == "__main__":
    main()
