"""The built-in catalogue as objects the offline commands look VMs' matchers up in.

    with_builtin_catalogue(objects) -> list[dict]

The given objects, then every cluster-scoped instancetype and preference of the built-in
catalogue (common-instancetypes, as the embedded store deploys it) that the given objects do
not define: `expand -f vm.yaml` of a VM naming `u1.medium` finds it, as on a cluster with
the catalogue deployed. An object of the files always wins over the catalogue's.
"""
from __future__ import annotations

from instancetype.api import kinds as K


def with_builtin_catalogue(objects: list[dict]) -> list[dict]:
    from instancetype import catalog

    cluster_kinds = (K.CLUSTER_INSTANCETYPE, K.CLUSTER_PREFERENCE)
    given = {(o.get("kind"), (o.get("metadata") or {}).get("name")) for o in objects
             if isinstance(o, dict) and o.get("kind") in cluster_kinds}
    extra = [o for o in catalog.instancetypes(namespaced=False) + catalog.preferences(namespaced=False)
             if (o["kind"], o["metadata"]["name"]) not in given]
    return list(objects) + extra
