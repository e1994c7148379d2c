"""`instancetype serve`: KubeVirt's admission webhooks for a cluster (see webhook/server.py).

    instancetype serve --kubeconfig PATH [--context NAME] --bind-address 127.0.0.1
        --secure-port PORT --tls-cert-file CERT --tls-private-key-file KEY
    instancetype serve ... --cert-dir DIR      (what `install --cert-dir DIR` made; renewed while running)

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
@click.option("--tls-cert-file", metavar="CERT", help="The serving certificate (PEM); re-read when it changes.")
@click.option("--tls-private-key-file", metavar="KEY", help="Its private key (PEM).")
@click.option("--cert-dir", metavar="DIR", type=click.Path(file_okay=False),
              help="The certificates `install --cert-dir DIR` made (instead of --tls-cert-file and "
                   "--tls-private-key-file): served, and renewed with its CA before they expire.")
@click.option("--sync-timeout", metavar="SECONDS", type=float, default=120.0, show_default=True,
              help="How long the informer caches may take to sync before `serve` gives up.")
@click.option("--read-timeout", metavar="SECONDS", type=click.FloatRange(min=0, min_open=True), default=10.0,
              show_default=True, help="How long a client may take over its TLS handshake, and over a "
                                      "request's body once its headers are in.")
@click.option("--idle-timeout", metavar="SECONDS", type=click.FloatRange(min=0, min_open=True), default=30.0,
              show_default=True, help="How long a connection may stay without a complete request's "
                                      "headers (idle between requests, or sending them slowly).")
def serve_cmd(kubeconfig: str | None, context: str | None, bind_address: str, secure_port: int,
              tls_cert_file: str | None, tls_private_key_file: str | None, cert_dir: str | None,
              sync_timeout: float, read_timeout: float, idle_timeout: float) -> None:
    """Serve KubeVirt's admission webhooks (virt-api's) for a cluster, over HTTPS."""
    import faulthandler

    from instancetype.jsonutil import allow_deep_objects
    from instancetype.store.kube import CachedStore, KubeStore
    from instancetype.webhook.server import ReloadingTLS, Timeouts, run

    if not 0 <= secure_port <= 65535:
        raise CLIError(f"--secure-port: {secure_port} is not a port (0-65535)")
    renewer = None
    if cert_dir:
        if tls_cert_file or tls_private_key_file:
            raise CLIError("--cert-dir and --tls-cert-file/--tls-private-key-file are exclusive: give one")
        renewer = _CertRenewer(cert_dir)
        tls_cert_file, tls_private_key_file = str(renewer.dir.cert), str(renewer.dir.key)
    elif not (tls_cert_file and tls_private_key_file):
        raise CLIError("--tls-cert-file and --tls-private-key-file are required (or --cert-dir DIR from "
                       "install --cert-dir)")
    faulthandler.enable()       # a long-running process: a fatal signal leaves every thread's stack in the log
    allow_deep_objects()        # the informers decode objects as deep as the API server keeps them
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

    if renewer is not None:
        renewer.start()
    try:
        run(cached, tls, host=bind_address, port=secure_port, ready=ready, subresources=subresources,
            timeouts=Timeouts(handshake=read_timeout, keepalive=idle_timeout, body=read_timeout))
    except OSError as e:
        raise CLIError(f"cannot listen on {bind_address}:{secure_port}: {e.strerror or e}") from None
    finally:
        if renewer is not None:
            renewer.stop()
        cached.close()
    if failed:
        raise CLIError(f"the informer caches did not sync in {sync_timeout:g}s: {'; '.join(failed)}")


def _subresource_api(kubeconfig: str | None, context: str | None, tls) -> object | None:
    """The aggregated API subresources.kubevirt.io over its own KubeStore, the TLS server asking
    for the API server's front-proxy certificate; None (with a warning line) when the cluster's
    front-proxy settings cannot be read: the webhooks are served, the subresources are not."""
    from instancetype.controller import pause as vmi_verbs  # ... of pause, unpause, soft reboot
    from instancetype.controller import vm as vm_verbs  # virt-api's part of start, stop, restart
    from instancetype.controller import volume_hotplug as volume_verbs  # ... of addvolume, removevolume
    from instancetype.store.kube import KubeStore
    from instancetype.webhook.virtapi.app import for_cluster
    from instancetype.webhook.virtapi.auth import client_auth_context

    actions = KubeStore(kubeconfig, context)
    try:
        api = for_cluster(actions, actions.new_client(), vm_verbs, vmi_verbs, volume_verbs)
    except Exception as e:      # no ConfigMap, no RBAC to read it, no front-proxy CA in it
        actions.close()
        print(f"warning: not serving subresources.kubevirt.io: {str(e).splitlines()[0] if str(e) else type(e).__name__}",
              file=sys.stderr, flush=True)
        return None
    assert api.requestheader is not None       # for_cluster reads it from the cluster
    client_auth_context(tls.context, api.requestheader)
    return api


class _CertRenewer:
    """virt-operator's certificate rotation for `serve --cert-dir`: sleeps until the serving
    certificate is due (a fifth of its lifetime left), signs a new one with the directory's CA
    and writes it in place; the server's certificate reload picks it up for new connections."""

    def __init__(self, cert_dir: str):
        from pathlib import Path

        from instancetype.deploy.certs import CertDir, CertificateError

        self.dir = CertDir(Path(cert_dir))
        try:
            self.dir.renew_if_due()      # expired or nearly so while serve was down: renew before serving
        except CertificateError as e:
            raise CLIError(str(e)) from None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cert-renewal", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        import datetime

        from instancetype.deploy.certs import CertificateError

        while not self._stop.is_set():
            try:
                due = self.dir.renew_at()
                wait = (due - datetime.datetime.now(datetime.UTC)).total_seconds()
                if wait > 0 and self._stop.wait(min(wait, 86400.0)):     # re-read daily: the files may be replaced
                    return
                if self.dir.renew_if_due():
                    print(f"renewed the serving certificate {self.dir.cert}", file=sys.stderr, flush=True)
            except (CertificateError, OSError) as e:
                print(f"warning: cannot renew the serving certificate: {e}", file=sys.stderr, flush=True)
                if self._stop.wait(3600.0):
                    return
