"""What virt-api's VM and VMI subresources do, against a `Store` (pkg/virt-api/rest/lifecycle.go and
expand.go): blocking functions, run by the HTTP layer in a worker thread.

The rules are the controller's (`controller.vm.start/stop/restart`) and the engine's
(`instancetype.expand`); this module adds only what virt-api adds: the option bodies
(StartOptions, StopOptions, RestartOptions, decoded as Go decodes them), the resource the errors
name (`virtualmachine.kubevirt.io`), dry runs, and the error classes (NotFound 404, Conflict 409,
BadRequest 400, InternalError 500).
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from instancetype.api.godecode import number_literal, type_error
from instancetype.errors import DecodeError, Error
from instancetype.store.base import APIError, BadRequest, Conflict, NotFound, Store

UNMARSHAL_ERROR = "Can not unmarshal Request body to struct, error: {}"   # unmarshalRequestErrFmt
VM_GROUP, VM_RESOURCE = "kubevirt.io", "virtualmachine"                   # v1.Resource("virtualmachine")
MODIFIED = "the object has been modified"      # a resourceVersion precondition failed (client-go's RetryOnConflict)
CONFLICT_RETRIES = 5


class InternalError(APIError):
    """errors.NewInternalError: `Internal error occurred: <err>`, 500."""
    code, reason = 500, "InternalError"

    def __init__(self, err: Any):
        super().__init__(f"Internal error occurred: {err}")
        self.cause = str(err)

    def status(self) -> dict:
        return {**super().status(), "details": {"causes": [{"message": self.cause}]}}


def status_of(err: APIError, *, name: str = "", group: str = "", kind: str = "") -> dict:
    """The metav1.Status virt-api writes (writeError), with the details Kubernetes' constructors set."""
    body = err.status()
    if "details" not in body and err.code in (404, 409) and (name or kind):
        body["details"] = {k: v for k, v in (("name", name), ("group", group), ("kind", kind)) if v}
    return body


# --- option bodies -----------------------------------------------------------------------------------

# Go struct -> {json name: Go type} (kubevirt.io/api/core/v1 StartOptions, StopOptions, RestartOptions)
OPTIONS = {
    "StartOptions": {"paused": "bool", "dryRun": "[]string"},
    "StopOptions": {"gracePeriod": "int64", "dryRun": "[]string"},
    "RestartOptions": {"gracePeriodSeconds": "int64", "dryRun": "[]string"},
    "PauseOptions": {"dryRun": "[]string"},
    "UnpauseOptions": {"dryRun": "[]string"},
}
_INT64 = (-(1 << 63), (1 << 63) - 1)


def go_json(body: bytes) -> Any:
    """json.Unmarshal's syntax errors in Go's words (the first ones a client meets)."""
    text = body.decode("utf-8", errors="replace")
    if not text.strip():
        raise DecodeError("unexpected end of JSON input")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        if e.pos >= len(text.rstrip()):
            raise DecodeError("unexpected end of JSON input") from None
        raise DecodeError(_syntax_error(text, e)) from None


def _syntax_error(text: str, e: json.JSONDecodeError) -> str:
    """encoding/json's scanner texts for the common mistakes."""
    ch = text[e.pos]
    for literal in ("null", "true", "false"):
        if ch == literal[0]:
            for i, want in enumerate(literal[1:], 1):
                got = text[e.pos + i:e.pos + i + 1]
                if not got:
                    return "unexpected end of JSON input"
                if got != want:
                    return f"invalid character {_go_char(got)} in literal {literal} (expecting {_go_char(want)})"
    if e.msg.startswith("Extra data"):
        where = "after top-level value"
    elif "property name" in e.msg:
        where = "looking for beginning of object key string"
    elif "':' delimiter" in e.msg:
        where = "after object key"
    elif "',' delimiter" in e.msg:
        before = text[:e.pos].rstrip()
        where = "after array element" if _innermost(before) == "[" else "after object key:value pair"
    else:
        where = "looking for beginning of value"
    return f"invalid character {_go_char(ch)} {where}"


def _innermost(prefix: str) -> str:
    depth: list[str] = []
    in_str = esc = False
    for c in prefix:
        if in_str:
            esc, in_str = (False, in_str) if esc else (c == "\\", c != '"')
        elif c == '"':
            in_str = True
        elif c in "[{":
            depth.append(c)
        elif c in "]}" and depth:
            depth.pop()
    return depth[-1] if depth else ""


def _go_char(ch: str) -> str:
    if ch == "'":
        return "'\\''"
    if ch == '"':
        return "'\"'"
    return f"'{ch}'" if ch.isprintable() else repr(ch)


def decode_options(body: bytes, struct: str) -> dict:
    """decodeBody: YAML or JSON (k8s YAMLOrJSONDecoder) into the options struct; an empty body is
    the zero value. Go's matching: exact key, else case-insensitive; unknown keys ignored."""
    if not body.strip():
        return {}
    try:
        if body.lstrip()[:1] == b"{":
            data = go_json(body)
        else:
            import yaml

            try:
                data = yaml.safe_load(body.decode("utf-8", errors="replace"))
            except yaml.YAMLError as e:
                raise DecodeError(f"error converting YAML to JSON: yaml: {getattr(e, 'problem', e)}") from None
            if data is None:
                return {}
        return _decode_struct(data, struct)
    except DecodeError as e:
        raise BadRequest(UNMARSHAL_ERROR.format(e)) from None


def _decode_struct(data: Any, struct: str) -> dict:
    fields = OPTIONS[struct]
    if not isinstance(data, dict):
        raise type_error(_kind(data), struct, (), f"v1.{struct}")
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = key if key in fields else next((f for f in fields if f.lower() == str(key).lower()), None)
        if name is None or value is None:
            continue
        go = fields[name]
        if go == "bool":
            if not isinstance(value, bool):
                raise type_error(_kind(value), struct, (key,), "bool")
        elif go == "int64":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise type_error(_kind(value), struct, (key,), "int64")
            if isinstance(value, float) or not _INT64[0] <= value <= _INT64[1]:
                raise type_error(f"number {number_literal(value)}", struct, (key,), "int64")
        else:
            if not isinstance(value, list):
                raise type_error(_kind(value), struct, (key,), "[]string")
            for i, item in enumerate(value):
                if not isinstance(item, str):
                    raise type_error(_kind(item), struct, (key, i), "string")
        out[name] = value
    return out


def _kind(v: Any) -> str:
    return "bool" if isinstance(v, bool) else "number" if isinstance(v, (int, float)) else \
        "string" if isinstance(v, str) else "object" if isinstance(v, dict) else "array"


def dry_run_of(options: dict) -> bool:
    """metav1 PatchOptions.DryRun as the API server validates it: `All` or nothing."""
    values = options.get("dryRun") or []
    for v in values:
        if v != "All":
            raise BadRequest(f'dryRun: Unsupported value: "{v}": supported values: "All"')
    return bool(values)


# --- the store side ------------------------------------------------------------------------------------

class _Undo(Exception):
    pass


def embedded(store: Store) -> bool:
    """The embedded store: one transaction can hold the request and the controller's work."""
    from instancetype.store.sqlite import SqliteStore

    return isinstance(store, SqliteStore)


@contextmanager
def dry_run(store: Store) -> Iterator[Store]:
    """The writes run and nothing stays: the embedded store undoes its transaction (admission and
    all ran); any other store gets an overlay that keeps the writes (`dryrun.DryRunStore`)."""
    if not embedded(store):
        from .dryrun import DryRunStore

        yield DryRunStore(store)
        return
    try:
        with store.transaction() as tx:
            yield tx
            raise _Undo
    except _Undo:
        pass


def cluster_config(store: Store) -> dict | None:
    """`spec.configuration` of the KubeVirt object (None: KubeVirt's defaults, also when the
    cluster has no KubeVirt kind at all)."""
    try:
        for kv in store.list("KubeVirt"):
            return (kv.get("spec") or {}).get("configuration") or {}
    except NotFound:
        return None
    return None


def fetch_vm(store: Store, name: str, namespace: str) -> dict:
    """fetchVirtualMachine: NotFound names `virtualmachine.kubevirt.io`."""
    try:
        return store.get("VirtualMachine", name, namespace)
    except NotFound:
        raise NotFound(f'{VM_RESOURCE}.{VM_GROUP} "{name}" not found', kind=VM_RESOURCE, name=name) from None


def vm_action(store: Store, action: str, namespace: str, name: str, body: bytes) -> None:
    """PUT .../virtualmachines/NAME/{start,stop,restart}: the controller's rule in one transaction."""
    from instancetype.controller import vm as vmctl

    struct = {"start": "StartOptions", "stop": "StopOptions", "restart": "RestartOptions"}[action]
    if action != "start":       # Stop and Restart decode the body before fetching the VM
        options = decode_options(body, struct)
    if action == "restart":
        vmctl.check_restart_grace(options.get("gracePeriodSeconds"))
    vm = fetch_vm(store, name, namespace)
    if action == "start":       # Start reads the body once the VM is known not to run
        vmctl.check_not_running(store, vm)
        options = decode_options(body, struct)
    dry = dry_run_of(options)
    by_action: dict[str, dict[str, Any]] = {"start": {"paused": bool(options.get("paused"))},
                                            "stop": {"grace_period": options.get("gracePeriod")},
                                            "restart": {"grace_period": options.get("gracePeriodSeconds")}}
    kwargs = by_action[action]
    # On the embedded store the controller runs inside the request's transaction; on an API
    # server the controller watching it carries the request out (as virt-controller does
    # virt-api's patch), and the request is retried from a fresh read when another writer
    # (that controller writing the status) changed the VM between the read and the write.
    inline = embedded(store)
    for attempt in range(1 if inline else CONFLICT_RETRIES):
        config = cluster_config(store)
        try:
            with (dry_run(store) if dry else store.transaction()) as tx:
                vm = fetch_vm(tx, name, namespace)
                getattr(vmctl, action)(tx, vm, config, inline=inline, **kwargs)
            return
        except Conflict as e:
            if MODIFIED not in str(e) or attempt == CONFLICT_RETRIES - 1:
                raise


VMI_GROUP, VMI_RESOURCE = "kubevirt.io", "virtualmachineinstance"
VMI_ACTIONS = ("pause", "unpause", "softreboot")


def vmi_action(store: Store, action: str, namespace: str, name: str, body: bytes) -> None:
    """PUT .../virtualmachineinstances/NAME/{pause,unpause,softreboot} in v1.9's order: pause
    decodes PauseOptions, then reads the VMI; unpause first refuses a VM of that name with a
    snapshot in progress, then decodes; soft reboot reads no body. A dry run (the options'
    first `dryRun` is `All`; other values are ignored, unlike the VM verbs) stops after the
    checks. The rules and the simulated node's part: `controller.lifecycle`."""
    from instancetype.controller import lifecycle

    options: dict = {}
    if action == "pause":
        options = decode_options(body, "PauseOptions")
    elif action == "unpause":
        lifecycle.check_vm_not_snapshotting(store, name, namespace)
        options = decode_options(body, "UnpauseOptions")
    dry = (options.get("dryRun") or [None])[0] == "All"
    run = {"pause": lifecycle.pause, "unpause": lifecycle.unpause, "softreboot": lifecycle.soft_reboot}[action]
    # As vm_action: inline on the embedded store; on an API server the controller watching the
    # VMI updates its VM, and a VMI changed between the read and the write is read again.
    inline = embedded(store)
    for attempt in range(1 if inline else CONFLICT_RETRIES):
        config = cluster_config(store)
        try:
            with store.transaction() as tx:
                run(tx, lifecycle.fetch_vmi(tx, name, namespace), config, dry_run=dry, inline=inline)
            return
        except Conflict as e:
            if MODIFIED not in str(e) or attempt == CONFLICT_RETRIES - 1:
                raise


def expand_stored(store: Store, namespace: str, name: str) -> dict:
    """GET .../virtualmachines/NAME/expand-spec: an error of the expansion is a 500 (errors.NewInternalError)."""
    import instancetype
    from instancetype.store.source import StoreObjects

    vm = fetch_vm(store, name, namespace)
    try:
        return instancetype.expand(vm, objects=StoreObjects(store), config=cluster_config(store))
    except Error as e:
        raise InternalError(e) from None


class InvalidVM(BadRequest):
    """writeValidationErrors: `Object is not a valid VirtualMachine`, 400, one cause per schema error."""

    def __init__(self, messages: list[str]):
        super().__init__("Object is not a valid VirtualMachine")
        self.messages = messages

    def status(self) -> dict:
        return {**super().status(), "details": {"causes": [{"message": m} for m in self.messages]}}


# ObjectMeta fields json.Unmarshal reads as strings, and those it reads as map[string]string.
_META_STRINGS = ("name", "generateName", "namespace", "uid", "resourceVersion")
_META_MAPS = ("labels", "annotations")


def _go_decode_error(vm: dict) -> DecodeError | None:
    """The first error json.Unmarshal into v1.VirtualMachine meets that the schema check above
    does not see: the type meta and the metadata (Validate does not look at them)."""
    for key, value in vm.items():
        if value is None:
            continue
        if key in ("kind", "apiVersion") and not isinstance(value, str):
            return type_error(_kind(value), "VirtualMachine", (key,), "string")
        if key != "metadata":
            continue
        if not isinstance(value, dict):
            return type_error(_kind(value), "VirtualMachine", ("metadata",), "v1.ObjectMeta")
        for field, x in value.items():
            if x is None:
                continue
            if field in _META_STRINGS and not isinstance(x, str):
                return type_error(_kind(x), "VirtualMachine", ("metadata", field), "string")
            if field in _META_MAPS:
                if not isinstance(x, dict):
                    return type_error(_kind(x), "VirtualMachine", ("metadata", field), "map[string]string")
                bad = next((v for v in x.values() if v is not None and not isinstance(v, str)), None)
                if bad is not None:
                    return type_error(_kind(bad), "VirtualMachine", ("metadata", field), "string")
    return None


def expand_posted(store: Store, namespace: str, body: bytes) -> dict:
    """PUT .../namespaces/NS/expand-vm-spec (ExpandSpecRequestHandler): the body decoded as JSON
    into a map (400 `Can not unmarshal Request body to struct, error: ...`), then `expand_spec`."""
    try:
        vm = go_json(body)
    except DecodeError as e:
        raise BadRequest(UNMARSHAL_ERROR.format(e)) from None
    if vm is None:
        vm = {}             # `null` leaves Go's map nil: an empty object to the schema
    if not isinstance(vm, dict):
        raise BadRequest(UNMARSHAL_ERROR.format(type_error(_kind(vm), "", (), "map[string]interface {}")))
    return expand_spec(store, namespace, vm)


def expand_spec(store: Store, namespace: str, vm: dict) -> dict:
    """expand-vm-spec of a decoded VM (also the embedded store's `expand --file`): checked against
    the VirtualMachine OpenAPI schema (400 `Object is not a valid VirtualMachine`, the schema
    errors as the causes), decoded into the VM type (400 as the first decoding), its namespace
    empty or NS (400 `VM namespace must be empty or NS`); then expanded in NS, an expansion error
    a 400."""
    import instancetype
    from instancetype.engine.vm_validation.schema import check_vm_body
    from instancetype.store.source import StoreObjects

    causes = check_vm_body(vm)
    if causes:
        raise InvalidVM([c.message for c in causes])
    decode_error = _go_decode_error(vm)
    if decode_error is not None:
        raise BadRequest(UNMARSHAL_ERROR.format(decode_error))
    meta = vm.get("metadata") or {}
    vm_ns = meta.get("namespace")
    if vm_ns and vm_ns != namespace:
        raise BadRequest(f"VM namespace must be empty or {namespace}")
    vm = {**vm, "metadata": {**meta, "namespace": namespace}}
    try:
        return instancetype.expand(vm, objects=StoreObjects(store), config=cluster_config(store))
    except Error as e:
        raise BadRequest(str(e)) from None


__all__ = ["Conflict", "InternalError", "decode_options", "dry_run", "expand_posted", "expand_spec",
           "expand_stored", "fetch_vm", "status_of", "vm_action", "vmi_action"]
