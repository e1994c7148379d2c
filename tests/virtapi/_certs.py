"""Real X.509 material made with the `openssl` CLI: CAs, a server certificate for 127.0.0.1 and
client certificates (the API server's front-proxy client, and impostors)."""
from __future__ import annotations

import subprocess
from pathlib import Path


def _run(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def ca(dir: Path, name: str) -> tuple[Path, Path]:
    crt, key = dir / f"{name}.crt", dir / f"{name}.key"
    _run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={name}",
         "-keyout", str(key), "-out", str(crt), cwd=dir)
    return crt, key


def signed(dir: Path, name: str, cn: str, ca_pair: tuple[Path, Path], *, server_ip: str | None = None
           ) -> tuple[Path, Path]:
    crt, key, csr, ext = dir / f"{name}.crt", dir / f"{name}.key", dir / f"{name}.csr", dir / f"{name}.ext"
    _run("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={cn}", "-keyout", str(key), "-out", str(csr), cwd=dir)
    usage = "serverAuth" if server_ip else "clientAuth"
    lines = [f"extendedKeyUsage={usage}", "keyUsage=digitalSignature,keyEncipherment"]
    if server_ip:
        lines.append(f"subjectAltName=IP:{server_ip}")
    ext.write_text("\n".join(lines) + "\n")
    _run("x509", "-req", "-in", str(csr), "-CA", str(ca_pair[0]), "-CAkey", str(ca_pair[1]), "-CAcreateserial",
         "-days", "2", "-extfile", str(ext), "-out", str(crt), cwd=dir)
    return crt, key
