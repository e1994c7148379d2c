"""`instancetype install` and `instancetype uninstall`: virt-operator's part on a real cluster.

    instancetype install --kubeconfig PATH [--context NAME] [--namespace instancetype-system]
                         --webhook-url https://HOST:PORT --ca-bundle CA.pem
    instancetype install --print [--service NS/NAME | --webhook-url URL] [--ca-bundle CA.pem]
    instancetype uninstall --kubeconfig PATH [--context NAME] [--namespace instancetype-system]

Every error is one line and exit status 1 (cli/main.run_click prints ClickException).
"""
from __future__ import annotations

import re
import sys
from urllib.parse import urlsplit

import click

from instancetype.api.kinds import INSTALL_NAMESPACE

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


def _namespace(value: str) -> str:
    if not _DNS_LABEL.match(value or ""):
        raise click.ClickException(f'invalid --namespace "{value}": a namespace must be a DNS-1123 label '
                                   "(lowercase letters, digits and '-', at most 63 characters)")
    return value


def _service(value: str) -> tuple[str, str]:
    ns, sep, name = (value or "").partition("/")
    if not sep or not _DNS_LABEL.match(ns) or not _DNS_LABEL.match(name):
        raise click.ClickException(f'invalid --service "{value}": expected NAMESPACE/NAME, both DNS-1123 labels')
    return ns, name


def _webhook_url(value: str) -> str:
    try:
        parts = urlsplit(value)
        _ = parts.port   # urlsplit checks the port only when asked: out of range or not a number
    except ValueError as exc:
        raise click.ClickException(f'invalid --webhook-url "{value}": {exc}') from None
    if parts.scheme != "https" or not parts.hostname:
        raise click.ClickException(f'invalid --webhook-url "{value}": expected https://HOST:PORT '
                                   "(the API server calls webhooks over TLS only)")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        raise click.ClickException(f'invalid --webhook-url "{value}": give only https://HOST:PORT; '
                                   "each webhook's path is KubeVirt's")
    return value.rstrip("/")


def _ca_bundle(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            data = f.read(1 << 20)
    except OSError as exc:
        raise click.ClickException(f"cannot read --ca-bundle {path}: {exc.strerror or exc}") from None
    if b"-----BEGIN CERTIFICATE-----" not in data:
        raise click.ClickException(f"--ca-bundle {path}: not a PEM certificate bundle "
                                   "(no -----BEGIN CERTIFICATE----- block)")
    return data


def _target(webhook_url: str | None, service: str | None, ca_bundle: str | None, *, need_ca: bool):
    from instancetype.deploy.webhooks import WebhookTarget

    if webhook_url and service:
        raise click.ClickException("--webhook-url and --service are exclusive: give one")
    if not webhook_url and not service:
        raise click.ClickException("one of --webhook-url https://HOST:PORT or --service NAMESPACE/NAME is required")
    if need_ca and not ca_bundle:
        raise click.ClickException("--ca-bundle is required: the CA that signed the webhook server's certificate")
    ca = _ca_bundle(ca_bundle) if ca_bundle else b""
    if service:
        return WebhookTarget(service=_service(service), ca_bundle=ca)
    assert webhook_url is not None         # refused above when neither is given
    return WebhookTarget(url=_webhook_url(webhook_url), ca_bundle=ca)


_cluster_options = [
    click.option("--kubeconfig", metavar="PATH", help="The kubeconfig file of the cluster."),
    click.option("--context", metavar="NAME", help="The kubeconfig context (default: its current context)."),
    click.option("--namespace", "-n", default=INSTALL_NAMESPACE, show_default=True,
                 help="The namespace of the controller's ServiceAccount and RBAC."),
]


def _with_cluster_options(f):
    for opt in reversed(_cluster_options):
        f = opt(f)
    return f


@click.command("install")
@_with_cluster_options
@click.option("--webhook-url", metavar="https://HOST:PORT", help="Where the API server reaches `instancetype serve`.")
@click.option("--ca-bundle", metavar="CA.pem", help="The CA of the webhook server's certificate (PEM).")
@click.option("--service", metavar="NAMESPACE/NAME", help="Reach the webhooks through this in-cluster Service (port 443).")
@click.option("--print", "print_only", is_flag=True, help="Write the manifests as YAML to stdout; touch no cluster.")
def install_cmd(kubeconfig, context, namespace, webhook_url, ca_bundle, service, print_only):
    """Install the CRDs, webhooks, RBAC, KubeVirt object and catalogue on a cluster (virt-operator)."""
    namespace = _namespace(namespace)
    target = _target(webhook_url, service, ca_bundle, need_ca=not print_only)
    if print_only:
        import yaml

        from instancetype.deploy import manifests

        yaml.safe_dump_all(manifests(namespace, target), sys.stdout, sort_keys=False, explicit_start=True,
                           width=1 << 16)
        return 0
    from instancetype.deploy.applier import install

    with _client(kubeconfig, context) as client:
        install(client, namespace=namespace, target=target, echo=click.echo)
    return 0


@click.command("uninstall")
@_with_cluster_options
def uninstall_cmd(kubeconfig, context, namespace):
    """Remove what `install` made: webhook configurations, RBAC, catalogue, KubeVirt object, CRDs."""
    namespace = _namespace(namespace)
    from instancetype.deploy.applier import uninstall

    with _client(kubeconfig, context) as client:
        uninstall(client, namespace=namespace, echo=click.echo)
    return 0


def _client(kubeconfig: str | None, context: str | None):
    from instancetype.deploy.applier import ClusterError, connect

    if not kubeconfig:
        raise click.ClickException("--kubeconfig is required")
    try:
        return connect(kubeconfig, context)
    except ClusterError as exc:
        raise click.ClickException(str(exc)) from None
