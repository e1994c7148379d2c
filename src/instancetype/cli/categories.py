"""Resource categories (`get all`): which kinds a word such as `all` stands for, as the API
server's discovery says (each resource's `categories`).

On a cluster the discovery documents are read (`/api/v1`, `/apis/GROUP/VERSION` for the groups of
the kinds this project knows); on the embedded store the answer is what `install` would make the
API server say: the categories of the CRDs `deploy/crds.py` writes (KubeVirt's: `all` on the
VirtualMachine, VMI, KubeVirt and the namespaced instancetype kinds; CDI's on DataVolume and
DataSource). kubectl expands a category only when no resource has that name (cli-runtime's
`CategoryExpander`), so `get all` lists each kind of `all` in turn.
"""
from __future__ import annotations

from functools import cache
from typing import Any

from instancetype.api import kinds


@cache
def _installed_categories() -> dict[str, tuple[str, ...]]:
    from instancetype.deploy.crds import generate_crds

    out: dict[str, tuple[str, ...]] = {}
    for crd in generate_crds():
        names = (crd.get("spec") or {}).get("names") or {}
        out[names.get("kind", "")] = tuple(names.get("categories") or ())
    return out


def _discovered_categories(store: Any) -> dict[str, tuple[str, ...]]:
    from instancetype.errors import Error

    out: dict[str, tuple[str, ...]] = {}
    for group_version in dict.fromkeys(r.api_version for r in kinds.RESOURCES):
        path = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
        try:
            doc = store.request("GET", path)
        except Error:           # a group this cluster does not serve
            continue
        for r in doc.get("resources") or ():
            if isinstance(r, dict) and "/" not in str(r.get("name", "")):
                out[str(r.get("kind", ""))] = tuple(r.get("categories") or ())
    return out


def categories(cluster: Any) -> dict[str, tuple[str, ...]]:
    """kind -> its categories, for the kinds of `kinds.RESOURCES`."""
    if getattr(cluster, "remote", False):
        return _discovered_categories(cluster.store)
    return _installed_categories()


def expand(words: list[str], cluster_opener: Any) -> list[str]:
    """`words` (one `TYPE[,TYPE...]` argument split at commas) with each category replaced by the
    plurals of its kinds; `cluster_opener()` gives the cluster (opened only when a category is
    used). A word that names a resource stays itself."""
    wanted = [w for w in words if kinds.resource_for(w) is None]
    if not wanted:
        return words
    with cluster_opener() as cluster:
        table = categories(cluster)
    out: list[str] = []
    for w in words:
        members = [r.plural for r in kinds.RESOURCES if w in table.get(r.kind, ())] if w in wanted else []
        out.extend(members or [w])
    return list(dict.fromkeys(out))
