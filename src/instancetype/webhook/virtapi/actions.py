"""What virt-api's VM and VMI subresources do, against a `Store` (pkg/virt-api/rest/lifecycle.go and
expand.go): blocking functions, run by the HTTP layer in a worker thread.

The rules are the controller's (`controller.vm.start/stop/restart`, given to `VirtAPI` as its
`VMVerbs` by whoever builds it, so that this driver imports no other), the engine's
(`instancetype.expand`) and `lifecycle.expand`'s; this module adds only what virt-api adds: the option bodies
(StartOptions, StopOptions, RestartOptions, decoded as Go decodes them), the resource the errors
name (`virtualmachine.kubevirt.io`), dry runs, and the error classes (NotFound 404, Conflict 409,
BadRequest 400, InternalError 500).
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from instancetype.api.godecode import number_literal, type_error
from instancetype.api.gotext import json_type
from instancetype.errors import DecodeError, Error
from instancetype.lifecycle.expand import UNMARSHAL_ERROR, expand_spec
from instancetype.store.base import APIError, BadRequest, Conflict, NotFound, Store, internal_error
from instancetype.store.kubevirt import Settings, kubevirt_config

VM_GROUP, VM_RESOURCE = "kubevirt.io", "virtualmachine"                   # v1.Resource("virtualmachine")
MODIFIED = "the object has been modified"      # a resourceVersion precondition failed (client-go's RetryOnConflict)
CONFLICT_RETRIES = 5


class VMVerbs(Protocol):
    """virt-api's start, stop and restart of a VM and their checks (`controller.vm` is one: the
    module itself is passed). `inline`: the controller's reconcile runs in the same transaction
    (the embedded store); else the controller watching the store carries the request out."""

    def check_not_running(self, store: Store, vm: dict) -> None: ...

    def check_restart_grace(self, grace: int | None) -> None: ...

    def start(self, store: Store, vm: dict, settings: Settings | None = None, *, paused: bool = False,
              inline: bool = True) -> dict: ...

    def stop(self, store: Store, vm: dict, settings: Settings | None = None, *, grace_period: int | None = None,
             inline: bool = True) -> dict: ...

    def restart(self, store: Store, vm: dict, settings: Settings | None = None, *, grace_period: int | None = None,
                inline: bool = True) -> dict: ...


class VMIVerbs(Protocol):
    """virt-api's pause, unpause and soft reboot of a VMI, their checks and the node's part
    (`controller.pause` is one: the module itself is passed)."""

    def check_vm_not_snapshotting(self, store: Store, name: str, namespace: str) -> None: ...

    def act(self, store: Store, action: str, name: str, namespace: str, settings: Settings | None = None, *,
            dry_run: bool = False, inline: bool = True) -> dict: ...


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
    "AddVolumeOptions": {"name": "string", "disk": "v1.Disk", "volumeSource": "v1.HotplugVolumeSource",
                         "dryRun": "[]string"},
    "RemoveVolumeOptions": {"name": "string", "dryRun": "[]string"},
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
        raise type_error(json_type(data), struct, (), f"v1.{struct}")
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = key if key in fields else next((f for f in fields if f.lower() == str(key).lower()), None)
        if name is None or value is None:
            continue
        go = fields[name]
        if go == "bool":
            if not isinstance(value, bool):
                raise type_error(json_type(value), struct, (key,), "bool")
        elif go == "int64":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise type_error(json_type(value), struct, (key,), "int64")
            if isinstance(value, float) or not _INT64[0] <= value <= _INT64[1]:
                raise type_error(f"number {number_literal(value)}", struct, (key,), "int64")
        elif go == "string":
            if not isinstance(value, str):
                raise type_error(json_type(value), struct, (key,), "string")
        elif go.startswith("v1."):     # a nested struct: its own fields are admission's to check
            if not isinstance(value, dict):
                raise type_error(json_type(value), struct, (key,), go)
        else:
            if not isinstance(value, list):
                raise type_error(json_type(value), struct, (key,), "[]string")
            for i, item in enumerate(value):
                if not isinstance(item, str):
                    raise type_error(json_type(item), struct, (key, i), "string")
        out[name] = value
    return out


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
    return store.transactional


@contextmanager
def dry_run(store: Store) -> Iterator[Store]:
    """The writes run and nothing stays: the embedded store undoes its transaction (admission and
    all ran); any other store gets an overlay that keeps the writes (`store.dryrun.DryRunStore`)."""
    if not embedded(store):
        from instancetype.store.dryrun import DryRunStore

        yield DryRunStore(store)
        return
    try:
        with store.transaction() as tx:
            yield tx
            raise _Undo
    except _Undo:
        pass


def fetch_vm(store: Store, name: str, namespace: str) -> dict:
    """fetchVirtualMachine: NotFound names `virtualmachine.kubevirt.io`."""
    try:
        return store.get("VirtualMachine", name, namespace)
    except NotFound:
        raise NotFound(f'{VM_RESOURCE}.{VM_GROUP} "{name}" not found', kind=VM_RESOURCE, name=name) from None


def vm_action(store: Store, action: str, namespace: str, name: str, body: bytes, verbs: VMVerbs) -> None:
    """PUT .../virtualmachines/NAME/{start,stop,restart}: the controller's rule (`verbs`) in one
    transaction."""
    struct = {"start": "StartOptions", "stop": "StopOptions", "restart": "RestartOptions"}[action]
    if action != "start":       # Stop and Restart decode the body before fetching the VM
        options = decode_options(body, struct)
    if action == "restart":
        verbs.check_restart_grace(options.get("gracePeriodSeconds"))
    vm = fetch_vm(store, name, namespace)
    if action == "start":       # Start reads the body once the VM is known not to run
        verbs.check_not_running(store, vm)
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
        settings = Settings.read(store)
        try:
            with (dry_run(store) if dry else store.transaction()) as tx:
                vm = fetch_vm(tx, name, namespace)
                verb: dict[str, Callable[..., dict]] = {
                    "start": verbs.start, "stop": verbs.stop, "restart": verbs.restart}
                verb[action](tx, vm, settings, inline=inline, **kwargs)
            return
        except Conflict as e:
            if MODIFIED not in str(e) or attempt == CONFLICT_RETRIES - 1:
                raise


VMI_GROUP, VMI_RESOURCE = "kubevirt.io", "virtualmachineinstance"
VMI_ACTIONS = ("pause", "unpause", "softreboot")


def vmi_action(store: Store, action: str, namespace: str, name: str, body: bytes, verbs: VMIVerbs) -> None:
    """PUT .../virtualmachineinstances/NAME/{pause,unpause,softreboot} in v1.9's order: pause
    decodes PauseOptions, then reads the VMI; unpause first refuses a VM of that name with a
    snapshot in progress, then decodes; soft reboot reads no body. A dry run (the options'
    first `dryRun` is `All`; other values are ignored, unlike the VM verbs) stops after the
    checks. The rules and the simulated node's part: `verbs` (controller.pause)."""
    options: dict = {}
    if action == "pause":
        options = decode_options(body, "PauseOptions")
    elif action == "unpause":
        verbs.check_vm_not_snapshotting(store, name, namespace)
        options = decode_options(body, "UnpauseOptions")
    dry = (options.get("dryRun") or [None])[0] == "All"
    # As vm_action: inline on the embedded store; on an API server the controller watching the
    # VMI updates its VM, and a VMI changed between the read and the write is read again.
    inline = embedded(store)
    for attempt in range(1 if inline else CONFLICT_RETRIES):
        settings = Settings.read(store)
        try:
            with store.transaction() as tx:
                verbs.act(tx, action, name, namespace, settings, dry_run=dry, inline=inline)
            return
        except Conflict as e:
            if MODIFIED not in str(e) or attempt == CONFLICT_RETRIES - 1:
                raise


class VolumeVerbs(Protocol):
    """virt-api's addvolume and removevolume of a VM or VMI, their checks, and the node's part
    (`controller.volume_hotplug` is one: the module itself is passed)."""

    def check_enabled(self, config: dict | None) -> None: ...

    def act(self, store: Store, action: str, kind: str, name: str, namespace: str, options: dict,
            settings: Settings | None = None, *, inline: bool = True) -> None: ...


VOLUME_ACTIONS = ("addvolume", "removevolume")


def volume_action(store: Store, action: str, kind: str, namespace: str, name: str, body: bytes,
                  verbs: VolumeVerbs) -> None:
    """PUT .../{virtualmachines,virtualmachineinstances}/NAME/{addvolume,removevolume}: the
    feature gates first, then the options decoded (an empty body is empty options), then the
    rules (`verbs`, controller.volume_hotplug) in one transaction. A dry run's writes are undone
    (the embedded store) or kept in an overlay (an API server)."""
    verbs.check_enabled(kubevirt_config(store))
    options = decode_options(body, "AddVolumeOptions" if action == "addvolume" else "RemoveVolumeOptions")
    dry = (options.get("dryRun") or [None])[0] == "All"
    inline = embedded(store)
    for attempt in range(1 if inline else CONFLICT_RETRIES):
        settings = Settings.read(store)
        try:
            with (dry_run(store) if dry else store.transaction()) as tx:
                verbs.act(tx, action, kind, name, namespace, options, settings, inline=inline)
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
        return instancetype.expand(vm, objects=StoreObjects(store), config=kubevirt_config(store))
    except Error as e:
        raise internal_error(e) from None


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
        raise BadRequest(UNMARSHAL_ERROR.format(type_error(json_type(vm), "", (), "map[string]interface {}")))
    return expand_spec(store, namespace, vm)


__all__ = ["Conflict", "internal_error", "VMIVerbs", "VMVerbs", "VolumeVerbs", "volume_action", "decode_options", "dry_run", "expand_posted",
           "expand_spec", "expand_stored", "fetch_vm", "status_of", "vm_action", "vmi_action"]
