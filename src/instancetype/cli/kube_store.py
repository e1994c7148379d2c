"""`KubeStore` as the command line drives it: dry runs and requests to any API path."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgspec

from instancetype.store.kube.store import PAGE, KubeStore, resource_of, selector_text

# kubectl get's Accept header for a list it prints as a table (get.go `transformRequests`): the API
# server computes the rows (a CRD's additionalPrinterColumns, a built-in kind's printer), and sends
# each object's metadata only (includeObject=Metadata, the default).
TABLE_ACCEPT = ("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
                "g=meta.k8s.io,application/json")


class CommandLineKubeStore(KubeStore):
    """A KubeStore whose writes carry `dryRun=All` inside `dry_run_scope()`."""

    @contextmanager
    def dry_run_scope(self) -> Iterator[None]:
        previous, self.dry_run = self.dry_run, True
        try:
            yield
        finally:
            self.dry_run = previous

    def _send(self, method: str, res: Any, **kw: Any) -> Any:
        if self.dry_run and method in ("post", "put", "patch", "delete"):
            kw["params"] = {**(kw.get("params") or {}), "dryRun": "All"}
        return super()._send(method, res, **kw)

    def list_table(self, kind: str, namespace: str | None = None, *, label_selector: Any = None,
                   field_selector: Any = None) -> Iterator[dict]:
        """The pages of a list of `kind` as the API server prints them: `Table`s (columnDefinitions,
        rows of cells, each row's object metadata), or plain lists from a server that has no
        table for the kind. `namespace=None`: all namespaces."""
        res = resource_of(kind)
        params = {"limit": PAGE, "labelSelector": selector_text(label_selector),
                  "fieldSelector": selector_text(field_selector, fields=True)}
        ns = namespace or None if res.namespaced else None
        return self.list_pages(res, ns, params, headers={"Accept": TABLE_ACCEPT})

    def request(self, method: str, path: str, body: Any = None) -> dict:
        """A request to any path of the API server (the subresource API), Kubernetes' errors as the
        store's; a 404 without a Status is virtctl's `the server could not find the requested
        resource`."""
        params = {"dryRun": "All"} if self.dry_run and method != "GET" else None
        content = self.http.request(method, path, params=params, body=body).content
        try:
            return msgspec.json.decode(content) if content else {}
        except msgspec.DecodeError:
            return {}
