"""The store over a Kubernetes API server (HTTP through client.py), beside the embedded SQLite store.

    KubeStore(kubeconfig=None, context=None, *, config=None, timeout=10.0, field_manager="instancetype")
        The `Store` interface, one request per call: get, list, count, create (dry_run=),
        update (subresource="status"), patch (JSON merge patch), json_patch (RFC 6902),
        delete (propagation=, resource_version=, uid=), changes/watch (per kind),
        resource_version(kind="Namespace") -> str, transaction() (a no-op context), ping(),
        list_at(kind, ...) -> (objects, list resourceVersion), open_watch(...) -> WatchStream,
        new_client() (a typed lightkube Client), http (client.ApiClient: a connection pool per
        thread), last_warnings (the API server's Warning headers of the last request).
        Errors: store.base's NotFound / AlreadyExists / Conflict / Invalid (.causes, .status_causes)
        / BadRequest / Forbidden / APIError(.code, .reason), `Gone` (410), and `Unreachable` (a
        StoreError: the server cannot be reached or refused the credentials, one line).
    Informer(store, kind, namespace=None, *, label_selector=None, on_add=, on_update=, on_delete=)
        list+watch of one kind into memory: start(), stop(), has_synced, wait_for_sync(timeout),
        get(name, namespace) / list(namespace) (fresh copies decoded from the compact cache, no
        request; managedFields dropped), keys(namespace), add_handler(...),
        reconnect(resource_version=None), resource_version, lists, errors, last_error.
    InformerSet(store, kinds, **informer_kw): start(), stop(), has_synced, wait_for_sync(timeout),
        failures(), informers[kind].
    CachedStore(store, informers) / CachedStore.start(store, kinds=ADMISSION_KINDS)
        A `Store` whose reads come from the informers (fresh copies, `peek` too), writes go
        to the API server; kubevirt_config(), objects() (the engine's ObjectSource), wait_for_sync.
"""
from .client import Gone, Unreachable, load_config, resource_of
from .store import KubeStore, WatchStream

# The informers and the cached store load on first use: a command line that only sends requests
# (`instancetype --kubeconfig K get ...`) does not import them.
_LAZY = {"Informer": "informer", "InformerSet": "informer", "ADMISSION_KINDS": "cached",
         "CachedObjects": "cached", "CachedStore": "cached"}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{module}", __name__), name)

__all__ = ["KubeStore", "WatchStream", "Informer", "InformerSet", "CachedStore", "CachedObjects", "ADMISSION_KINDS",
           "Gone", "Unreachable", "load_config", "resource_of"]
