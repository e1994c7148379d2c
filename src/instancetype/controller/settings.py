"""The cluster's settings one reconcile works under: the KubeVirt object's `spec.configuration`
and its shared-revisions opt-in (the `instancetype.kubevirt.io/shared-revisions` annotation),
read together, once per write, by the driver that runs the reconcile (`Cluster._settings`,
`VMController.settings`) and passed down its calls as one value, as virt-controller's VM
controller reads its `clusterConfig` (issue 24 item 2: state owned and passed, not ambient).

A caller outside the controller (virt-api's verbs, `set`'s prediction) may still pass the bare
configuration it read: its opt-in is then not known, and read from the store where a pin needs it
(`revisions.capture`).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from instancetype.engine import shared_revisions as shared
from instancetype.store.base import Store
from instancetype.store.kubevirt import configuration_of, kubevirt_object


@dataclass(frozen=True)
class Settings:
    # `spec.configuration` of the KubeVirt object ({} when it has none; None: there is no object).
    config: dict | None = None
    # The shared-revisions opt-in; None: not read with `config` (read where a pin needs it).
    shared_revisions: bool | None = None

    @classmethod
    def of(cls, kubevirt: Mapping | None) -> Settings:
        """The settings of this KubeVirt object (None: there is none, all defaults)."""
        return cls(configuration_of(kubevirt), kubevirt is not None and shared.enabled(kubevirt))

    @classmethod
    def read(cls, store: Store) -> Settings:
        """The settings of the store's KubeVirt object: one read for both."""
        return cls.of(kubevirt_object(store))

    def with_config(self, config: dict | None) -> Settings:
        """The same opt-in under another configuration (a reconcile run under a changed policy)."""
        return Settings(config, self.shared_revisions)


def as_settings(value: Settings | dict | None) -> Settings:
    """A caller's settings: `Settings` as they are; a bare configuration (a caller outside the
    controller) with its opt-in not known."""
    return value if isinstance(value, Settings) else Settings(value)
