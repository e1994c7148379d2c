"""Reads from a cluster on the standard library's HTTPS client: `get` and `describe` pay for
`ssl` and `http.client` only, not for lightkube and its HTTP stack (most of a `get`'s time
on a cluster was their import).

Only the kubeconfig forms this reader knows are read this way (a bearer token or token file,
client certificates, the cluster's CA or `insecure-skip-tls-verify`; https only; no proxy, as
`KubeStore` uses none). Anything else, and every answer but 200 (errors, refusals, a server
that cannot be reached), goes back to `KubeStore` (`Fallback`), whose texts the user then sees:
one copy of the error rules.
"""
from __future__ import annotations

import base64
import os
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

PAGE = 500


class Fallback(Exception):
    """This request is for `KubeStore` to make (and to word its failure)."""


def _path(value: str, base: str) -> str:
    path = os.path.expanduser(value)
    return path if os.path.isabs(path) else os.path.join(base, path)


class KubeReader:
    def __init__(self, host: str, port: int, ctx: Any, headers: dict, namespace: str, cleanup: list[str]):
        self.host, self.port, self.ctx, self.headers = host, port, ctx, headers
        self.default_namespace = namespace
        self._cleanup = cleanup
        self._conn: Any = None

    @classmethod
    def from_kubeconfig(cls, kubeconfig: str | None, context: str | None) -> "KubeReader | None":
        """A reader for the kubeconfig's context, or None when it needs more than this reader does."""
        import ssl

        import yaml

        path = kubeconfig or (os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or "~/.kube/config")
        path = os.path.expanduser(path)
        try:
            with open(path, encoding="utf-8") as f:
                cfg = yaml.safe_load(f)
            base = os.path.dirname(os.path.abspath(path))
            ctx_name = context or cfg.get("current-context")
            ctx_entry = next(c["context"] for c in cfg["contexts"] if c["name"] == ctx_name)
            cluster = next(c["cluster"] for c in cfg["clusters"] if c["name"] == ctx_entry["cluster"])
            user = next((u.get("user") or {} for u in cfg.get("users") or () if u["name"] == ctx_entry.get("user")), {})
        except Exception:  # noqa: BLE001 - KubeStore reads it again and says what is wrong
            return None
        if set(user) - {"token", "tokenFile", "client-certificate", "client-certificate-data", "client-key",
                        "client-key-data"} or set(cluster) - {"server", "certificate-authority",
                                                              "certificate-authority-data",
                                                              "insecure-skip-tls-verify"}:
            return None      # exec plugins, auth providers, proxies...: lightkube's business
        url = urlsplit(str(cluster.get("server", "")))
        if url.scheme != "https" or not url.hostname or url.path not in ("", "/"):
            return None
        cleanup: list[str] = []
        try:
            # Verified TLS (hostname and chain) against the kubeconfig's CA; the system's roots are
            # loaded only when it names none (they cost more than the rest of a `get`).
            tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            if not (cluster.get("certificate-authority-data") or cluster.get("certificate-authority")):
                tls.load_default_certs()
            if cluster.get("insecure-skip-tls-verify"):
                tls.check_hostname = False
                tls.verify_mode = ssl.CERT_NONE
            elif cluster.get("certificate-authority-data"):
                tls.load_verify_locations(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
            elif cluster.get("certificate-authority"):
                tls.load_verify_locations(cafile=_path(cluster["certificate-authority"], base))
            headers = {"Accept": "application/json", "User-Agent": "instancetype"}
            token = user.get("token")
            if not token and user.get("tokenFile"):
                with open(_path(user["tokenFile"], base), encoding="utf-8") as f:
                    token = f.read().strip()
            if token:
                headers["Authorization"] = f"Bearer {token}"
            cert = cls._material(user, "client-certificate", base, cleanup)
            key = cls._material(user, "client-key", base, cleanup)
            if cert and key:
                tls.load_cert_chain(cert, key)
        except Exception:  # noqa: BLE001 - KubeStore says what is wrong with it
            for p in cleanup:
                os.unlink(p)
            return None
        return cls(url.hostname, url.port or 443, tls, headers, ctx_entry.get("namespace") or "default", cleanup)

    @staticmethod
    def _material(user: Mapping, field: str, base: str, cleanup: list[str]) -> str | None:
        if user.get(field + "-data"):
            fd, path = tempfile.mkstemp(prefix="instancetype-tls-")
            cleanup.append(path)
            with os.fdopen(fd, "wb") as f:
                f.write(base64.b64decode(user[field + "-data"]))
            return path
        return _path(user[field], base) if user.get(field) else None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
        for p in self._cleanup:
            try:
                os.unlink(p)
            except OSError:
                pass
        self._cleanup = []

    def _get(self, path: str) -> dict:
        import http.client

        import msgspec

        try:
            if self._conn is None:
                self._conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=10)
            self._conn.request("GET", path, headers=self.headers)
            resp = self._conn.getresponse()
            body = resp.read()
        except (OSError, http.client.HTTPException):
            raise Fallback from None
        if resp.status != 200:
            raise Fallback
        try:
            return msgspec.json.decode(body)
        except msgspec.DecodeError:
            raise Fallback from None

    @staticmethod
    def _base(res: Any, namespace: str | None) -> str:
        root = f"/apis/{res.group}/{res.version}" if res.group else f"/api/{res.version}"
        if res.namespaced and namespace:
            root += f"/namespaces/{quote(namespace, safe='')}"
        return f"{root}/{res.plural}"

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict:
        from instancetype.api.kinds import CLUSTER_BY_KIND

        res = CLUSTER_BY_KIND.get(kind)
        if res is None or not isinstance(name, str) or not name or "/" in name or name in (".", ".."):
            raise Fallback
        ns = (namespace or self.default_namespace) if res.namespaced else None
        return self._get(self._base(res, ns) + "/" + quote(name, safe=""))

    def list(self, kind: str, namespace: str | None = None, *, label_selector: Any = None,
             field_selector: Any = None) -> Iterator[dict]:
        """Every object, paged, as the API server orders them (all namespaces when `namespace` is None)."""
        from instancetype.api.kinds import CLUSTER_BY_KIND
        from instancetype.store.base import parse_field_selector, parse_label_selector

        res = CLUSTER_BY_KIND.get(kind)
        if res is None:
            raise Fallback
        params: dict[str, str] = {"limit": str(PAGE)}
        for value, parse, key in ((label_selector, parse_label_selector, "labelSelector"),
                                  (field_selector, parse_field_selector, "fieldSelector")):
            if value is None:
                continue
            parse(value)      # the same 400 as the stores give for a bad selector
            text = ",".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, Mapping) else value
            if text:
                params[key] = text
        base = self._base(res, namespace)
        pages: list[list[dict]] = []
        while True:      # the whole list first: a failure halfway falls back before anything is printed
            doc = self._get(base + "?" + urlencode(params))
            pages.append(doc.get("items") or [])
            token = (doc.get("metadata") or {}).get("continue")
            if not token:
                break
            params["continue"] = token
        return self._items(pages, res)

    @staticmethod
    def _items(pages: list[list[dict]], res: Any) -> Iterator[dict]:
        for page in pages:
            for obj in page:
                obj.setdefault("apiVersion", res.api_version)
                obj.setdefault("kind", res.kind)
                yield obj
