"""The cluster-mode test environment: a real kube-apiserver, etcd and kube-controller-manager.

Fixtures and hooks live in tests/kube/plugin.py, registered for the whole suite by
`pytest_plugins` in tests/conftest.py: a test in any directory may use them. Any test under
tests/kube/, and any test using one of the fixtures below, is marked `cluster`
(`pytest -m "not cluster"` skips them locally; nothing skips them in CI). The binaries are built
from the Go module proxy into ~/.cache/instancetype/kube/v1.35.4/ (or $INSTANCETYPE_KUBE_CACHE)
the first time a cluster test runs (minutes on a clean machine), then reused; a failed build is a
test failure with the build log's tail. When a cluster test fails, its report carries the tail of
each component's log.

Fixtures
--------
kube (session, one per xdist worker) -> tests.kube.cluster.Cluster, started on 127.0.0.1:
    kube.server             "https://127.0.0.1:PORT"
    kube.kubeconfig         Path: admin kubeconfig (CA embedded, bearer token); works with
                            kubectl and with lightkube.KubeConfig.from_file(...)
    kube.inner_server, kube.inner_kubeconfig   same as server/kubeconfig here (see kube_netns)
    kube.ca                 Path: CA of the API server's serving certificate
    kube.tokens             {user: token}: "admin" (system:masters) and USERS
                            ("alice", "bob", "carol": authenticated, no RBAC permission at all)
    kube.kubectl(*args, input=None, check=True, user=None, timeout=120)
                            -> CompletedProcess (text; bytes if input is bytes); the real kubectl
                            as `user` (default admin); raises KubectlError (an AssertionError) on
                            a non-zero exit when check=True
    kube.virtctl(*args, ...)  the same with the real virtctl v1.7.0 (built on first use)
    kube.kubeconfig_for(user) -> Path;  kube.write_kubeconfig(user, path=None, server=None)
    kube.env(user="admin")  os.environ + KUBECONFIG (+ KUBECACHEDIR) for a subprocess of yours,
                            e.g. subprocess.run([sys.executable, "-m", "instancetype", ...], env=...)
    kube.popen(argv, **kw) / kube.run(argv, **kw)   a process where the API server runs
                            (inside the network namespace for kube_netns); you stop what you popen
    kube.restart_apiserver()  stop + start kube-apiserver on the same port and etcd (data kept;
                            about 2 s to stop, 3-5 s to be ready again)
    kube.stop_apiserver() / kube.start_apiserver()  the same in two steps (fault tests); while
                            it is down kubectl says "The connection to the server ... was refused"
    kube.kill_apiserver()   kill -9 kube-apiserver (connections reset, no graceful shutdown);
                            `start_apiserver` brings it back
    kube.front_proxy_ca (.cert/.key), kube.front_proxy_client (.cert/.key): the aggregator's
                            requestheader CA (also in kube-system/extension-apiserver-authentication)
    kube.sa_key, kube.sa_pub  service-account signing key pair;  kube.workdir, kube.log_tail()
    kube.start_seconds      how long start() took
  API server flags: --authorization-mode=RBAC, --token-auth-file, --client-ca-file=kube.ca,
  --service-cluster-ip-range=10.0.0.0/24, requestheader/front-proxy flags,
  --enable-aggregator-routing=true, default admission plugins.
  kube-controller-manager: garbage-collector-controller, namespace-controller,
  serviceaccount-controller (ownerReference cascading, namespace deletion, `default` SAs).
  Notes: the namespace controller cannot finish deleting a namespace while an APIService is
  registered but unavailable (discovery fails): delete the APIService before stopping `serve`.
  The garbage collector picks up new resource types (CRDs installed by a test) at its next
  discovery sync, up to 30 s later: cascading to a CRD kind's dependents can take that long
  the first time.

kube_netns (session, lazy: only started when a test asks) -> Cluster, the same inside a network
    namespace made for it (tests/kube/netns.py): `lo` up plus kube_netns.netns.address
    ("10.123.0.1/32"), no other interface. The API server listens on 10.123.0.1:6443
    (kube_netns.inner_server / inner_kubeconfig: for processes started with kube_netns.popen/run,
    e.g. `instancetype serve --bind-address 10.123.0.1`, whose address an EndpointSlice may
    name). The test process reaches it through a forwarded host port 127.0.0.1:N
    (kube_netns.server / kubeconfig / kubectl / virtctl / lightkube work unchanged).
    kube_netns.netns: NetNS with .name, .address, .argv(argv), .run, .popen,
    .create_connection((host, port)) (a socket inside), .forward((host, port)) (context manager
    -> ("127.0.0.1", port) on the host).
    An APIService's backend (tests/kube/echo_apiserver.py is a working example, see
    test_env.py) needs: a Service without selector + an EndpointSlice at netns.address, a
    serving certificate valid for netns.address AND the DNS name "<service>.<namespace>.svc"
    (the aggregator checks that name), client certificates verified against
    kube_netns.front_proxy_ca.cert (the caller is in the X-Remote-User/X-Remote-Group headers).
    kube-apiserver itself refuses an aggregated request the caller's RBAC does not allow
    (403 before the backend sees it).

namespace (function) -> str: a fresh namespace "t-xxxxxxxx" on `kube`, deleted (without waiting)
    after the test.  netns_namespace: the same on `kube_netns`.
virtctl (session) -> Path of the built virtctl binary.
webhook_certs (session) -> tests.kube.certs.WebhookCerts(ca, cert, key, hosts): a CA and a
    serving pair for 127.0.0.1, localhost and 10.123.0.1 (for `serve` and `install --ca-bundle`).
make_certs (function) -> make(*hosts) -> WebhookCerts for any IPs/DNS names.

any_cluster (function, parametrised "embedded" / "kube"; tests/kube/both_stores.py): one test
    body on both stores: controller.Cluster on a state file, or the same methods on kube_netns
    (install, serve, the VM controller in a thread; a fresh namespace standing for `default`)
    whose writes return once the controller settled. `@pytest.mark.embedded_only(reason)` skips
    the kube variant. With the command line: both_stores.cli_args(c) and both_stores.settled(c).

Helpers: tests.waits.eventually(check, seconds=60, interval=0.2, what=...) polls check()
until truthy (bounded; AssertionError after); tests.kube.cluster's USERS, ADMIN; KubectlError.
tests.kube.build.binary(name) -> Path for "etcd", "kube-apiserver", "kube-controller-manager",
"virtctl" (built on demand under a lock; BuildError with the log's tail).

Example
-------
    def test_install(kube, namespace, webhook_certs):
        proc = subprocess.run([sys.executable, "-m", "instancetype", "install",
                               "--kubeconfig", kube.kubeconfig, ...], env=kube.env(), ...)
        out = kube.kubectl("get", "vm", "-n", namespace).stdout
        denied = kube.kubectl("get", "secrets", user="alice", check=False)
        assert "Forbidden" in denied.stderr
"""
