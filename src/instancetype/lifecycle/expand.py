"""virt-api's expand-vm-spec over a store (pkg/virt-api/rest/expand.go): the engine's checks of
the posted VM (`engine.expand_spec`), then the expansion against the store's objects and the
cluster's KubeVirt configuration, each refusal as the API server's error. One copy for `serve`'s
subresource (`webhook.virtapi.actions.expand_posted`) and the embedded store's `expand --file`
(`controller.Cluster.expand_spec`).
"""
from __future__ import annotations

from instancetype.engine.expand_spec import InvalidVM, NamespaceMismatch, vm_to_expand
from instancetype.errors import DecodeError, Error
from instancetype.store.base import BadRequest, Store
from instancetype.store.kubevirt import kubevirt_config

UNMARSHAL_ERROR = "Can not unmarshal Request body to struct, error: {}"   # unmarshalRequestErrFmt


class InvalidVMRequest(BadRequest):
    """writeValidationErrors: `Object is not a valid VirtualMachine`, 400, one cause per schema error."""

    def __init__(self, messages: list[str]):
        super().__init__("Object is not a valid VirtualMachine")
        self.messages = messages

    def status(self) -> dict:
        return {**super().status(), "details": {"causes": [{"message": m} for m in self.messages]}}


def expand_spec(store: Store, namespace: str, vm: dict) -> dict:
    """expand-vm-spec of a decoded VM: checked (400 `Object is not a valid VirtualMachine` with the
    schema errors as the causes; 400 as the first decoding error; 400 `VM namespace must be empty
    or NS`), then expanded in NS against the store; an expansion error is a 400."""
    import instancetype
    from instancetype.store.source import StoreObjects

    try:
        vm = vm_to_expand(vm, namespace)
    except InvalidVM as e:
        raise InvalidVMRequest(e.messages) from None
    except DecodeError as e:
        raise BadRequest(UNMARSHAL_ERROR.format(e)) from None
    except NamespaceMismatch as e:
        raise BadRequest(str(e)) from None
    try:
        return instancetype.expand(vm, objects=StoreObjects(store), config=kubevirt_config(store))
    except Error as e:
        raise BadRequest(str(e)) from None
