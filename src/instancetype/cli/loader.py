"""Reading `-f` sources: files, directories (recursively), and `-` (stdin).

Each source may hold multi-document YAML, JSON, or `List` objects; every
object comes back as a `Document` that remembers where it was found, so an
error names the file, the document's index and the field. Nothing here is
KubeVirt-specific: the commands decide what each kind means.

Defences, because manifests come from anywhere:
- a file over 64 MiB, binary data, undecodable text: refused before parsing;
- YAML aliases that would expand past a fixed budget (an "alias bomb") or
  refer to themselves: refused after parsing, in time linear in the document;
- YAML-only values JSON cannot hold (timestamps, binary, non-string keys,
  NaN/Inf) become what Kubernetes' YAML-to-JSON step makes of them, or an error.
"""
from __future__ import annotations

import base64
import json
import math
import os
import sys
from dataclasses import dataclass
from typing import Any, BinaryIO, Iterator

import yaml

from instancetype.errors import LoadError

MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_EXPANDED_NODES = 5_000_000
EXTENSIONS = (".yaml", ".yml", ".json")

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Safe YAML with Kubernetes' readings: timestamps stay strings, binary becomes base64 text."""


def _timestamp_as_text(loader: Any, node: Any) -> str:
    return loader.construct_scalar(node)


def _binary_as_base64(loader: Any, node: Any) -> str:
    raw = loader.construct_yaml_binary(node)
    return base64.b64encode(raw).decode("ascii")


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_text)
_Loader.add_constructor("tag:yaml.org,2002:binary", _binary_as_base64)


@dataclass
class Document:
    """One object and where it came from (`index` counts documents from 1; `item` within a List)."""

    source: str
    index: int
    obj: dict
    item: int | None = None

    @property
    def where(self) -> str:
        s = f"{self.source}: document {self.index}"
        if self.item is not None:
            s += f", item {self.item}"
        return s

    @property
    def kind(self) -> str:
        return self.obj.get("kind", "")

    @property
    def api_version(self) -> str:
        return self.obj.get("apiVersion", "")

    @property
    def name(self) -> str:
        meta = self.obj.get("metadata")
        return (meta.get("name") or "") if isinstance(meta, dict) else ""


def _check_tree(v: Any, where: str) -> None:
    """Refuse alias bombs, self-references, non-string keys and non-finite numbers.

    The size of each distinct container is computed once (memoised by id), so a
    document made of shared aliases costs its distinct nodes, not its expansion.
    """
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(x: Any, path: str) -> int:
        t = type(x)
        if t is dict or t is list:
            key = id(x)
            got = sizes.get(key)
            if got is not None:
                return got
            if key in active:
                raise LoadError(f"{where}: {path or '(root)'}: a YAML alias refers to itself")
            active.add(key)
            n = 1
            if t is dict:
                for k, c in x.items():
                    if not isinstance(k, str):
                        raise LoadError(f"{where}: {path or '(root)'}: key {k!r} is not a string")
                    n += size(c, f"{path}.{k}" if path else k)
                    if n > MAX_EXPANDED_NODES:
                        break
            else:
                for i, c in enumerate(x):
                    n += size(c, f"{path}[{i}]")
                    if n > MAX_EXPANDED_NODES:
                        break
            active.discard(key)
            if n > MAX_EXPANDED_NODES:
                raise LoadError(f"{where}: document expands to more than {MAX_EXPANDED_NODES} values "
                                f"(a YAML alias bomb?)")
            sizes[key] = n
            return n
        if t is float and not math.isfinite(x):
            raise LoadError(f"{where}: {path}: {x!r} is not a number JSON can hold")
        return 1

    size(v, "")


def _decode_text(raw: bytes, source: str) -> str:
    if b"\x00" in raw:
        raise LoadError(f"{source}: binary data is not a YAML or JSON manifest")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise LoadError(f"{source}: not UTF-8 text (invalid byte at offset {e.start})") from None
    return text


def _yaml_error(e: yaml.YAMLError, source: str, doc_index: int) -> LoadError:
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    ctx = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    return LoadError(f"{source}: document {doc_index}: invalid YAML: {problem}{ctx}")


def parse_text(text: str, source: str) -> Iterator[tuple[int, Any]]:
    """(document index from 1, parsed value) for each non-empty document of a YAML/JSON stream."""
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            yield 1, json.loads(text)
            return
        except ValueError:
            pass  # maybe YAML flow style, or several JSON documents: let YAML read it
    index = 0
    try:
        for index, value in enumerate(yaml.load_all(text, Loader=_Loader), 1):
            if value is None:
                continue
            yield index, value
    except yaml.YAMLError as e:
        raise _yaml_error(e, source, index + 1) from None
    except RecursionError:
        raise LoadError(f"{source}: document {index + 1}: nested too deeply") from None
    except (ValueError, TypeError, OverflowError) as e:
        raise LoadError(f"{source}: document {index + 1}: invalid YAML: {e}") from None


def documents_from_text(text: str, source: str) -> list[Document]:
    docs: list[Document] = []
    for index, value in parse_text(text, source):
        where = f"{source}: document {index}"
        try:
            _check_tree(value, where)
        except RecursionError:
            raise LoadError(f"{where}: nested too deeply") from None
        if not isinstance(value, dict):
            raise LoadError(f"{where}: expected an object, got {_type_name(value)}")
        kind = value.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and isinstance(value.get("items"), list):
            for i, item in enumerate(value["items"]):
                d = Document(source, index, item, item=i)
                if not isinstance(item, dict):
                    raise LoadError(f"{d.where}: expected an object, got {_type_name(item)}")
                _require_type_meta(d)
                docs.append(d)
            continue
        d = Document(source, index, value)
        _require_type_meta(d)
        docs.append(d)
    return docs


def _type_name(v: Any) -> str:
    return {str: "a string", int: "a number", float: "a number", bool: "a boolean", list: "a list"}.get(
        type(v), type(v).__name__)


def _require_type_meta(d: Document) -> None:
    missing = [k for k in ("apiVersion", "kind") if not isinstance(d.obj.get(k), str) or not d.obj.get(k)]
    if missing:
        raise LoadError(f"{d.where}: {', '.join(missing)}: Required value: every object needs "
                        f"apiVersion and kind")
    meta = d.obj.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise LoadError(f"{d.where}: metadata: expected an object, got {_type_name(meta)}")


def _read_limited(f: BinaryIO, source: str) -> bytes:
    raw = f.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:
        raise LoadError(f"{source}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    return raw


def read_text(path: str, stdin: BinaryIO | None = None) -> tuple[str, str]:
    """(text, source name) of one file or `-`, with the size and binary checks."""
    if path == "-":
        stream = stdin if stdin is not None else sys.stdin.buffer
        return _decode_text(_read_limited(stream, "<stdin>"), "<stdin>"), "<stdin>"
    try:
        if os.path.getsize(path) > MAX_FILE_BYTES:
            raise LoadError(f"{path}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
        with open(path, "rb") as f:
            raw = _read_limited(f, path)
    except FileNotFoundError:
        raise LoadError(f'the path "{path}" does not exist') from None
    except IsADirectoryError:
        raise LoadError(f"{path}: is a directory") from None
    except OSError as e:
        raise LoadError(f"{path}: {e.strerror or e}") from None
    return _decode_text(raw, path), path


def read_source(path: str, stdin: BinaryIO | None = None) -> list[Document]:
    """Every document of one `-f` value (a file, a directory, or `-`)."""
    if path != "-" and os.path.isdir(path):
        docs: list[Document] = []
        for file in _walk(path):
            docs.extend(read_source(file))
        return docs
    text, source = read_text(path, stdin)
    return documents_from_text(text, source)


def read_values(path: str) -> list[tuple[str, Any]]:
    """(where, value) of each document of one file, checked but without the apiVersion/kind rule."""
    text, source = read_text(path)
    out = []
    for index, value in parse_text(text, source):
        where = f"{source}: document {index}"
        _check_tree(value, where)
        out.append((where, value))
    return out


def _walk(root: str) -> list[str]:
    out: list[str] = []

    def onerror(e: OSError) -> None:
        raise LoadError(f"{e.filename or root}: {e.strerror or e}")

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(EXTENSIONS):
                out.append(os.path.join(dirpath, name))
    return out


def read_sources(paths: list[str], stdin: BinaryIO | None = None) -> list[Document]:
    docs: list[Document] = []
    for p in paths:
        docs.extend(read_source(p, stdin))
    return docs
