"""`-v=N` on a cluster: the API requests a command makes, one klog line each on stderr, as
kubectl's round-tripper logs them from level 6 (`"Response" verb="GET" url="..." status="200
OK"`). The lines come from the HTTP client's own log record of each response (httpx2's
`HTTP Request: ...`), so every request any part of the store makes is shown, and nothing is
logged below level 6 or on the embedded store (which makes no requests).
"""
from __future__ import annotations

import logging
import os
import sys
import time

REQUEST_LEVEL = 6          # kubectl: -v=6 logs each request's verb, URL and status


class _KlogHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            method, url, _version, status, reason = record.args  # type: ignore[misc]
        except (TypeError, ValueError):
            return
        now = time.time()
        stamp = time.strftime("%m%d %H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1e6):06d}"
        sys.stderr.write(f'I{stamp} {os.getpid():>7} round_trippers.go:632] "Response" verb="{method}" '
                         f'url="{url}" status="{status} {reason}"\n')


_installed: list[logging.Handler] = []


def enable(level: int) -> None:
    """Log requests at `level` >= 6 (kubectl's -v); idempotent."""
    if level < REQUEST_LEVEL or _installed:
        return
    logger = logging.getLogger("httpx2")
    handler = _KlogHandler(logging.INFO)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    _installed.append(handler)


def disable() -> None:
    """Stop logging (the command is over; in-process callers run several commands)."""
    logger = logging.getLogger("httpx2")
    while _installed:
        logger.removeHandler(_installed.pop())
    logger.propagate = True
    logger.setLevel(logging.NOTSET)


def verbosity(value: str | None) -> int:
    """klog's `-v` value: `-v=6`, `-v 6` and `--v=6` arrive as "6" or "=6"."""
    if value is None or value == "":
        return 0
    text = value[1:] if value.startswith("=") else value
    try:
        return int(text)
    except ValueError:
        from instancetype.errors import CLIError

        raise CLIError(f'invalid argument "{text}" for "-v, --v" flag: strconv.ParseInt: parsing "{text}": '
                       "invalid syntax") from None
