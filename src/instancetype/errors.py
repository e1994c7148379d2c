"""The one exception tree: every error a user can cause derives from `Error`.

Each layer raises the most specific class; `str()` of an engine error is
KubeVirt's own message, character for character, so callers (the conformance
adapter, the CLI, the store's admission) can print it as KubeVirt would.
"""
from __future__ import annotations


class Error(Exception):
    """Base of every error a user can cause, and of `InternalError` (a bug, reported as one)."""

    def __init__(self, message: str = "", **attrs):
        super().__init__(message)
        self.message = message
        for k, v in attrs.items():
            setattr(self, k, v)

    def __str__(self) -> str:
        return self.message


class InternalError(Error):
    """A bug in instancetype: the engine failed on well-formed input.

    Never a `DecodeError`: the input was checked (Go's decode of every argument found nothing
    wrong), so the failure is ours. `str()` says so; `.__cause__` is the original exception.
    """


class QuantityError(Error, ValueError):
    """A string that is not a Kubernetes resource.Quantity (apimachinery's texts)."""


class LoadError(Error):
    """A file, document or field that cannot be read (file, document index, field, reason)."""


class DecodeError(Error):
    """An object that cannot be decoded into its typed shape (Go's json decode texts)."""


class ValidationError(Error):
    """An object refused by validation; `.causes` lists `Cause`s."""

    causes: list = []


class ConflictError(Error):
    """VM fields that conflict with the selected instancetype.

    `.fields` holds the conflicting paths in message order; `str()` is KubeVirt's message.
    """

    fields: list = []


class SpreadError(ConflictError):
    """The preference's spread topology cannot divide the instancetype's vCPUs (VM webhook only)."""


class RequirementsError(Error):
    """The preference's requirements are not met; `.fields` are the paths the checker names."""

    fields: list = []


class NotFoundError(Error):
    """A referenced object does not exist (Kubernetes' NotFound text)."""


class UnexpectedKindError(Error):
    """A matcher names a kind KubeVirt does not accept (`got unexpected kind in ...`)."""


class DefaultsError(Error):
    """KubeVirt's VMI spec defaults failed (e.g. the pod network configuration)."""


class InferError(Error):
    """Inference from volumes failed; `.ignorable` says whether the policy Ignore covers it."""

    ignorable: bool = False


class VMIError(Error):
    """Building the VMI on start failed; `.stage`, `.causes`, `.requirements_error`."""

    stage: str = ""
    causes: list = []
    requirements_error: str | None = None


class StoreError(Error):
    """The embedded store refused an operation or its file is unusable."""


class SelectorError(Error):
    """A label or field selector that does not parse (Kubernetes' wording)."""


class CLIError(Error):
    """A command-line usage error (bad flag, bad argument)."""
