"""Serve the subresource API alone over a KubeStore, inside the test's network namespace:

    python virtapi_server.py ADDRESS PORT CERT KEY KUBECONFIG

(what `instancetype serve` does for this API, without the admission webhooks): the front-proxy
settings from the cluster's ConfigMap, SubjectAccessReviews as the kubeconfig's identity.
"""
from __future__ import annotations

import ssl
import sys

from aiohttp import web

from instancetype.store.kube import KubeStore
from instancetype.webhook.virtapi.app import for_cluster
from instancetype.webhook.virtapi.auth import client_auth_context


def main(address: str, port: str, cert: str, key: str, kubeconfig: str) -> None:
    store = KubeStore(kubeconfig)
    api = for_cluster(store, store.new_client())
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    client_auth_context(ctx, api.requestheader)
    web.run_app(api.app(), host=address, port=int(port), ssl_context=ctx, print=lambda *_: None)


if __name__ == "__main__":
    main(*sys.argv[1:])
