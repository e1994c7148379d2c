"""`KubeStore` as the command line drives it: dry runs and requests to any API path."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from instancetype.store.kube.store import KubeStore


class CommandLineKubeStore(KubeStore):
    """A KubeStore whose writes carry `dryRun=All` inside `dry_run_scope()`."""

    dry_run = False

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

    def request(self, method: str, path: str, body: Any = None) -> dict:
        """A request to any path of the API server (the subresource API), Kubernetes' errors as the
        store's; a 404 without a Status is virtctl's `the server could not find the requested
        resource`."""
        import msgspec

        from instancetype.store.kube.client import api_errors

        gc = self._gc
        params = {"dryRun": "All"} if self.dry_run and method != "GET" else None
        with api_errors(self.server):
            req = gc._client.build_request(method, path, json=body, params=params)
            resp = gc.send(req)
            gc.raise_for_status(resp)
        if not resp.content:
            return {}
        try:
            return msgspec.json.decode(resp.content)
        except msgspec.DecodeError:
            return {}
