"""instancetype: KubeVirt's instancetype.kubevirt.io system in Python.

The public API (stable): the engine's pure functions and the one exception tree.

    expand(vm, *, instancetype=None, preference=None, objects=(), config=None) -> dict
    check_requirements(vm, *, instancetype=None, preference=None, config=None, admission=False)
    validate(obj, *, operation="CREATE", old=None) -> AdmissionResult
    infer(vm, objects) -> InferResult
    admit_vm(vm, *, operation="CREATE", old=None, instancetype=None, preference=None,
             objects=(), config=None, whole=True, mutate_only=False) -> AdmissionResult
    build_vmi(vm, *, instancetype=None, preference=None, objects=(), config=None) -> dict
    decode_instancetype(obj) -> DecodedSpec, decode_preference(obj) -> DecodedSpec
        a spec decoded once, to pass as `instancetype=` / `preference=` to the functions above
        (engine/decoded_spec.py)

No function mutates its arguments. Imports are lazy so that the command line
pays only for what it uses.
"""
from __future__ import annotations

from .errors import (  # noqa: F401  (re-exported)
    CLIError,
    ConflictError,
    DecodeError,
    DefaultsError,
    Error,
    InferError,
    InternalError,
    LoadError,
    NotFoundError,
    QuantityError,
    RequirementsError,
    SpreadError,
    StoreError,
    UnexpectedKindError,
    ValidationError,
    VMIError,
)

__version__ = "0.1.0"

_LAZY = {
    "expand": ("instancetype.engine.expand", "expand"),
    "check_requirements": ("instancetype.engine.requirements", "check_requirements"),
    "validate": ("instancetype.engine.validation", "validate"),
    "infer": ("instancetype.engine.infer", "infer"),
    "admit_vm": ("instancetype.engine.vm_admission", "admit_vm"),
    "build_vmi": ("instancetype.engine.vmi", "build_vmi"),
    "decode_instancetype": ("instancetype.engine.decoded_spec", "decode_instancetype"),
    "decode_preference": ("instancetype.engine.decoded_spec", "decode_preference"),
    "DecodedSpec": ("instancetype.engine.spec", "DecodedSpec"),
    "Quantity": ("instancetype.api.quantity", "Quantity"),
    "AdmissionResult": ("instancetype.engine.results", "AdmissionResult"),
    "Cause": ("instancetype.engine.results", "Cause"),
    "InferResult": ("instancetype.engine.results", "InferResult"),
}

__all__ = sorted(list(_LAZY) + [
    "Error", "QuantityError", "LoadError", "DecodeError", "ValidationError", "ConflictError",
    "SpreadError", "RequirementsError", "NotFoundError", "UnexpectedKindError", "DefaultsError",
    "InferError", "InternalError", "VMIError", "StoreError", "CLIError",
])


def __getattr__(name: str):
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'instancetype' has no attribute {name!r}") from None
    import importlib

    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value
