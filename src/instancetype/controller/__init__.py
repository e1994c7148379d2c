"""The VM lifecycle on top of a store: admission, revisions, run strategies, the simulated node."""
from .cluster import ApplyResult, Cluster

__all__ = ["ApplyResult", "Cluster"]
