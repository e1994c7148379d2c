"""Result records shared by admission, inference and the adapters."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Cause:
    """One Kubernetes StatusCause: `reason` is the cause type (e.g. FieldValueInvalid)."""

    reason: str
    message: str
    field: str

    def to_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "message": self.message, "field": self.field}


@dataclass
class AdmissionResult:
    """A webhook's answer: allowed, or refused with a code, reason, message and causes."""

    allowed: bool = True
    code: int | None = None
    reason: str | None = None
    message: str = ""
    causes: list[Cause] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    stage: str | None = None      # admit_vm: "mutate" or "validate", the step that decided
    vm: dict[str, Any] | None = None        # admit_vm: the VM as it would be stored (after mutation)

    @classmethod
    def refused(cls, causes: list[Cause], **kw: Any) -> AdmissionResult:
        """422 Invalid with KubeVirt's message: the first ten causes joined by ", "."""
        msgs = [c.message for c in causes]
        message = ", ".join(msgs[:10])
        if len(msgs) > 10:
            message += f", and {len(msgs) - 10} more validation errors"
        return cls(allowed=False, code=422, reason="Invalid", message=message, causes=causes, **kw)

    @classmethod
    def bad_request(cls, message: str, **kw: Any) -> AdmissionResult:
        """400 without reason or causes (decode failures, failed inference)."""
        return cls(allowed=False, code=400, message=message, **kw)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"allowed": self.allowed, "causes": [c.to_dict() for c in self.causes],
                               "message": self.message}
        if not self.allowed:
            out["code"] = self.code
            if self.reason:
                out["reason"] = self.reason
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.stage:
            out["stage"] = self.stage
        if self.vm is not None:
            out["vm"] = self.vm
        return out


@dataclass
class InferResult:
    """What inference found: the new matchers (or None) and the VM with them written in."""

    instancetype: dict[str, Any] | None
    preference: dict[str, Any] | None
    vm: dict[str, Any]
