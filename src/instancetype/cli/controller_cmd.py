"""`instancetype controller`: the VM controller against a Kubernetes API server (virt-controller).

Runs until SIGTERM or SIGINT (then it finishes the keys in hand, releases its lease and exits 0),
or until it loses the leader lease (exit 1, as Kubernetes' components end on `leaderelection
lost`, so a supervisor restarts it as a candidate).
"""
from __future__ import annotations

import logging
import signal
import sys
import threading

import click

from instancetype.api.kinds import INSTALL_NAMESPACE
from instancetype.errors import Error


def _duration(ctx, param, value):
    from instancetype.controller.leader import parse_duration

    try:
        seconds = parse_duration(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None
    if seconds <= 0:
        raise click.BadParameter("must be greater than zero")
    return seconds


@click.command("controller")
@click.option("--kubeconfig", metavar="PATH", default=None,
              help="The kubeconfig of the cluster (default: $KUBECONFIG, else ~/.kube/config).")
@click.option("--context", metavar="NAME", default=None, help="The kubeconfig context to use.")
@click.option("--leader-elect", is_flag=True, default=False,
              help="Act only while holding the coordination.k8s.io Lease (run several replicas).")
@click.option("--leader-elect-lease-duration", "lease_duration", default="15s", callback=_duration,
              metavar="DURATION", help="How long a lease lasts unrenewed; the renew deadline and retry period "
              "scale with it (client-go's 15s/10s/2s).")
@click.option("--leader-elect-resource-name", "lease_name", default="virt-controller", metavar="NAME",
              help="The Lease's name.")
@click.option("--leader-elect-resource-namespace", "lease_namespace", default=INSTALL_NAMESPACE, metavar="NAMESPACE",
              help="The Lease's namespace (where `install` lets the controller hold it).")
@click.option("--workers", type=click.IntRange(1, 256), default=16, show_default=True,
              help="Worker threads reconciling VMs (one VM is never worked on by two at once).")
@click.option("--no-catalog", is_flag=True, default=False,
              help="Do not deploy and keep the common-instancetypes catalogue.")
@click.option("-v", "--verbose", count=True, help="Log more (-v: every retry; -vv: debug).")
def controller_cmd(kubeconfig, context, leader_elect, lease_duration, lease_name, lease_namespace, workers,
                   no_catalog, verbose):
    """Run the VM controller on a cluster (KubeVirt's virt-controller): revisions, VMIs, status."""
    import faulthandler

    from instancetype.controller.kube import LeadershipLost, Options, run

    faulthandler.enable()       # a long-running process: a fatal signal leaves every thread's stack in the log
    logging.basicConfig(stream=sys.stderr, level=(logging.WARNING, logging.INFO, logging.DEBUG)[min(verbose, 2)],
                        format="%(asctime)s %(name)s: %(message)s")
    if verbose < 2:
        for noisy in ("httpx", "httpx2", "httpcore"):      # a line per request
            logging.getLogger(noisy).setLevel(logging.WARNING)
    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    opts = Options(kubeconfig=kubeconfig, context=context, workers=workers, leader_elect=leader_elect,
                   lease_duration=lease_duration, lease_name=lease_name, lease_namespace=lease_namespace,
                   catalog=not no_catalog)

    running = []

    def ready(ctl):
        running.append(ctl)
        click.echo(f"controller: running with {ctl.workers} workers" +
                   (" (leader)" if leader_elect else ""), err=True)

    try:
        run(opts, stop, on_ready=ready)
    except LeadershipLost as e:
        raise click.ClickException(str(e)) from None
    except Error as e:
        raise click.ClickException(str(e)) from None
    stats = ", ".join(f"{k} {v}" for k, v in running[0].stats.items()) if running else "never led"
    click.echo(f"controller: stopped ({stats})", err=True)
