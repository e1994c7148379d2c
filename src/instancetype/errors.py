"""The one exception tree: every error a user can cause derives from `Error`.

Each layer raises the most specific class; `str()` of an engine error is
KubeVirt's own message, character for character, so callers (the conformance
adapter, the CLI, the store's admission) can print it as KubeVirt would.

Attributes are declared by each class and passed by keyword only, so a reader
(the CLI's error printing above all) reads `e.causes`, never
`getattr(e, "causes", ...)`: an error that has no such attribute is of another
class.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class Error(Exception):
    """Base of every error a user can cause, and of `InternalError` (a bug, reported as one).

    `.reason`: a machine-readable reason where one is named (a Kubernetes Status reason, a
    condition reason such as `FailedCreate`); "" otherwise."""

    reason: str = ""

    def __init__(self, message: str = "", *, reason: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if reason is not None:
            self.reason = reason

    def __str__(self) -> str:
        return self.message


class InternalError(Error):
    """A bug in instancetype: the engine failed on well-formed input.

    Never a `DecodeError`: the input was checked (Go's decode of every argument found nothing
    wrong), so the failure is ours. `str()` says so; `.__cause__` is the original exception.
    The one internal-error type: on the wire it is Kubernetes' `InternalError` Status (500,
    `store.base.internal_error`)."""


class QuantityError(Error, ValueError):
    """A string that is not a Kubernetes resource.Quantity (apimachinery's texts)."""


class _FieldError(Error):
    """An error about one field: `.field`, its path ("" when the whole input is at fault)."""

    def __init__(self, message: str = "", *, field: str = "", reason: str | None = None) -> None:
        super().__init__(message, reason=reason)
        self.field = field


class LoadError(_FieldError):
    """A file, document or field that cannot be read (file, document index, field, reason)."""


class DecodeError(_FieldError):
    """An object that cannot be decoded into its typed shape (Go's json decode texts)."""


class ValidationError(Error):
    """An object refused by validation; `.causes` lists `Cause`s."""

    def __init__(self, message: str = "", *, causes: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.causes = list(causes)


class ConflictError(Error):
    """VM fields that conflict with the selected instancetype.

    `.fields` holds the conflicting paths in message order; `str()` is KubeVirt's message.
    """

    def __init__(self, message: str = "", *, fields: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.fields = list(fields)


class SpreadError(ConflictError):
    """The preference's spread topology cannot divide the instancetype's vCPUs (VM webhook only)."""


class RequirementsError(Error):
    """The preference's requirements are not met; `.fields` are the paths the checker names."""

    def __init__(self, message: str = "", *, fields: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.fields = list(fields)


class NotFoundError(Error):
    """A referenced object does not exist (Kubernetes' NotFound text)."""


class UnexpectedKindError(Error):
    """A matcher names a kind KubeVirt does not accept (`got unexpected kind in ...`)."""


class DefaultsError(Error):
    """KubeVirt's VMI spec defaults failed (e.g. the pod network configuration)."""


class InferError(Error):
    """Inference from volumes failed; `.ignorable` says whether the policy Ignore covers it."""

    def __init__(self, message: str = "", *, ignorable: bool = False) -> None:
        super().__init__(message)
        self.ignorable = ignorable


class VMIError(Error):
    """Building the VMI on start failed; `.stage`, `.causes`, `.requirements_error`."""

    def __init__(self, message: str = "", *, stage: str = "", causes: Sequence[Any] = (),
                 requirements_error: str | None = None) -> None:
        super().__init__(message)
        self.stage = stage
        self.causes = list(causes)
        self.requirements_error = requirements_error


class StoreError(Error):
    """The embedded store refused an operation or its file is unusable."""


class SelectorError(Error):
    """A label or field selector that does not parse (Kubernetes' wording)."""


class CLIError(Error):
    """A command-line usage error (bad flag, bad argument)."""


class CommandError(CLIError):
    """A command's failure already worded for the user as kubectl words it (`Error from server
    (NotFound): ...`, `error: ...`): printed as it is, exit 1."""


class FlagError(CLIError):
    """A flag pflag refuses (virtctl's `create`): unknown, missing value, bad value."""


class JSONPathError(CLIError):
    """A JSONPath template that does not parse or does not apply (client-go's jsonpath texts)."""


class PatchError(Error):
    """A JSON Patch that does not apply to the document (the API server's 422 of evanphx/json-patch)."""


class PatchFormatError(PatchError):
    """A body that is not a JSON Patch document (the API server's 400 when decoding it)."""


class AuthConfigError(Error):
    """The API server's authentication configuration (extension-apiserver-authentication) cannot be used."""
