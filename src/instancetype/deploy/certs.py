"""The certificates `serve` needs, made and renewed as virt-operator makes virt-api's
(pkg/virt-operator/resource/generate/components/secrets.go, pkg/certificates/triple).

The API server verifies `serve` by the names it dials: the `--webhook-url` host for the webhooks,
and `<service>.<namespace>.svc` for the aggregated API `subresources.kubevirt.io` (the Service
`install` registers: `virt-api.<install namespace>.svc` for a URL target, the given Service
otherwise; webhooks through a Service are dialled by that name too). `required_names` lists
them; `install --cert-dir DIR` writes a CA and a serving certificate for all of them
(`ca.crt`, `ca.key`, `tls.crt`, `tls.key`, keys 0600), and `serve --cert-dir DIR` serves
`tls.crt` and signs a new one with the CA before it expires (`renew_if_due`, when a fifth of its
lifetime is left, KubeVirt's 80% rule). The serving key is kept on renewal, so the pair on disk
is never mismatched between two writes; the CA is long-lived because the API server holds it
(`caBundle`), and only `install` writes that.

Keys are EC P-256; certificates carry what strict verifiers expect (CA basicConstraints and
keyUsage critical, key identifiers, serverAuth). Made with the `cryptography` package, already
installed as a dependency of lightkube's HTTP stack's neighbours (see pyproject).
"""
from __future__ import annotations

import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from instancetype.errors import Error

CA_DAYS = 3650                 # the CA sits in the API server's webhook configurations and APIService
SERVING_DAYS = 365
RENEW_FRACTION = 0.2           # renew when a fifth of the lifetime is left
CA_CERT, CA_KEY, TLS_CERT, TLS_KEY = "ca.crt", "ca.key", "tls.crt", "tls.key"


class CertificateError(Error):
    """A certificate directory or bundle that cannot be used."""


def service_names(namespace: str, name: str) -> list[str]:
    """The DNS names a Service is dialled by (the API server uses `<name>.<namespace>.svc`)."""
    return [f"{name}.{namespace}.svc", f"{name}.{namespace}.svc.cluster.local", f"{name}.{namespace}", name]


def required_names(namespace: str, target) -> list[str]:
    """Every name the API server verifies `serve`'s certificate for, `target` being the
    install's `WebhookTarget`: the URL's host, or the Service's names, and the aggregated API's
    Service (`virt-api` in `namespace` for a URL target)."""
    from instancetype.deploy.apiservice import SERVICE_NAME

    if target.service is not None:
        svc_ns, svc_name = target.service
        return [f"{svc_name}.{svc_ns}.svc"]
    host = urlsplit(target.url).hostname or ""
    return [host, f"{SERVICE_NAME}.{namespace}.svc"]


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _san(names: list[str]):
    from cryptography import x509

    out: list[x509.GeneralName] = []
    for n in dict.fromkeys(names):
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(n)))
        except ValueError:
            out.append(x509.DNSName(n))
    return x509.SubjectAlternativeName(out)


def _key():
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP256R1())


def _builder(subject: str, issuer, public_key, days: float, not_before: datetime.datetime | None):
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    now = not_before or _now()
    lifetime = datetime.timedelta(days=days)
    # valid a little before now (clock skew between hosts), and for the whole lifetime from now
    start = now - min(datetime.timedelta(minutes=5), lifetime / 20)
    return (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(issuer)
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(now + lifetime)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False))


def make_ca(common_name: str = "instancetype-ca", days: float = CA_DAYS):
    """(certificate, key) of a self-signed CA."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import NameOID

    key = _key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert = (_builder(common_name, name, key.public_key(), days, None)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    return cert, key


def issue(ca_cert, ca_key, names: list[str], key=None, *, days: float = SERVING_DAYS,
          not_before: datetime.datetime | None = None):
    """(certificate, key) for serving `names`, signed by the CA (a new key unless one is given)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import ExtendedKeyUsageOID

    key = key or _key()
    cert = (_builder(names[0] if names else "instancetype-serve", ca_cert.subject, key.public_key(), days, not_before)
            .add_extension(_san(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=True, key_cert_sign=False,
                                         crl_sign=False, content_commitment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return cert, key


# --- files ----------------------------------------------------------------------------------------

def _pem_cert(cert) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return cert.public_bytes(serialization.Encoding.PEM)


def _pem_key(key) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _write(path: Path, data: bytes, mode: int) -> None:
    """Atomically: a reader (serve's certificate reload) sees the old file or the new one."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@dataclass(frozen=True)
class CertDir:
    """The directory `install --cert-dir` writes and `serve --cert-dir` reads."""

    path: Path

    @property
    def ca(self) -> Path:
        return self.path / CA_CERT

    @property
    def cert(self) -> Path:
        return self.path / TLS_CERT

    @property
    def key(self) -> Path:
        return self.path / TLS_KEY

    def create(self, names: list[str], *, days: float = SERVING_DAYS) -> None:
        """A CA (kept if the directory has one: the API server may already trust it) and a
        serving certificate for `names`."""
        try:
            self.path.mkdir(parents=True, exist_ok=True, mode=0o700)
            if (self.path / CA_CERT).exists() and (self.path / CA_KEY).exists():
                ca_cert, ca_key = self._ca()
            else:
                ca_cert, ca_key = make_ca()
                _write(self.path / CA_KEY, _pem_key(ca_key), 0o600)
                _write(self.path / CA_CERT, _pem_cert(ca_cert), 0o644)
            cert, key = issue(ca_cert, ca_key, names, days=days)
            _write(self.key, _pem_key(key), 0o600)
            _write(self.cert, _pem_cert(cert), 0o644)
        except OSError as e:
            raise CertificateError(f"cannot write the certificates in {self.path}: {e.strerror or e}") from None

    def _ca(self):
        from cryptography import x509
        from cryptography.hazmat.primitives import serialization

        try:
            cert = x509.load_pem_x509_certificate((self.path / CA_CERT).read_bytes())
            key = serialization.load_pem_private_key((self.path / CA_KEY).read_bytes(), password=None)
        except (OSError, ValueError) as e:
            raise CertificateError(f"cannot read the CA in {self.path}: {getattr(e, 'strerror', None) or e}") from None
        return cert, key

    def serving(self):
        from cryptography import x509

        try:
            return x509.load_pem_x509_certificate(self.cert.read_bytes())
        except (OSError, ValueError) as e:
            raise CertificateError(f"cannot read {self.cert}: {getattr(e, 'strerror', None) or e}") from None

    def renew_at(self) -> datetime.datetime:
        """When the serving certificate is due for renewal."""
        cert = self.serving()
        start, end = cert.not_valid_before_utc, cert.not_valid_after_utc
        return end - (end - start) * RENEW_FRACTION

    def renew_if_due(self, now: datetime.datetime | None = None) -> bool:
        """Sign a new serving certificate (same names, same key, a full lifetime) once due;
        True when renewed. Needs the CA's key in the directory."""
        from cryptography.hazmat.primitives import serialization

        now = now or _now()
        cert = self.serving()
        if now < self.renew_at():
            return False
        ca_cert, ca_key = self._ca()
        try:
            key = serialization.load_pem_private_key(self.key.read_bytes(), password=None)
        except (OSError, ValueError) as e:
            raise CertificateError(f"cannot read {self.key}: {getattr(e, 'strerror', None) or e}") from None
        lifetime = cert.not_valid_after_utc - cert.not_valid_before_utc
        lifetime -= min(datetime.timedelta(minutes=5), lifetime / 21)     # the skew margin is added again
        new, _ = issue(ca_cert, ca_key, names_of(cert), key, days=lifetime / datetime.timedelta(days=1),
                       not_before=now)
        _write(self.cert, _pem_cert(new), 0o644)
        return True


# --- checks ---------------------------------------------------------------------------------------

def names_of(cert) -> list[str]:
    """The DNS names and IP addresses a certificate is valid for (its subjectAltName)."""
    from cryptography import x509

    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    return [*san.get_values_for_type(x509.DNSName), *(str(ip) for ip in san.get_values_for_type(x509.IPAddress))]


def _covers(patterns: list[str], name: str) -> bool:
    try:
        ip = ipaddress.ip_address(name)
        return any(_ip_equal(p, ip) for p in patterns)
    except ValueError:
        pass
    name = name.lower()
    for p in (p.lower() for p in patterns):
        if p == name or (p.startswith("*.") and "." in name and name.split(".", 1)[1] == p[2:]):
            return True
    return False


def _ip_equal(pattern: str, ip) -> bool:
    try:
        return ipaddress.ip_address(pattern) == ip
    except ValueError:
        return False


def missing_names(cert_pem: bytes, names: list[str]) -> list[str]:
    """The names of `names` the (first) certificate in `cert_pem` is not valid for."""
    from cryptography import x509

    try:
        cert = x509.load_pem_x509_certificates(cert_pem)[0]
    except (ValueError, IndexError) as e:
        raise CertificateError(f"not a PEM certificate: {e}") from None
    have = names_of(cert)
    return [n for n in names if not _covers(have, n)]


def signed_by(cert_pem: bytes, ca_pem: bytes) -> bool:
    """Whether the certificate was signed by one of the bundle's certificates."""
    from cryptography import x509

    try:
        cert = x509.load_pem_x509_certificates(cert_pem)[0]
        cas = x509.load_pem_x509_certificates(ca_pem)
    except (ValueError, IndexError):
        return False
    for ca in cas:
        try:
            cert.verify_directly_issued_by(ca)
            return True
        except Exception:       # InvalidSignature, or a key type that cannot have signed it
            continue
    return False
