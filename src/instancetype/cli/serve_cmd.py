"""`instancetype serve`: KubeVirt's admission webhooks for a cluster (see webhook/server.py).

    instancetype serve --kubeconfig PATH [--context NAME] --bind-address 127.0.0.1
        --secure-port PORT --tls-cert-file CERT --tls-private-key-file KEY

A cluster that cannot be reached (or refuses the credentials), a certificate that cannot be
loaded, a port that cannot be bound: one `error: ...` line, exit status 1. Once listening it
prints `serving KubeVirt's admission webhooks on https://HOST:PORT` (PORT 0 picks a free port:
the line says which), and `ready` once the informer caches are synced; it stops cleanly on
SIGTERM or SIGINT.

The same server answers virt-api's aggregated API `subresources.kubevirt.io/v1` (virtctl start,
stop, restart, expand; webhook/virtapi) that `install` registers as an APIService: it then asks
TLS clients for the API server's front-proxy certificate (the CA of the cluster's
`kube-system/extension-apiserver-authentication` ConfigMap). When that ConfigMap cannot be read,
one `warning:` line says so and only the webhooks are served.
"""
from __future__ import annotations

import sys
import threading

import click

from instancetype.errors import CLIError


@click.command("serve")
@click.option("--kubeconfig", metavar="PATH", default=None,
              help="The kubeconfig of the cluster (default: $KUBECONFIG, else ~/.kube/config).")
@click.option("--context", metavar="NAME", default=None, help="The kubeconfig context (default: its current one).")
@click.option("--bind-address", metavar="IP", default="127.0.0.1", show_default=True,
              help="The address to listen on.")
@click.option("--secure-port", metavar="PORT", type=int, default=8443, show_default=True,
              help="The HTTPS port (0: a free one).")
@click.option("--tls-cert-file", metavar="CERT", required=True, help="The serving certificate (PEM); re-read when it changes.")
@click.option("--tls-private-key-file", metavar="KEY", required=True, help="Its private key (PEM).")
@click.option("--sync-timeout", metavar="SECONDS", type=float, default=120.0, show_default=True,
              help="How long the informer caches may take to sync before `serve` gives up.")
def serve_cmd(kubeconfig: str | None, context: str | None, bind_address: str, secure_port: int,
              tls_cert_file: str, tls_private_key_file: str, sync_timeout: float) -> None:
    """Serve KubeVirt's admission webhooks (virt-api's) for a cluster, over HTTPS."""
    import faulthandler

    from instancetype.store.kube import CachedStore, KubeStore
    from instancetype.webhook.server import ReloadingTLS, run

    if not 0 <= secure_port <= 65535:
        raise CLIError(f"--secure-port: {secure_port} is not a port (0-65535)")
    faulthandler.enable()       # a long-running process: a fatal signal leaves every thread's stack in the log
    tls = ReloadingTLS(tls_cert_file, tls_private_key_file)
    store = KubeStore(kubeconfig, context)
    store.ping()
    cached = CachedStore.start(store)
    subresources = _subresource_api(kubeconfig, context, tls)
    failed: list[str] = []

    def ready(server) -> None:
        print(f"serving KubeVirt's admission webhooks on https://{server.host}:{server.port}", file=sys.stderr,
              flush=True)

        def wait() -> None:
            first = min(5.0, sync_timeout)
            if not cached.wait_for_sync(first) and first < sync_timeout:
                # Say once what is in the way (CRDs not installed, RBAC), then keep trying.
                why = "; ".join(cached.informers.failures()) or "the API server has not answered yet"
                print(f"waiting for the informer caches: {why}", file=sys.stderr, flush=True)
            if cached.wait_for_sync(max(0.0, sync_timeout - first)):
                print("ready", file=sys.stderr, flush=True)
                return
            failed.extend(cached.informers.failures() or ["the informer caches did not sync in time"])
            import os
            import signal

            os.kill(os.getpid(), signal.SIGTERM)
        threading.Thread(target=wait, daemon=True).start()

    try:
        run(cached, tls, host=bind_address, port=secure_port, ready=ready, subresources=subresources)
    except OSError as e:
        raise CLIError(f"cannot listen on {bind_address}:{secure_port}: {e.strerror or e}") from None
    finally:
        cached.close()
    if failed:
        raise CLIError(f"the informer caches did not sync in {sync_timeout:g}s: {'; '.join(failed)}")


def _subresource_api(kubeconfig: str | None, context: str | None, tls) -> object | None:
    """The aggregated API subresources.kubevirt.io over its own KubeStore, the TLS server asking
    for the API server's front-proxy certificate; None (with a warning line) when the cluster's
    front-proxy settings cannot be read: the webhooks are served, the subresources are not."""
    from instancetype.controller import pause as vmi_verbs  # ... of pause, unpause, soft reboot
    from instancetype.controller import vm as vm_verbs  # virt-api's part of start, stop, restart
    from instancetype.store.kube import KubeStore
    from instancetype.webhook.virtapi.app import for_cluster
    from instancetype.webhook.virtapi.auth import client_auth_context

    actions = KubeStore(kubeconfig, context)
    try:
        api = for_cluster(actions, actions.new_client(), vm_verbs, vmi_verbs)
    except Exception as e:      # no ConfigMap, no RBAC to read it, no front-proxy CA in it
        actions.close()
        print(f"warning: not serving subresources.kubevirt.io: {str(e).splitlines()[0] if str(e) else type(e).__name__}",
              file=sys.stderr, flush=True)
        return None
    assert api.requestheader is not None       # for_cluster reads it from the cluster
    client_auth_context(tls.context, api.requestheader)
    return api
