"""The VM lifecycle on top of a store: admission, revisions, run strategies, the simulated node.

One copy of the rules (`vm.reconcile`, with `revisions`, `node`; the catalogue through
`lifecycle.catalog_sync`), two drivers:

* embedded: `cluster.Cluster` runs `reconcile` inline, inside the transaction of each write;
* on a Kubernetes API server: `kube.run` wires informers to `runner.VMController` (a work queue,
  `workqueue.WorkQueue`, and N workers running `reconcile`), under `leader.LeaderElector`.
"""
from .cluster import ApplyResult, Cluster

__all__ = ["ApplyResult", "Cluster"]
