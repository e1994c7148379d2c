"""Certificates for the test environment, made with the `openssl` command line.

A CA, serving certificates for IP addresses / DNS names (the API server, `instancetype serve`'s
webhook and aggregated API server), client certificates (the API server's front-proxy client),
and an RSA key for service-account tokens. EC P-256 keys for certificates (instant to make); the
extensions are the ones strict verifiers expect (CA basicConstraints and keyUsage critical,
subject/authority key identifiers, extendedKeyUsage).
"""
from __future__ import annotations

import ipaddress
import subprocess
from dataclasses import dataclass
from pathlib import Path

DAYS = "3650"


class CertError(RuntimeError):
    pass


def _openssl(*args: str, cwd: Path | None = None) -> None:
    proc = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise CertError(f"openssl {' '.join(args[:2])} failed: {proc.stderr.strip()}")


def _ec_key(path: Path) -> None:
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(path))
    path.chmod(0o600)


def rsa_key(path: Path, bits: int = 2048) -> Path:
    _openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", f"rsa_keygen_bits:{bits}", "-out", str(path))
    path.chmod(0o600)
    return path


def public_key(key: Path, path: Path) -> Path:
    _openssl("pkey", "-in", str(key), "-pubout", "-out", str(path))
    return path


@dataclass(frozen=True)
class CA:
    cert: Path
    key: Path


@dataclass(frozen=True)
class Pair:
    cert: Path
    key: Path


def make_ca(directory: Path, name: str, common_name: str) -> CA:
    """A self-signed CA: `<name>.pem` and `<name>-key.pem` in `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    key, cert = directory / f"{name}-key.pem", directory / f"{name}.pem"
    _ec_key(key)
    _openssl("req", "-x509", "-new", "-key", str(key), "-out", str(cert), "-days", DAYS,
             "-subj", f"/CN={common_name}",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
             "-addext", "subjectKeyIdentifier=hash")
    return CA(cert, key)


def _san(hosts: list[str]) -> str:
    parts = []
    for host in hosts:
        try:
            ipaddress.ip_address(host)
            parts.append(f"IP:{host}")
        except ValueError:
            parts.append(f"DNS:{host}")
    return ",".join(parts)


def _sign(ca: CA, directory: Path, name: str, subject: str, extensions: list[str]) -> Pair:
    directory.mkdir(parents=True, exist_ok=True)
    key, csr, cert = directory / f"{name}-key.pem", directory / f"{name}.csr", directory / f"{name}.pem"
    ext = directory / f"{name}.ext"
    _ec_key(key)
    _openssl("req", "-new", "-key", str(key), "-out", str(csr), "-subj", subject)
    ext.write_text("\n".join(extensions + ["subjectKeyIdentifier=hash",
                                           "authorityKeyIdentifier=keyid,issuer"]) + "\n")
    _openssl("x509", "-req", "-in", str(csr), "-CA", str(ca.cert), "-CAkey", str(ca.key),
             "-CAcreateserial", "-out", str(cert), "-days", DAYS, "-extfile", str(ext))
    csr.unlink()
    ext.unlink()
    return Pair(cert, key)


def serving_cert(ca: CA, directory: Path, name: str, hosts: list[str]) -> Pair:
    """A TLS server certificate signed by `ca` for `hosts` (IP addresses and/or DNS names)."""
    if not hosts:
        raise CertError("a serving certificate needs at least one host")
    return _sign(ca, directory, name, f"/CN={hosts[0]}", [
        "basicConstraints=critical,CA:FALSE",
        "keyUsage=critical,digitalSignature,keyEncipherment",
        "extendedKeyUsage=serverAuth",
        f"subjectAltName={_san(hosts)}",
    ])


def client_cert(ca: CA, directory: Path, name: str, common_name: str,
                organizations: tuple[str, ...] = ()) -> Pair:
    """A TLS client certificate signed by `ca`: CN is the user name, O the groups."""
    subject = f"/CN={common_name}" + "".join(f"/O={o}" for o in organizations)
    return _sign(ca, directory, name, subject, [
        "basicConstraints=critical,CA:FALSE",
        "keyUsage=critical,digitalSignature,keyEncipherment",
        "extendedKeyUsage=clientAuth",
    ])


@dataclass(frozen=True)
class WebhookCerts:
    """A CA and a serving pair for a webhook / aggregated API server (`instancetype serve`)."""
    ca: Path        # --ca-bundle of `install`
    cert: Path      # --tls-cert-file of `serve`
    key: Path       # --tls-private-key-file of `serve`
    hosts: tuple[str, ...]


def make_webhook_certs(directory: Path, hosts: list[str] | tuple[str, ...]) -> WebhookCerts:
    """`ca.pem`, `cert.pem`, `key.pem` in `directory`: a fresh CA and a serving certificate for
    `hosts` (IP addresses and/or DNS names, e.g. 127.0.0.1 or a network namespace's address)."""
    ca = make_ca(directory, "ca", "instancetype-webhook-ca")
    pair = serving_cert(ca, directory, "cert", list(hosts))
    key = directory / "key.pem"
    pair.key.rename(key)
    return WebhookCerts(ca.cert, pair.cert, key, tuple(hosts))
