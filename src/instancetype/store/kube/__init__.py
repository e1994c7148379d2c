"""The store over a Kubernetes API server: `KubeStore` (every call a request), `Informer`
(list+watch of one kind into memory), `CachedStore` (reads from informers, writes to the API)."""
from .client import Gone, Unreachable, load_config, resource_of
from .store import KubeStore
from .informer import Informer, InformerSet
from .cached import ADMISSION_KINDS, CachedObjects, CachedStore

__all__ = ["KubeStore", "Informer", "InformerSet", "CachedStore", "CachedObjects", "ADMISSION_KINDS", "Gone", "Unreachable", "load_config", "resource_of"]
