"""Front-proxy authentication and authorization with real certificates over real TLS on
127.0.0.1: only the API server's front-proxy client certificate (verified against the
requestheader CA, with an allowed name) makes the user headers count; the authorizer decides
with the request's attributes; refusals are Kubernetes' 401 and 403 Status bodies."""
from __future__ import annotations

import ssl

import pytest

from instancetype.controller import Cluster
from instancetype.controller import vm as vm_verbs
from instancetype.store.sqlite import SqliteStore
from instancetype.webhook.virtapi.app import VirtAPI
from instancetype.webhook.virtapi.auth import (
    AuthConfigError,
    RequestHeaderConfig,
    client_auth_context,
    subject_access_review,
)
from tests import builders

from . import _certs
from ._server import request, serving

P = "/apis/subresources.kubevirt.io/v1"
START = P + "/namespaces/default/virtualmachines/vm1/start"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    front_ca = _certs.ca(d, "front-proxy-ca")
    server_ca = _certs.ca(d, "server-ca")
    rogue_ca = _certs.ca(d, "rogue-ca")
    return {
        "front_ca": front_ca,
        "server_ca": server_ca,
        "server": _certs.signed(d, "server", "instancetype", server_ca, server_ip="127.0.0.1"),
        "proxy": _certs.signed(d, "proxy", "front-proxy-client", front_ca),
        "other_name": _certs.signed(d, "other-name", "someone-else", front_ca),
        "rogue": _certs.signed(d, "rogue", "front-proxy-client", rogue_ca),
    }


class Policy:
    """A local authorizer: alice may start VMs in `default`; every decision is recorded."""

    def __init__(self):
        self.seen = []

    def __call__(self, user, attrs):
        self.seen.append((user, attrs))
        allowed = user.name == "alice" and (attrs.verb, attrs.resource, attrs.subresource, attrs.namespace) == (
            "update", "virtualmachines", "start", "default")
        return allowed, "" if allowed else ("no RBAC policy matched" if user.name == "carol" else "")


@pytest.fixture
def server(tmp_path, pki):
    path = str(tmp_path / "state.db")
    with Cluster.open(path) as cluster:
        cluster.apply(builders.vm("vm1", namespace=None, runStrategy="Halted", domain={"devices": {}}),
                      namespace="default")
    config = RequestHeaderConfig.from_configmap_data({
        "requestheader-client-ca-file": pki["front_ca"][0].read_text(),
        "requestheader-allowed-names": '["front-proxy-client"]',
        "requestheader-username-headers": '["X-Remote-User"]',
        "requestheader-group-headers": '["X-Remote-Group"]',
        "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]',
    })
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(*map(str, pki["server"]))
    client_auth_context(ctx, config)
    policy = Policy()
    api = VirtAPI(lambda: SqliteStore(path), vm_verbs=vm_verbs, requestheader=config, authorize=policy)
    with serving(api.app(), ctx) as port:
        yield port, policy


def client(pki, cert=None):
    ctx = ssl.create_default_context(cafile=str(pki["server_ca"][0]))
    if cert:
        ctx.load_cert_chain(*map(str, pki[cert]))
    return ctx


UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


def test_discovery_needs_no_client_certificate(server, pki):
    port, _ = server
    assert request(port, "GET", P, tls=client(pki))[0] == 200
    assert request(port, "GET", P + "/version", tls=client(pki))[0] == 200


def test_user_headers_without_the_front_proxy_certificate_are_401(server, pki):
    port, policy = server
    as_alice = {"X-Remote-User": "alice", "X-Remote-Group": "system:authenticated"}
    assert request(port, "PUT", START, {}, headers=as_alice, tls=client(pki)) == (401, UNAUTHORIZED)
    # signed by the front-proxy CA, but not a name the API server publishes as allowed
    assert request(port, "PUT", START, {}, headers=as_alice, tls=client(pki, "other_name")) == (401, UNAUTHORIZED)
    # the right name from another CA does not even finish the handshake
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        request(port, "PUT", START, {}, headers=as_alice, tls=client(pki, "rogue"))
    # the front proxy's certificate, but no user named
    assert request(port, "PUT", START, {}, tls=client(pki, "proxy")) == (401, UNAUTHORIZED)
    assert policy.seen == []


def test_authorized_user_starts_and_others_are_403(server, pki):
    port, policy = server
    code, status = request(port, "PUT", START, {}, tls=client(pki, "proxy"),
                           headers={"X-Remote-User": "bob", "X-Remote-Group": "system:authenticated"})
    assert code == 403
    assert status == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'virtualmachines.subresources.kubevirt.io "vm1" is forbidden: User "bob" cannot update resource '
                   '"virtualmachines/start" in API group "subresources.kubevirt.io" in the namespace "default"',
        "reason": "Forbidden", "details": {"name": "vm1", "group": "subresources.kubevirt.io", "kind": "virtualmachines"},
        "code": 403}
    code, status = request(port, "PUT", START, {}, tls=client(pki, "proxy"), headers={"X-Remote-User": "carol"})
    assert code == 403 and status["message"].endswith('in the namespace "default": no RBAC policy matched')

    headers = {"X-Remote-User": "alice", "X-Remote-Group": "team-a", "X-Remote-Extra-Scopes%2Fone": "x"}
    assert request(port, "PUT", START, {}, tls=client(pki, "proxy"), headers=headers) == (202, None)
    user, attrs = policy.seen[-1]
    assert (user.name, user.groups, dict(user.extra)) == ("alice", ("team-a",), {"scopes/one": ("x",)})
    assert subject_access_review(user, attrs)["spec"]["resourceAttributes"] == {
        "namespace": "default", "verb": "update", "group": "subresources.kubevirt.io", "version": "v1",
        "resource": "virtualmachines", "subresource": "start", "name": "vm1"}
    # alice may start, not stop; expand-spec is a `get`
    assert request(port, "PUT", P + "/namespaces/default/virtualmachines/vm1/stop", {}, tls=client(pki, "proxy"),
                   headers=headers)[0] == 403
    request(port, "GET", P + "/namespaces/default/virtualmachines/vm1/expand-spec", tls=client(pki, "proxy"),
            headers=headers)
    assert (policy.seen[-1][1].verb, policy.seen[-1][1].subresource) == ("get", "expand-spec")


def test_configmap_without_the_requestheader_ca_is_refused():
    with pytest.raises(AuthConfigError, match="requestheader-client-ca-file not found"):
        RequestHeaderConfig.from_configmap_data({"client-ca-file": "x"})
    with pytest.raises(AuthConfigError, match="requestheader-allowed-names: not a JSON list"):
        RequestHeaderConfig.from_configmap_data({"requestheader-client-ca-file": "-----BEGIN CERTIFICATE-----",
                                                 "requestheader-allowed-names": "front-proxy-client"})


def test_an_api_without_authentication_is_refused_unless_insecure():
    with pytest.raises(ValueError):
        VirtAPI(lambda: None, vm_verbs=vm_verbs)
