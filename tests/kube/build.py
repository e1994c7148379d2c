"""The test environment's binaries, built on demand from the Go module proxy.

`binary(name)` returns the path of a real etcd, kube-apiserver, kube-controller-manager or
virtctl, built from the wrapper modules under `tests/kube/env/` into a cache outside the work
tree (`~/.cache/instancetype/kube/v1.35.4/`, or `$INSTANCETYPE_KUBE_CACHE`), with GOMODCACHE and
GOCACHE inside it. A clean machine builds each binary once (minutes); every later run reuses it.

Parallel pytest-xdist workers build once: the build runs under an exclusive `fcntl` lock per
binary, writes to a temporary name and renames it into place, so a reader never sees half a
file. A stamp beside each binary records a digest of its inputs (go.mod, go.sum, *.go, flags):
a changed wrapper module is rebuilt; a binary without a stamp (built by hand with the same
recipe) is trusted.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

KUBE_VERSION = "v1.35.4"
ENV_DIR = Path(__file__).resolve().parent / "env"
# Bounds a build: a cold kube-apiserver takes about 4 minutes on 2 idle cores.
BUILD_TIMEOUT_S = 45 * 60

_VERSION_LDFLAGS = (
    f"-X k8s.io/component-base/version.gitVersion={KUBE_VERSION} "
    "-X k8s.io/component-base/version.gitMajor=1 "
    "-X k8s.io/component-base/version.gitMinor=35"
)


@dataclass(frozen=True)
class Recipe:
    module: str          # directory under tests/kube/env/
    package: str         # what `go build` builds inside that module
    ldflags: str = ""


RECIPES: dict[str, Recipe] = {
    "etcd": Recipe("etcd", "."),
    "kube-apiserver": Recipe("kube-apiserver", ".", _VERSION_LDFLAGS),
    "kube-controller-manager": Recipe("kube-controller-manager", ".", _VERSION_LDFLAGS),
    # KubeVirt's own version ldflags (hack/version.sh), so `virtctl version` names v1.7.0.
    "virtctl": Recipe("virtctl", "kubevirt.io/kubevirt/cmd/virtctl",
                      "-X kubevirt.io/client-go/version.gitVersion=v1.7.0 "
                      "-X kubevirt.io/client-go/version.gitTreeState=clean"),
}


class BuildError(RuntimeError):
    """A binary could not be built; the message ends with the tail of the build log."""


def cache_dir() -> Path:
    override = os.environ.get("INSTANCETYPE_KUBE_CACHE")
    if override:
        return Path(override).expanduser()
    return Path.home() / ".cache" / "instancetype" / "kube" / KUBE_VERSION


def _inputs_digest(recipe: Recipe, module_dir: Path) -> str:
    h = hashlib.sha256(f"{recipe.package}\0{recipe.ldflags}\0".encode())
    for path in sorted(module_dir.iterdir()):
        if path.is_file() and (path.name in ("go.mod", "go.sum") or path.suffix == ".go"):
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _go() -> str:
    found = shutil.which("go") or ("/usr/local/go/bin/go" if os.access("/usr/local/go/bin/go", os.X_OK) else None)
    if found is None:
        raise BuildError("go is not on PATH: the cluster tests build kube-apiserver, etcd and virtctl with it")
    return found


def _tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _is_current(target: Path, stamp: Path, digest: str) -> bool:
    if not (target.is_file() and os.access(target, os.X_OK)):
        return False
    if not stamp.exists():
        return True
    return stamp.read_text().strip() == digest


def binary(name: str, *, recipe: Recipe | None = None, module_dir: Path | None = None,
           cache: Path | None = None) -> Path:
    """The path of the built binary `name` (one of RECIPES), building it first if needed.
    (`recipe`, `module_dir`, `cache` override the defaults: for the build machinery's own tests.)

    Raises BuildError (with the build log's tail) when the build fails."""
    recipe = recipe or RECIPES[name]
    module_dir = module_dir or ENV_DIR / recipe.module
    cache = cache or cache_dir()
    bindir, logdir = cache / "bin", cache / "logs"
    bindir.mkdir(parents=True, exist_ok=True)
    logdir.mkdir(parents=True, exist_ok=True)
    target, stamp = bindir / name, bindir / f"{name}.inputs"
    digest = _inputs_digest(recipe, module_dir)
    if _is_current(target, stamp, digest):
        return target
    with open(cache / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be building it: wait for it
        if _is_current(target, stamp, digest):
            return target
        _build(name, recipe, module_dir, cache, target, stamp, digest, logdir / f"{name}.log")
    return target


def _build(name: str, recipe: Recipe, module_dir: Path, cache: Path, target: Path,
           stamp: Path, digest: str, log: Path) -> None:
    tmp = target.with_name(f".{name}.tmp-{os.getpid()}")
    env = dict(os.environ)
    env.update(GOMODCACHE=str(cache / "gomod"), GOCACHE=str(cache / "gocache"), GOFLAGS="-mod=readonly")
    argv = [_go(), "build"]
    if recipe.ldflags:
        argv += ["-ldflags", recipe.ldflags]
    argv += ["-o", str(tmp), recipe.package]
    started = time.monotonic()
    with open(log, "w") as out:
        out.write(f"# cd {module_dir} && GOMODCACHE={env['GOMODCACHE']} GOCACHE={env['GOCACHE']} "
                  f"{' '.join(argv)}\n")
        out.flush()
        try:
            rc = subprocess.run(argv, cwd=module_dir, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, timeout=BUILD_TIMEOUT_S).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        out.write(f"# exit {rc} after {time.monotonic() - started:.1f}s\n")
    with open(cache / "logs" / "builds.txt", "a") as history:
        history.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {name} exit={rc} "
                      f"{time.monotonic() - started:.1f}s\n")
    if rc != 0:
        tmp.unlink(missing_ok=True)
        raise BuildError(f"building {name} failed (exit {rc}); log {log}, last lines:\n{_tail(log)}")
    os.replace(tmp, target)
    stamp.write_text(digest + "\n")


def build_seconds(name: str, cache: Path | None = None) -> float | None:
    """How long the last build of `name` took, from its log (None if it was not built here)."""
    log = (cache or cache_dir()) / "logs" / f"{name}.log"
    for line in reversed(_tail(log, 3).splitlines()):
        if line.startswith("# exit 0 after "):
            return float(line.removeprefix("# exit 0 after ").rstrip("s"))
    return None
