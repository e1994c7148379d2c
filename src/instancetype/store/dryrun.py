"""A dry run over a store that cannot undo a transaction (the API server's).

virt-api passes `dryRun` to the API server on the VM patch it sends (PatchOptions.DryRun); here
(`webhook.virtapi.actions.dry_run`) the controller's start/stop/restart run whole, so their
writes go to an overlay instead: reads see the base store with the overlay's writes on top, and
nothing reaches the base. The subresource's rules (already running, not running, run strategy)
are checked as in a real request; what the API server's own admission would say of the written
objects is not asked.
"""
from __future__ import annotations

import builtins
from collections.abc import Iterator, Mapping
from contextlib import nullcontext
from typing import Any

from instancetype.api.selectors import FieldRequirement, Requirement
from instancetype.jsonutil import clone
from instancetype.store.base import (
    DEFAULT_NAMESPACE,
    AlreadyExists,
    Event,
    NotFound,
    ResourceVersion,
    Store,
    already_exists,
    fields_match,
    labels_match,
    merge_patch,
    not_found,
    parse_field_selector,
    parse_label_selector,
    prepare_create,
    prepare_update,
    resource,
)

_Key = tuple[str, str, str]   # kind, namespace ("" for cluster-scoped), name


class DryRunStore(Store):
    def __init__(self, base: Store):
        self.base = base
        self._written: dict[_Key, dict | None] = {}      # None: deleted
        self._rv = 0

    def _key(self, kind: str, name: str, namespace: str | None) -> _Key:
        res = resource(kind)
        return res.kind, (namespace or DEFAULT_NAMESPACE) if res.namespaced else "", name

    def _stamp(self, obj: dict) -> dict:
        self._rv += 1
        obj.setdefault("metadata", {})["resourceVersion"] = f"dryrun-{self._rv}"
        return obj

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict:
        key = self._key(kind, name, namespace)
        if key in self._written:
            obj = self._written[key]
            if obj is None:
                raise not_found(resource(kind), name)
            return clone(obj)
        return self.base.get(kind, name, namespace)

    def get_flavor(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        return self.base.get_flavor(kind, name, namespace)

    def list(self, kind: str, namespace: str | None = None, *, label_selector: Any = None,
             field_selector: Any = None) -> Iterator[dict]:
        res = resource(kind)
        labels, fields = parse_label_selector(label_selector), parse_field_selector(field_selector)
        seen = set()
        for obj in self.base.list(kind, namespace, label_selector=label_selector, field_selector=field_selector):
            meta = obj.get("metadata") or {}
            key = (res.kind, meta.get("namespace") or "", meta.get("name") or "")
            seen.add(key)
            if key in self._written:
                written = self._written[key]
                if written is None or not self._matches(written, labels, fields):
                    continue
                obj = clone(written)
            yield obj
        for key, written in sorted(self._written.items(), key=lambda kv: kv[0]):
            if key[0] != res.kind or key in seen or written is None:
                continue
            if namespace is not None and res.namespaced and key[1] != namespace:
                continue
            if self._matches(written, labels, fields):
                yield clone(written)

    @staticmethod
    def _matches(obj: Mapping, labels: builtins.list[Requirement], fields: builtins.list[FieldRequirement]) -> bool:
        return labels_match((obj.get("metadata") or {}).get("labels"), labels) and fields_match(obj, fields)

    def count(self, kind: str, namespace: str | None = None, *, label_selector: Any = None,
              field_selector: Any = None) -> int:
        return sum(1 for _ in self.list(kind, namespace, label_selector=label_selector, field_selector=field_selector))

    def create(self, obj: Mapping, *, namespace: str | None = None) -> dict:
        res, new = prepare_create(obj, namespace)
        meta = new["metadata"]
        try:
            self.get(res.kind, meta["name"], meta.get("namespace"))
        except NotFound:
            pass
        else:
            raise already_exists(res, meta["name"])
        self._written[self._key(res.kind, meta["name"], meta.get("namespace"))] = self._stamp(new)
        return clone(new)

    def update(self, obj: Mapping, *, subresource: str | None = None) -> dict:
        meta = obj.get("metadata") or {}
        res = resource(obj.get("kind"))
        stored = self.get(res.kind, meta.get("name") or "", meta.get("namespace"))
        new = self._stamp(prepare_update(res, stored, obj, subresource))
        smeta = stored.get("metadata") or {}
        self._written[self._key(res.kind, smeta.get("name") or "", smeta.get("namespace"))] = new
        return clone(new)

    def patch(self, kind: str, name: str, patch: Mapping, namespace: str | None = None, *,
              subresource: str | None = None) -> dict:
        stored = self.get(kind, name, namespace)
        merged = merge_patch(stored, {k: v for k, v in patch.items()})
        merged.setdefault("metadata", {}).pop("resourceVersion", None)
        return self.update(merged, subresource=subresource)

    def delete(self, kind: str, name: str, namespace: str | None = None, *, propagation: str = "Background",
               resource_version: str | None = None, uid: str | None = None,
               grace_period: int | None = None) -> dict:
        obj = self.get(kind, name, namespace)
        self._written[self._key(kind, name, namespace)] = None
        return obj

    def changes(self, since: ResourceVersion = 0, *, kind: str | None = None,
                namespace: str | None = None, objects: bool = True) -> Iterator[Event]:
        return iter(())

    def resource_version(self) -> int:
        return self._rv

    def transaction(self):
        return nullcontext(self)


__all__ = ["DryRunStore", "AlreadyExists"]
