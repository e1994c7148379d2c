"""instancetype.kubevirt.io/v1beta1: typed specs with KubeVirt's exact wire names.

Every field of `VirtualMachineInstancetypeSpec` and `VirtualMachinePreferenceSpec`
(staging/src/kubevirt.io/api/instancetype/v1beta1/types.go) and of the core
kubevirt.io/v1 types they embed. Each field carries its wire name (`name=`: the
automatic camelCase is wrong for names such as `dedicatedCPUPlacement`) and its Go
type (the `go` entry of its `Meta.extra`, or the Struct's `go_type`), which
`api.godecode` reads to fail exactly as Go's decoder does and `api.crd` reads to
generate the CRD schemas.

Conventions mirror Go:
- a Go pointer field is `X | None = None` (absent and null are the same);
- a plain `omitempty` field defaults to its zero value and is omitted when zero;
- a field WITHOUT omitempty (`cpu`, `memory`, `guest`, a GPU's `name`, ...) uses
  `default_factory`, so it is always written, as Go always writes it.

Public: `decode_instancetype_spec(dict)`, `decode_preference_spec(dict)`, `to_dict(struct)`,
the Structs, and `struct_fields(cls)` (field name, wire name, type) for the schema generators.

Layout (this package re-exports every public name): `_base` (the `_S` base, Go-typed
scalar aliases, `to_dict`, `struct_fields`, `openapi_schema`), `core` (the kubevirt.io/v1 and
metav1 types the specs and objects embed), `instancetype` (the instancetype spec and object),
`preference` (the preference spec and object, accepted topology/spread values), `decode`
(`decode_instancetype_spec`, `decode_preference_spec`).
"""
from __future__ import annotations

# Re-exports: each submodule's __all__ (a type checker reads the star imports through them).
# Private helpers api.v1alpha builds its Structs with (`_S`, `_go`) are in `_base.__all__`: the
# module was one file before the split.
from instancetype.api.v1beta1 import _base, core, decode, instancetype, preference
from instancetype.api.v1beta1._base import *  # noqa: F403
from instancetype.api.v1beta1.core import *  # noqa: F403
from instancetype.api.v1beta1.decode import *  # noqa: F403
from instancetype.api.v1beta1.instancetype import *  # noqa: F403
from instancetype.api.v1beta1.preference import *  # noqa: F403

__all__: list[str] = []
__all__ += _base.__all__
__all__ += core.__all__
__all__ += instancetype.__all__
__all__ += preference.__all__
__all__ += decode.__all__
