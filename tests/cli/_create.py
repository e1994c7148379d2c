"""Running `instancetype create` in-process, for the create tests."""
from __future__ import annotations

import contextlib
import io

import yaml

from instancetype.cli.create import run


def create(*args: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `instancetype create <args>`."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run(list(args))
    return status, out.getvalue(), err.getvalue()


def obj(*args: str) -> dict:
    """The one manifest a successful `create` prints."""
    status, out, err = create(*args)
    assert status == 0, err
    docs = [d for d in yaml.safe_load_all(out) if d]
    assert len(docs) == 1, docs
    return docs[0]


def failure(*args: str) -> str:
    """stderr of a failing `create` (exit 1, nothing on stdout)."""
    status, out, err = create(*args)
    assert status == 1 and out == "", (status, out)
    # the one prefix of every error of the command line (after any deprecation notes)
    assert err.startswith("error: ") or "\nerror: " in err, err
    return err.replace("error: ", "", 1).rstrip("\n")


def tspec(vm: dict) -> dict:
    return vm["spec"]["template"]["spec"]
