"""Where objects live: the `Store` interface, Kubernetes-style errors, and the rules every store shares.

A store behaves like a (tiny) Kubernetes API server holding plain dicts:

* `create` fills `metadata.uid`, `resourceVersion`, `creationTimestamp` and (for custom
  resources) `generation: 1`; namespaced objects need their Namespace to exist.
* `update` / `patch` (JSON merge patch, RFC 7386) check `metadata.resourceVersion` when the
  caller gives one (optimistic concurrency); `generation` grows only when something other than
  `metadata` and `status` changes. Kinds with a status subresource keep their stored `status` on
  a main-resource write, and a `subresource="status"` write changes only `status`.
  A write that changes nothing is not a write (no new resourceVersion), as in Kubernetes.
* `delete` removes dependents through `metadata.ownerReferences` (garbage collection); deleting a
  Namespace deletes what it holds.
* `changes` / `watch` give the change feed (ADDED / MODIFIED / DELETED with resourceVersions).
  A resourceVersion is an int in the embedded store and an opaque string on a cluster
  (`ResourceVersion`): callers only hand it back (`changes(since=...)`), never compare or add.
* `transaction()` groups writes; it yields a handle with these same methods, and nests.

The rules that do not depend on the storage (selectors, merge patch, metadata on create/update)
are pure functions here so every implementation applies them identically.
"""
from __future__ import annotations

import os
import random
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from instancetype.api import names, selectors
from instancetype.api.gotext import json_type, quote
from instancetype.api.kinds import BY_KIND, DEFAULT_NAMESPACE, Resource
from instancetype.errors import NotFoundError, SelectorError, StoreError
from instancetype.jsonutil import clone

from . import finalizers
from .core_types import decode_core, rewrites
from .kubevirt import kubevirt_config

STATE_ENV = "INSTANCETYPE_STATE"

# Kinds served with a status subresource: a main-resource write keeps the stored status.
STATUS_SUBRESOURCE_KINDS = frozenset({
    "VirtualMachine", "VirtualMachineInstance", "KubeVirt", "DataVolume", "DataSource",
    "PersistentVolumeClaim", "VolumeSnapshot", "Namespace", "VirtualMachineInstanceMigration",
})
# Built-in kinds whose registry strategy never sets metadata.generation (seed 003's
# ControllerRevision has none); every custom resource gets generation 1 on create.
NO_GENERATION_KINDS = frozenset({"ControllerRevision", "Namespace", "PersistentVolumeClaim"})
# Namespaces Kubernetes refuses to delete.
UNDELETABLE_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})


# --- errors ---------------------------------------------------------------------------------------

class APIError(StoreError):
    """A refused request, as a Kubernetes Status: `.code` (HTTP), `.reason`, message = Kubernetes' text;
    `.kind` and `.name` of the object when the Status names one, else ""; `.details` the Status'
    `details` as the API server sent them (or as we answer them), else None."""

    code = 500
    reason = "InternalError"

    def __init__(self, message: str = "", *, code: int | None = None, reason: str | None = None,
                 kind: str = "", name: str = "", details: dict | None = None,
                 status_body: dict | None = None) -> None:
        super().__init__(message, reason=reason)
        if code is not None:
            self.code = code
        self.kind, self.name = kind, name
        self.details = details
        self.status_body = status_body   # the Status as an API server sent it (its own reason may be "")

    def status(self) -> dict:
        """The `metav1.Status` body Kubernetes would answer with."""
        body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": self.message, "reason": self.reason, "code": self.code}
        if self.details is not None:
            body["details"] = self.details
        return body


class NotFound(APIError, NotFoundError):
    code, reason = 404, "NotFound"


class AlreadyExists(APIError):
    code, reason = 409, "AlreadyExists"


class Conflict(APIError):
    code, reason = 409, "Conflict"


class Invalid(APIError):
    """Refused by validation: `.causes` are the field errors (`api.names.FieldError`: field, message)."""

    code, reason = 422, "Invalid"

    def __init__(self, message: str = "", *, causes: Sequence[Any] = (), kind: str = "", name: str = "",
                 details: dict | None = None, status_body: dict | None = None) -> None:
        super().__init__(message, kind=kind, name=name, details=details, status_body=status_body)
        self.causes = list(causes)


class BadRequest(APIError):
    code, reason = 400, "BadRequest"


class Forbidden(APIError):
    code, reason = 403, "Forbidden"


class StateFileError(APIError):
    """The state file cannot be used (damaged, written by a newer version, locked too long...)."""


def internal_error(err: Any) -> APIError:
    """errors.NewInternalError: `Internal error occurred: <err>`, 500, the cause in its details. The
    wire form of every internal error (ours, `errors.InternalError`, or a refusal worded as one)."""
    return APIError(f"Internal error occurred: {err}", code=500, reason="InternalError",
                    details={"causes": [{"message": str(err)}]})


def not_found(res: Resource, name: str) -> NotFound:
    return NotFound(res.not_found(name), kind=res.kind, name=name)


def already_exists(res: Resource, name: str) -> AlreadyExists:
    return AlreadyExists(f'{res.qualified} "{name}" already exists', kind=res.kind, name=name)


def conflict(res: Resource, name: str, detail: str | None = None) -> Conflict:
    detail = detail or ("the object has been modified; please apply your changes to the latest "
                        "version and try again")
    return Conflict(f'Operation cannot be fulfilled on {res.qualified} "{name}": {detail}',
                    kind=res.kind, name=name)


def invalid(res: Resource, name: str, causes: list[names.FieldError]) -> Invalid:
    """apierrors.NewInvalid: `<Kind>.<group> "<name>" is invalid: <field errors>`."""
    group_kind = f"{res.kind}.{res.group}" if res.group else res.kind
    return Invalid(f"{group_kind} {quote(name)} is invalid: {names.aggregate(causes)}", kind=res.kind, name=name,
                   causes=list(causes))


def check_names(res: Resource, meta: Mapping) -> None:
    """The API server's checks of metadata.name / generateName / namespace on a create (after the
    namespace is defaulted), before anything else looks at the object."""
    errs = names.object_meta_errors(res.kind, meta, res.namespaced)
    if errs:
        name = meta.get("name")
        raise invalid(res, name if isinstance(name, str) else "", errs)


def resource(kind: Any) -> Resource:
    """The Resource of a stored kind (CamelCase, as in an object's `kind`)."""
    if not isinstance(kind, str) or not kind:
        raise BadRequest("Object 'Kind' is missing in the request body")
    res = BY_KIND.get(kind)
    if res is None:
        raise NotFound(f'no matches for kind "{kind}"', kind=kind)
    return res


# --- where the state lives -------------------------------------------------------------------------

def default_state_path(option: str | os.PathLike | None = None) -> Path:
    """The state file: `--state PATH` (given as `option`), else `$INSTANCETYPE_STATE`, else
    `instancetype/state.db` under `$XDG_DATA_HOME` (when absolute, as the XDG spec requires)
    or `~/.local/share`."""
    if option:
        return Path(option).expanduser()
    env = os.environ.get(STATE_ENV)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "share"
    return base / "instancetype" / "state.db"


# --- the change feed -------------------------------------------------------------------------------

# The embedded store's resourceVersions are integers; Kubernetes' are opaque strings.
ResourceVersion = int | str

class Event(NamedTuple):
    """One change. `object` is the object as it is now (ADDED/MODIFIED; None when deleted since)
    or as it was when deleted (DELETED). (A NamedTuple: the change feed makes one per change.)"""

    type: str                 # ADDED | MODIFIED | DELETED
    kind: str
    namespace: str
    name: str
    uid: str
    resource_version: ResourceVersion
    object: dict | None


# --- selectors (pure, in api.selectors; a bad selector is a 400 here) ---------------------------------

def _check_selector(selector: Any, which: str) -> None:
    if selector is not None and not isinstance(selector, (str, Mapping)):
        raise BadRequest(f"{which}: must be a selector string or a mapping of strings, not {type(selector).__name__}")


def parse_label_selector(selector: Any) -> list[selectors.Requirement]:
    _check_selector(selector, "label_selector")
    try:
        return selectors.parse_label_selector(selector)
    except SelectorError as e:
        raise BadRequest(str(e)) from None


def parse_field_selector(selector: Any) -> list[selectors.FieldRequirement]:
    _check_selector(selector, "field_selector")
    try:
        return selectors.parse_field_selector(selector)
    except SelectorError as e:
        raise BadRequest(str(e)) from None


labels_match = selectors.labels_match
fields_match = selectors.fields_match


# --- JSON merge patch ------------------------------------------------------------------------------

def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: `null` deletes, objects merge recursively, anything else replaces. Pure."""
    if not isinstance(patch, dict):
        return patch if type(patch) in _JSON_SCALAR_TYPES else clone(patch)   # a scalar is its own copy
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


# --- metadata rules on create and update -----------------------------------------------------------

_GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"   # k8s.io/apimachinery/pkg/util/rand


def new_uid() -> str:
    """A random (version 4) UUID in its text form, as `str(uuid.uuid4())` makes it without the
    `UUID` object in between (a third of the time; every create makes one)."""
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40     # version 4
    b[8] = (b[8] & 0x3F) | 0x80     # RFC 4122 variant
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_STAMP: tuple[int, str] = (-1, "")     # (second, its text): the last one made


def now() -> str:
    """The current second as metav1.Time writes it (RFC 3339, UTC). Made once per second: a VM
    start stamps some seven times (creation timestamps, conditions, transitions)."""
    global _STAMP
    second = int(time.time())
    stamp = _STAMP
    if stamp[0] != second:
        stamp = _STAMP = (second, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second)))
    return stamp[1]


def check_create(obj: Any, namespace: str | None, *, json_shape: bool = True) -> Resource:
    """What the API server refuses in a create before anything else runs: a body that is not a
    JSON object (`json_shape`: also Python values JSON cannot carry), an unknown kind, metadata Go
    cannot decode, a name or namespace it does not accept."""
    if not (type(obj) is dict or isinstance(obj, Mapping)):     # is_mapping, inline: every create
        raise BadRequest("Object is not a valid Kubernetes object: expected a JSON object")
    if namespace is not None and not isinstance(namespace, str):
        raise BadRequest(f"namespace: must be a string, not {type(namespace).__name__}")
    if json_shape:
        check_json(obj)
    res = resource(obj.get("kind"))
    meta = obj.get("metadata")
    if meta is None:
        meta = {}
    if not (type(meta) is dict or isinstance(meta, Mapping)):
        raise BadRequest(f"json: cannot unmarshal {json_type(meta)} into Go struct field "
                         f"{res.kind}.metadata of type v1.ObjectMeta")
    check_metadata(meta)
    probe = dict(meta)
    if not probe.get("name") and probe.get("generateName"):
        probe["name"] = probe["generateName"] + "x" * 5     # the generated suffix is always valid
    if res.namespaced:
        probe["namespace"] = probe.get("namespace") or namespace or DEFAULT_NAMESPACE
    else:
        probe.pop("namespace", None)
    check_names(res, probe)
    return res


def prepare_create(obj: Any, namespace: str | None, *, json_checked: bool = False,
                   handed_over: bool = False) -> tuple[Resource, dict]:
    """A copy of `obj` ready to insert (uid, timestamp, generation, namespace); resourceVersion is
    the store's to set. Raises the API's texts for what Kubernetes refuses. `json_checked`: the
    caller already knows `obj` to be JSON (`Store.json_checked_by_caller`), so it is not walked.
    `handed_over`: `obj` itself (a dict) is filled in and returned, not a copy
    (`Store.create_handed_over`: the caller built it and gives it up).

    The name and namespace are checked once, by `check_create`: the values set here afterwards
    are the ones it checked (the namespace defaulted the same way; a generated name is the
    prefix and five characters of the alphabet its probe stands for)."""
    check_create(obj, namespace, json_shape=not json_checked)
    res = resource(obj.get("kind"))
    if not handed_over or type(obj) is not dict:
        obj = clone(obj)
    meta = obj.get("metadata")
    if meta is None:
        meta = obj["metadata"] = {}
    if meta.get("resourceVersion"):
        raise BadRequest("resourceVersion should not be set on objects to be created")
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = meta["generateName"] + "".join(random.choices(_GENERATE_ALPHABET, k=5))
    if res.namespaced:
        given = meta.get("namespace")
        if given and namespace and given != namespace:
            raise BadRequest("the namespace of the provided object does not match the namespace sent on the request")
        meta["namespace"] = given or namespace or DEFAULT_NAMESPACE
    else:
        meta.pop("namespace", None)
    meta["uid"] = new_uid()
    meta["creationTimestamp"] = now()
    for key in finalizers.DELETION_FIELDS:      # BeforeCreate: only a delete sets them
        meta.pop(key, None)
    if res.kind in NO_GENERATION_KINDS:
        meta.pop("generation", None)
    else:
        meta["generation"] = 1
    if obj.get("apiVersion") in (None, ""):
        obj["apiVersion"] = res.api_version
    _decode_core(res, obj)
    return res, obj


def _decode_core(res: Resource, obj: dict) -> None:
    refusal = decode_core(res, obj)
    if refusal is not None:
        raise BadRequest(refusal)


def check_metadata(meta: Mapping) -> None:
    """What Go's decoder refuses in ObjectMeta before anything else runs (names and labels are
    strings; a null is an absent field)."""
    for key in ("name", "generateName", "namespace"):
        value = meta.get(key)
        if value is not None and not isinstance(value, str):
            raise BadRequest(f"json: cannot unmarshal {json_type(value)} into Go struct field "
                             f"ObjectMeta.metadata.{key} of type string")
    for key in ("labels", "annotations"):
        value = meta.get(key)
        if value is None:
            continue
        if not (type(value) is dict or isinstance(value, Mapping)):
            raise BadRequest(f"json: cannot unmarshal {json_type(value)} into Go struct field "
                             f"ObjectMeta.metadata.{key} of type map[string]string")
        for v in value.values():
            if not isinstance(v, str):
                raise BadRequest(f"json: cannot unmarshal {json_type(v)} into Go struct field "
                                 f"ObjectMeta.metadata.{key} of type string")


_JSON_SCALARS = (str, int, float, bool, type(None))


def check_json(obj: Any) -> None:
    """An object given through the Python API must be what a JSON body can carry (string keys;
    strings, numbers, booleans, null, lists, objects): anything else is refused, naming the field.

    Every write walks its object here, so the walk tests exact types first (`dict`, `list`, the
    scalars) and pays for an ABC `isinstance` only for other types: it was the largest Python cost
    of a batch start (a third of the slowdown since issue 7's figure)."""
    stack: list[tuple[Any, str]] = [(obj, "")]
    while stack:
        value, path = stack.pop()
        t = type(value)
        if t is dict or (t is not list and isinstance(value, Mapping)):
            for k, v in value.items():
                if type(k) is not str and not isinstance(k, str):
                    raise BadRequest(f"{path or '(the object)'}: key {k!r} is not a string (JSON object keys are strings)")
                if type(v) not in _JSON_SCALAR_TYPES:
                    stack.append((v, f"{path}.{k}" if path else k))
        elif t is list or isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                if type(v) not in _JSON_SCALAR_TYPES:
                    stack.append((v, f"{path}[{i}]"))
        elif not isinstance(value, _JSON_SCALARS):
            raise BadRequest(f"{path or '(the object)'}: a {type(value).__name__} value is not JSON (strings, "
                             "numbers, booleans, null, lists and objects only)")


_JSON_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})


def is_mapping(v: Any) -> bool:
    """isinstance(v, Mapping), a dict answered without the ABC's check (a call into `abc` each)."""
    return type(v) is dict or isinstance(v, Mapping)


def _same(v: Any) -> Any:
    return v


_SYSTEM_META = ("name", "namespace", "uid", "creationTimestamp", "generation", "resourceVersion")


def _without(obj: Mapping, *keys: str) -> dict:
    return {k: v for k, v in obj.items() if k not in keys}


def prepare_update(res: Resource, stored: dict, new: Any, subresource: str | None, *,
                   json_checked: bool = False, stored_owned: bool = False, new_owned: bool = False) -> dict:
    """The object to write when `new` replaces `stored`: system metadata kept, status or the rest
    kept according to the subresource, generation bumped when the spec (anything but metadata and
    status) changed. resourceVersion is the store's to set. Pure. `json_checked`: as for
    `prepare_create`.

    The result shares nothing with `stored` or `new` (copies of their parts), except with one the
    caller says it owns and gives up (`stored_owned`: a store's own decoded row; `new_owned`: a
    dict the store made, such as a merge patch's result over its row): its parts are taken as
    they are, each write being a copy of the whole object otherwise (a VM start writes its VM
    three times). The top level and `metadata` are always new dicts; a kind whose
    `decode_core` rewrites parts in place is copied whole."""
    if rewrites(res):
        stored_owned = new_owned = False
    copy_stored = _same if stored_owned else clone
    copy_new = _same if new_owned else clone
    if not is_mapping(new) or not is_mapping(new.get("metadata", {})):
        raise BadRequest("Object is not a valid Kubernetes object: expected a JSON object with metadata")
    if not json_checked:
        check_json(new)
    if subresource not in (None, "status"):
        raise NotFound(f'the server could not find the requested resource (subresource "{subresource}")')
    if subresource == "status":
        out = copy_stored({k: v for k, v in stored.items() if k != "status"})    # the old status is replaced
        if type(out.get("metadata")) is dict:
            out["metadata"] = dict(out["metadata"])
        if "status" in new:
            out["status"] = copy_new(new["status"])
        else:
            out.pop("status", None)
        _decode_core(res, out)
        return out
    out = dict(new) if new_owned else clone(dict(new))
    meta = dict(out.get("metadata") or {})
    check_metadata(meta)
    smeta = stored.get("metadata") or {}
    for k in _SYSTEM_META:
        if k in smeta:
            meta[k] = smeta[k]
        else:
            meta.pop(k, None)
    finalizers.keep_deletion_fields(stored, meta)
    refused = finalizers.new_finalizers_error(stored, {"metadata": meta})
    if refused:
        raise invalid(res, smeta.get("name") or "", [names.FieldError("metadata.finalizers", f"Forbidden: {refused}")])
    out["metadata"] = meta
    if res.kind in STATUS_SUBRESOURCE_KINDS:
        if "status" in stored:
            out["status"] = copy_stored(stored["status"])
        else:
            out.pop("status", None)
    _decode_core(res, out)
    if "generation" in meta and _without(out, "metadata", "status") != _without(stored, "metadata", "status"):
        meta["generation"] = int(meta["generation"]) + 1
    return out


def same_object(a: Mapping, b: Mapping) -> bool:
    """Equal apart from resourceVersion (a write of `b` over `a` would change nothing)."""
    ma, mb = a.get("metadata") or {}, b.get("metadata") or {}
    return _without(a, "metadata") == _without(b, "metadata") and \
        _without(ma, "resourceVersion") == _without(mb, "resourceVersion")


def owner_uids(obj: Mapping) -> list[str]:
    refs = (obj.get("metadata") or {}).get("ownerReferences") or ()
    return [r["uid"] for r in refs if (type(r) is dict or isinstance(r, Mapping)) and isinstance(r.get("uid"), str) and r["uid"]]


# --- the interface ---------------------------------------------------------------------------------

class Store(ABC):
    """Objects by kind, namespace and name. `namespace=None` means the default namespace for a
    namespaced kind's get/create/update/patch/delete, and *all* namespaces for list/count/changes.
    Cluster-scoped kinds ignore the namespace. Returned objects are the caller's to keep.

    What a store can do beyond the interface is declared here, each capability with the answer of
    a store that lacks it (as KubeVirt's finders are small interfaces), so callers read a typed
    attribute instead of asking a store by name what it has."""

    # The state file, for a store kept in one (uploaded images live beside it); None for the others.
    path: Path | None = None
    # Opened read-only (a state file in a directory this user cannot write): nothing to deploy or sweep.
    read_only: bool = False
    # A transaction holds many writes, all or none, across objects (the embedded store): virt-api's
    # part of a request and the controller's work can then land in one. An API server has no
    # multi-object transactions (its `transaction()` is a no-op).
    transactional: bool = False
    # How many transactions and savepoints this handle has rolled back (a store with transactions
    # counts them): what a caller kept of objects read inside one may have been undone, and a
    # resourceVersion handed out in it may be handed out again, when this has changed.
    rollbacks: int = 0
    # Inside `dry_run_scope()`: every write is sent as the server's dry run (`dryRun=All`).
    dry_run: bool = False
    # Writes pass KubeVirt's admission webhooks on their way in (an API server with `serve`): the
    # controller then sends a VMI unmutated, as v1.9's does, and the VMI mutator's changes are made
    # once, by the webhook. The embedded store admits nothing: the controller's build mutates.
    calls_admission_webhooks: bool = False

    # Depth of `json_checked_by_caller()` blocks open on this handle (they nest).
    _json_checked_depth: int = 0

    @contextmanager
    def json_checked_by_caller(self) -> Iterator[None]:
        """A block whose writes carry objects the caller has already checked to be JSON, or built
        itself from checked ones: the embedded `Cluster` checks what its Python API receives
        once, and its admission and controller then write the VM, its revisions, its VMI and its
        status without `check_json` walking each again (it was 8 walks per VM start). Only the
        walk is skipped: kinds, metadata and names are still checked on every write. A write
        outside such a block (any other caller of the store) is checked whole, so nothing
        unchecked is stored. Stores that honour it read `json_checked`."""
        self._json_checked_depth += 1
        try:
            yield
        finally:
            self._json_checked_depth -= 1

    @property
    def json_checked(self) -> bool:
        """Inside `json_checked_by_caller()`: the objects written need no `check_json` walk."""
        return self._json_checked_depth > 0

    def dry_run_scope(self) -> AbstractContextManager[None] | None:
        """The server's own dry run for the writes of a block, on a store whose server offers one
        (kubectl's `--dry-run=server`); None: a store with transactions undoes one instead."""
        return None

    @abstractmethod
    def get(self, kind: str, name: str, namespace: str | None = None) -> dict: ...

    @abstractmethod
    def list(self, kind: str, namespace: str | None = None, *, label_selector: Any = None,
             field_selector: Any = None) -> Iterator[dict]:
        """Objects ordered by namespace then name, yielded as they are read (memory flat)."""

    @abstractmethod
    def count(self, kind: str, namespace: str | None = None, *, label_selector: Any = None,
              field_selector: Any = None) -> int: ...

    @abstractmethod
    def create(self, obj: Mapping, *, namespace: str | None = None) -> dict: ...

    def create_handed_over(self, obj: dict, *, namespace: str | None = None) -> dict:
        """`create` of an object the caller built and gives up: the store may fill in and return
        `obj` itself instead of a copy (its top level and `metadata`, as in the copy; nothing
        below them is changed, so a caller may still read e.g. a revision's `data` after an
        AlreadyExists). For the controller's own objects (a start creates four: two revisions,
        the start revision, the VMI; each copy was a msgpack round trip of the whole object). A
        store that copies anyway just creates."""
        return self.create(obj, namespace=namespace)

    @abstractmethod
    def update(self, obj: Mapping, *, subresource: str | None = None) -> dict:
        """Replace an object (by the kind, namespace and name in `obj`); a non-empty
        `metadata.resourceVersion` must match the stored one."""

    @abstractmethod
    def patch(self, kind: str, name: str, patch: Mapping, namespace: str | None = None, *,
              subresource: str | None = None) -> dict:
        """JSON merge patch; a `metadata.resourceVersion` in the patch is a precondition."""

    @abstractmethod
    def delete(self, kind: str, name: str, namespace: str | None = None, *, propagation: str = "Background",
               resource_version: str | None = None, uid: str | None = None,
               grace_period: int | None = None) -> dict:
        """Delete and return the object as the API server answers: one with finalizers is only
        marked (`store.finalizers`), and returned marked; dependents (ownerReferences) go too
        unless `propagation="Orphan"`. `grace_period`: DeleteOptions.gracePeriodSeconds."""

    @abstractmethod
    def changes(self, since: ResourceVersion = 0, *, kind: str | None = None,
                namespace: str | None = None, objects: bool = True) -> Iterator[Event]:
        """Events after resourceVersion `since`, oldest first (does not wait). `objects=False`:
        a caller that reads only the events' type, kind, namespace, name and uid says so, and a
        store that would have to read and decode each object for it (the embedded one) leaves
        `object` None; other stores may still fill it."""

    @abstractmethod
    def resource_version(self) -> ResourceVersion:
        """The latest resourceVersion handed out (start a watch from here)."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[Store]:
        """All writes inside are one atomic unit (nested: a savepoint); yields a handle with these methods."""

    def get_flavor(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        """The seed-002 flavor.kubevirt.io object standing for instancetype `kind`, as v1beta1, or
        None. Stores that upgrade flavor objects at admission (this one) never hold any; a cluster
        serves them as their own CRDs (`store.kube.flavor`)."""
        return None

    def find(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        """`get`, or None when there is no such object (or no name to look for)."""
        if not name:
            return None
        try:
            return self.get(kind, name, namespace)
        except NotFound:
            return None

    def uids(self, kind: str) -> set[str]:
        """The uids of every object of a kind, in all namespaces."""
        return {uid for o in self.list(kind) if isinstance(uid := (o.get("metadata") or {}).get("uid"), str)}

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open on this handle (a write now may still be rolled back)."""
        return False

    def close(self) -> None:  # noqa: B027 (a store that holds nothing open has nothing to close)
        pass

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def watch(self, kind: str | None = None, namespace: str | None = None, *, since: ResourceVersion | None = None,
              timeout: float | None = None, poll: float = 0.05) -> Iterator[Event]:
        """Events as they happen (from `since`, default now), until `timeout` seconds pass idle."""
        since = self.resource_version() if since is None else since
        idle_since = time.monotonic()
        while True:
            for ev in self.changes(since, kind=kind, namespace=namespace):
                since = ev.resource_version
                idle_since = time.monotonic()
                yield ev
            if timeout is not None and time.monotonic() - idle_since >= timeout:
                return
            time.sleep(poll)


class VMIActions:
    """virtctl's three verbs on a running VMI, by name, for both fronts over a store (the embedded
    `controller.Cluster` runs virt-api's rules in a transaction, `cli.remote.RemoteCluster` PUTs
    the subresource): each is one call of the front's `_vmi_action`."""

    def _vmi_action(self, action: str, name: str, namespace: str | None) -> dict:
        raise NotImplementedError

    def pause(self, name: str, namespace: str | None = None) -> dict:
        return self._vmi_action("pause", name, namespace)

    def unpause(self, name: str, namespace: str | None = None) -> dict:
        return self._vmi_action("unpause", name, namespace)

    def soft_reboot(self, name: str, namespace: str | None = None) -> dict:
        return self._vmi_action("softreboot", name, namespace)


class StoreReads:
    """The reads every front over a store shares: the embedded `controller.Cluster` and the
    command line's `cli.remote.RemoteCluster` (each sets `store`)."""

    store: Store
    # Over a Kubernetes API server (`RemoteCluster`), not the embedded store: some commands ask
    # the server (a table's columns, an upload's proxy) where the embedded store answers itself.
    remote: bool = False

    def config(self, store: Store | None = None) -> dict | None:
        """`spec.configuration` of the cluster's KubeVirt object (None: all defaults)."""
        return kubevirt_config(store or self.store)

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict:
        return self.store.get(kind, name, namespace)

    def list(self, kind: str, namespace: str | None = None, **selectors: Any) -> Iterator[dict]:
        return self.store.list(kind, namespace, **selectors)
