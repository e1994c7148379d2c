"""The cluster-mode pytest plugin: markers, fixtures, failure logs (API: tests/kube/conftest.py).

Registered for the whole suite by `pytest_plugins` in tests/conftest.py, so a test anywhere
can ask for `kube`; such a test is marked `cluster` automatically, as is everything under
tests/kube/.
"""
from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kube import build
from tests.kube.certs import CertError, WebhookCerts, make_webhook_certs
from tests.kube.cluster import Cluster, ClusterError
from tests.kube.netns import DEFAULT_ADDRESS, NetnsError, network_namespace

KUBE_DIR = Path(__file__).resolve().parent
CLUSTER_FIXTURES = {"kube", "kube_netns", "namespace", "netns_namespace", "virtctl"}
_RUNNING: list[tuple[str, Cluster]] = []  # (fixture name, cluster) of the started clusters


def _uses_cluster_fixture(item: pytest.Item) -> bool:
    """A fixture of this plugin among the item's fixtures (a parametrised argument or a local
    fixture of the same name does not count)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    for name in CLUSTER_FIXTURES & set(info.names_closure):
        defs = info.name2fixturedefs.get(name) or ()
        if defs and getattr(defs[-1].func, "__module__", None) == __name__:
            return True
    return False


@pytest.hookimpl(tryfirst=True)  # before the mark plugin applies -m
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if KUBE_DIR in Path(str(item.path)).resolve().parents or _uses_cluster_fixture(item):
            item.add_marker(pytest.mark.cluster)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if not (report.failed and _RUNNING and item.get_closest_marker("cluster")):
        return
    names = set(getattr(item, "fixturenames", ()))
    # The logs of the clusters the test used (all of them when it used none directly).
    used = [c for fixture, c in _RUNNING if fixture in names] or [c for _, c in _RUNNING]
    for cluster in used:
        where = f" netns {cluster.netns.name}" if cluster.netns else ""
        report.sections.append((f"cluster{where} logs ({cluster.workdir})", cluster.log_tail()))


def _start(fixture: str, cluster: Cluster) -> Cluster:
    _RUNNING.append((fixture, cluster))
    try:
        return cluster.start()
    except (build.BuildError, ClusterError, CertError, NetnsError) as exc:
        cluster.stop()
        _RUNNING.remove((fixture, cluster))
        pytest.fail(f"the test cluster did not start: {exc}", pytrace=False)
    except BaseException:
        cluster.stop()
        _RUNNING.remove((fixture, cluster))
        raise


@pytest.fixture(scope="session")
def kube(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    cluster = _start("kube", Cluster(tmp_path_factory.mktemp("kube")))
    try:
        yield cluster
    finally:
        cluster.stop()
        _RUNNING.remove(("kube", cluster))


@pytest.fixture(scope="session")
def kube_netns(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with contextlib.ExitStack() as stack:
        try:
            ns = stack.enter_context(network_namespace(address=DEFAULT_ADDRESS))
        except NetnsError as exc:
            pytest.fail(f"the test network namespace was not made: {exc}", pytrace=False)
        cluster = _start("kube_netns", Cluster(tmp_path_factory.mktemp("kube-netns"), netns=ns))
        try:
            yield cluster
        finally:
            cluster.stop()
            _RUNNING.remove(("kube_netns", cluster))


def _fresh_namespace(cluster: Cluster) -> Iterator[str]:
    name = f"t-{secrets.token_hex(4)}"
    cluster.kubectl("create", "namespace", name)
    try:
        yield name
    finally:
        # Not waiting: the namespace controller finishes the deletion in the background.
        cluster.kubectl("delete", "namespace", name, "--wait=false", "--ignore-not-found",
                        check=False)


@pytest.fixture
def namespace(kube: Cluster) -> Iterator[str]:
    yield from _fresh_namespace(kube)


@pytest.fixture
def netns_namespace(kube_netns: Cluster) -> Iterator[str]:
    yield from _fresh_namespace(kube_netns)


@pytest.fixture(scope="session")
def virtctl() -> Path:
    try:
        return build.binary("virtctl")
    except build.BuildError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def webhook_certs(tmp_path_factory: pytest.TempPathFactory) -> WebhookCerts:
    return make_webhook_certs(tmp_path_factory.mktemp("webhook-certs"),
                              ("127.0.0.1", "localhost", DEFAULT_ADDRESS))


@pytest.fixture
def make_certs(tmp_path_factory: pytest.TempPathFactory):
    def make(*hosts: str) -> WebhookCerts:
        return make_webhook_certs(tmp_path_factory.mktemp("certs"), hosts)
    return make
