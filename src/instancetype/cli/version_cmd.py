"""`instancetype version`: kubectl's `version` (client, and the server when a cluster is named).

    Client Version: v0.1.0
    Server Version: v1.35.4       (on a cluster: the API server's /version gitVersion)

The client's is this package's version; `--client` skips the server; `-o json|yaml` prints
kubectl's `clientVersion`/`serverVersion` document (`gitVersion` and `platform`).
"""
from __future__ import annotations

import json
import platform
import sys

import click

from .kubectl import CommandError, reports_errors

KUBEVIRT_VERSION = "v1.9.0"     # the KubeVirt release whose behaviour is the contract


def client_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return "v" + version("instancetype")
    except PackageNotFoundError:
        return "v0.0.0-unknown"


@click.command("version")
@click.option("--client", "client_only", is_flag=True, help="The client version only (no cluster asked).")
@click.option("-o", "--output", "fmt", default=None, metavar="FORMAT", help="yaml or json.")
@click.pass_context
@reports_errors
def version_cmd(ctx, client_only, fmt):
    """The client's version and, on a cluster, the API server's (kubectl version)."""
    from .cluster_options import cluster_choice

    if fmt not in (None, "yaml", "json"):
        raise CommandError("error: --output must be 'yaml' or 'json'")
    machine = platform.machine().lower().replace("x86_64", "amd64").replace("aarch64", "arm64")
    doc: dict = {"clientVersion": {"gitVersion": client_version(), "kubevirtVersion": KUBEVIRT_VERSION,
                                   "platform": f"{sys.platform}/{machine}"}}
    server = None
    if not client_only and cluster_choice(ctx) is not None:
        from .kubectl import cluster_of

        with cluster_of(ctx) as cluster:
            server = cluster.store.ping()
        doc["serverVersion"] = {"gitVersion": server}
    if fmt == "json":
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    elif fmt == "yaml":
        from .output import yaml_text

        sys.stdout.write(yaml_text(doc))
    else:
        sys.stdout.write(f"Client Version: {doc['clientVersion']['gitVersion']}\n")
        sys.stdout.write(f"KubeVirt Version: {KUBEVIRT_VERSION}\n")
        if server is not None:
            sys.stdout.write(f"Server Version: {server}\n")
    return 0
