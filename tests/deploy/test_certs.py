"""`install --cert-dir`'s certificates (issue 29, item 8): the names the API server verifies,
made, checked, renewed."""
from __future__ import annotations

import datetime
import ssl
import subprocess
import sys

from instancetype.deploy.certs import CertDir, missing_names, names_of, required_names, signed_by
from instancetype.deploy.webhooks import WebhookTarget


def test_the_names_the_api_server_verifies():
    assert required_names("instancetype-system", WebhookTarget(url="https://10.0.0.5:8443")) == [
        "10.0.0.5", "virt-api.instancetype-system.svc"]
    assert required_names("x", WebhookTarget(service=("kubevirt", "virt-api"))) == ["virt-api.kubevirt.svc"]


def test_made_certificates_verify_for_every_name_and_are_renewed_before_they_expire(tmp_path):
    d = CertDir(tmp_path / "certs")
    names = ["10.0.0.5", "virt-api.instancetype-system.svc"]
    d.create(names)
    assert {p.name: oct(p.stat().st_mode & 0o777) for p in d.path.iterdir()} == {
        "ca.crt": "0o644", "ca.key": "0o600", "tls.crt": "0o644", "tls.key": "0o600"}
    pem = d.cert.read_bytes()
    assert missing_names(pem, names) == [] and signed_by(pem, d.ca.read_bytes())
    ctx = ssl.create_default_context(cafile=str(d.ca))     # Python's verifier accepts the chain
    ctx.load_cert_chain(d.cert, d.key)
    old = d.serving()
    assert not d.renew_if_due()
    later = old.not_valid_after_utc - datetime.timedelta(days=1)
    assert d.renew_if_due(now=later)
    new = d.serving()
    assert new.not_valid_after_utc > old.not_valid_after_utc
    assert names_of(new) == names_of(old) and signed_by(d.cert.read_bytes(), d.ca.read_bytes())
    ssl.create_default_context(cafile=str(d.ca)).load_cert_chain(d.cert, d.key)    # same key, new certificate
    ca_before = d.ca.read_bytes()
    d.create(names)                      # a second install keeps the CA the API server trusts
    assert d.ca.read_bytes() == ca_before


def _install_print(*args):
    return subprocess.run([sys.executable, "-m", "instancetype", "install", "--print", *args],
                          capture_output=True, text=True, timeout=120)


def test_install_checks_a_users_certificate_names_in_one_line(tmp_path):
    d = CertDir(tmp_path / "mine")
    d.create(["10.0.0.5"])               # made for the address only: the aggregated API's name is missing
    r = _install_print("--webhook-url", "https://10.0.0.5:8443", "--ca-bundle", str(d.ca),
                       "--tls-cert-file", str(d.cert))
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "not valid for virt-api.instancetype-system.svc" in r.stderr, r.stderr
    made = tmp_path / "made"
    r = _install_print("--webhook-url", "https://10.0.0.5:8443", "--cert-dir", str(made))
    assert r.returncode == 0, r.stderr
    r = _install_print("--webhook-url", "https://10.0.0.5:8443", "--ca-bundle", str(made / "ca.crt"),
                       "--cert-dir", str(made))
    assert r.returncode == 0, r.stderr


def test_serve_renews_while_running(tmp_path):
    """`serve --cert-dir`'s renewal thread: a certificate with a few seconds of life is replaced by
    one signed by the same CA, with the same names and key, before it expires."""
    from instancetype.cli.serve_cmd import _CertRenewer
    from tests.kube.controller_env import until

    d = CertDir(tmp_path / "certs")
    d.create(["10.0.0.5"], days=20 / 86400)             # 20 s: due for renewal after 16 s
    first = d.cert.read_bytes()
    renewer = _CertRenewer(str(d.path))
    assert d.cert.read_bytes() == first                  # not due yet: kept
    renewer.start()
    try:
        until(lambda: d.cert.read_bytes() != first, timeout=120, what="the renewed certificate", every=0.5)
    finally:
        renewer.stop()
    renewed = d.serving()
    assert names_of(renewed) == ["10.0.0.5"] and signed_by(d.cert.read_bytes(), d.ca.read_bytes())
    assert renewed.not_valid_after_utc > datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=10)
    ssl.create_default_context(cafile=str(d.ca)).load_cert_chain(d.cert, d.key)
