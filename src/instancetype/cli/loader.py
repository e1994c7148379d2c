"""Reading `-f` sources: files, directories (recursively), and `-` (stdin).

Each source may hold multi-document YAML, JSON, or `List` objects; every
object comes back as a `Document` that remembers where it was found, so an
error names the file, the document's index and the field. Nothing here is
KubeVirt-specific: the commands decide what each kind means.

Defences, because manifests come from anywhere. Every limit is far above any
real Kubernetes object, and each keeps the work per input small (a refused
input costs about a second and well under a few hundred MB):
- a file over 64 MiB, binary data, undecodable text: refused before parsing;
- more than `MAX_VALUES` (1,000,000) values in one file, counting every
  mapping, sequence, key and scalar, and counting a YAML alias each time it is
  used (an "alias bomb"): refused as soon as the count passes the limit, so a
  list of 4M integers costs what its first million do. (The API server takes
  at most 3 MiB in one request; a real manifest holds a few thousand values.)
- nesting deeper than `MAX_DEPTH` (100) levels (the API server allows 10000,
  but no Kubernetes object nests deeper than about 30; every later step walks
  objects recursively);
- a string (value or key) longer than `MAX_STRING_CHARS` (1 MiB: a ConfigMap's
  whole data may be no larger);
- an integer written with more than `MAX_INT_DIGITS` (1000) digits (a
  Kubernetes number has at most 20);
- duplicate keys in a mapping, refused as kube-apiserver's strict decoding
  (kubectl's default) refuses them: YAML as go-yaml says it
  (`line 5: key "name" already set in map`), JSON as Kubernetes' JSON decoder
  says it (`duplicate field "metadata.name"`);
- a YAML alias that refers to the node that contains it, undefined aliases,
  tags that name no JSON type;
- YAML-only values JSON cannot hold (timestamps, binary, non-string keys,
  NaN/Inf) become what Kubernetes' YAML-to-JSON step makes of them, or an error.

YAML is built from libyaml's event stream by a loop, not by PyYAML's recursive
composer (which crashes the interpreter on input nested 100,000 deep), so every
check above happens while the document is read, before any later step sees it.
"""
from __future__ import annotations

import base64
import math
import os
import re
import sys
from collections.abc import Iterator
from typing import Any, BinaryIO, TextIO

import yaml

from instancetype.errors import LoadError

MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_VALUES = 1_000_000
MAX_DEPTH = 100
MAX_STRING_CHARS = 1024 * 1024
MAX_INT_DIGITS = 1000
EXTENSIONS = (".yaml", ".yml", ".json")

_CParser = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_resolver = yaml.resolver.Resolver()
_constructor = yaml.constructor.SafeConstructor()
_INT_LIMIT = 10 ** MAX_INT_DIGITS

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_BINARY = "tag:yaml.org,2002:binary"
_MERGE = "tag:yaml.org,2002:merge"
_SEQ_TAGS = (None, "!", "tag:yaml.org,2002:seq")
_MAP_TAGS = (None, "!", "tag:yaml.org,2002:map")
_SELF = object()   # an anchor whose node is still being read
_CACHED_TAGS = (_STR, _INT, _BOOL, _NULL, _TIMESTAMP)   # plain scalars read the same wherever they are


class Document:
    """One object and where it came from (`index` counts documents from 1; `item` within a List).
    (A plain class: `dataclasses` costs every offline command line its import.)"""

    __slots__ = ("source", "index", "obj", "item")

    def __init__(self, source: str, index: int, obj: dict, item: int | None = None):
        self.source = source
        self.index = index
        self.obj = obj
        self.item = item

    def __repr__(self) -> str:
        return f"Document(source={self.source!r}, index={self.index!r}, obj={self.obj!r}, item={self.item!r})"

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


def _path(parts: list) -> str:
    """`spec.template.volumes[0].name`; a path deeper than 12 names only its first 10 steps."""
    parts = [p for p in parts if p is not None]
    if len(parts) > 12:
        return _path(parts[:10]) + f"...({len(parts) - 10} more levels)"
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            if not (isinstance(p, str) and p.isprintable()):
                import json  # (imported where used: a YAML file's command line does not need it)

                p = json.dumps(p)   # a message stays one line
            out += f".{p}" if out else p
    return out or "(root)"


def _too_many(where: str, aliased: bool) -> LoadError:
    if aliased:
        return LoadError(f"{where}: expands to more than {MAX_VALUES} values, counting each use of a YAML alias "
                         f"(a YAML alias bomb?)")
    return LoadError(f"{where}: more than {MAX_VALUES} values in one file (the limit per file; "
                     f"split the file)")


def _long_string(n: int) -> str:
    return f"a string of {n} characters is longer than the limit of {MAX_STRING_CHARS} (1 MiB)"


def _big_int(digits: int) -> str:
    return f"a number of {digits} digits is too large (at most {MAX_INT_DIGITS})"


def _not_finite(x: float) -> str:
    return f"{x!r} is not a number JSON can hold"


def _deep(where: str, path: str) -> LoadError:
    return LoadError(f"{where}: {path}: nested deeper than {MAX_DEPTH} levels")


def _go_key(k: Any) -> str:
    """A key as go-yaml's `%#v` prints it in `key %#v already set in map`."""
    import json

    return json.dumps(k, ensure_ascii=False) if isinstance(k, str) else repr(k)


# --- YAML: built from libyaml's events, every check on the way --------------------------------------


class _Frame:
    """An open mapping or sequence: what is built so far and where its next child goes."""

    __slots__ = ("value", "is_map", "key", "anchor", "start", "merges")

    def __init__(self, value: Any, is_map: bool, anchor: str | None, start: int):
        self.value = value
        self.is_map = is_map
        self.key: Any = _SELF          # _SELF: the next value is a key
        self.anchor = anchor
        self.start = start             # values counted before this node
        self.merges: list | None = None

    def slot(self) -> Any:
        if self.is_map:
            return None if self.key is _SELF else "<<" if self.key is _MergeKey else self.key
        return len(self.value)


_scalar_cache: dict[str, Any] = {}


class _YAMLReader:
    """One YAML stream, document by document, as JSON-compatible values."""

    def __init__(self, text: str, source: str):
        self.parser = _CParser(text)
        self.source = source
        self.index = 0
        self.count = 0            # values so far in this file (aliases counted at their full size)
        self.aliased = False

    @property
    def where(self) -> str:
        return f"{self.source}: document {self.index}"

    def error(self, message: str, stack: list[_Frame], *, key: bool = False) -> LoadError:
        parts = [f.slot() for f in stack]
        if key and parts:
            parts.pop()                # the error is in a key: name the mapping
        path = _path([p for p in parts if p is not None])
        return LoadError(f"{self.where}: {path}: {message}")

    def documents(self) -> Iterator[tuple[int, Any]]:
        get = self.parser.get_event
        while True:
            ev = get()
            if ev is None or isinstance(ev, yaml.StreamEndEvent):
                return
            if isinstance(ev, yaml.DocumentStartEvent):
                self.index += 1
                self.count += 1
                value = self.document()
                if value is not None:
                    yield self.index, value

    def document(self) -> Any:
        """Read one document's events up to its end; returns its root value."""
        get = self.parser.get_event
        anchors: dict[str, tuple[Any, int]] = {}
        stack: list[_Frame] = []
        root: list = []
        while True:
            ev = get()
            t = type(ev)
            if t is yaml.ScalarEvent:
                self.count += 1
                if self.count > MAX_VALUES:
                    raise _too_many(self.where, self.aliased)
                is_key = bool(stack) and stack[-1].is_map and stack[-1].key is _SELF
                value = self.scalar(ev, stack, is_key)
                if ev.anchor is not None:
                    anchors[ev.anchor] = (value, 1)
                self.add(value, stack, root, ev)
            elif t is yaml.MappingStartEvent or t is yaml.SequenceStartEvent:
                is_map = t is yaml.MappingStartEvent
                if ev.tag not in (_MAP_TAGS if is_map else _SEQ_TAGS):
                    raise self.error(f"could not determine a constructor for the tag {ev.tag!r} "
                                     f"(line {ev.start_mark.line + 1})", stack)
                if len(stack) >= MAX_DEPTH:
                    raise _deep(self.where, _path([p for p in (f.slot() for f in stack) if p is not None]))
                self.count += 1
                if self.count > MAX_VALUES:
                    raise _too_many(self.where, self.aliased)
                if ev.anchor is not None:
                    anchors[ev.anchor] = (_SELF, 0)
                stack.append(_Frame({} if is_map else [], is_map, ev.anchor, self.count - 1))
            elif t is yaml.MappingEndEvent or t is yaml.SequenceEndEvent:
                frame = stack.pop()
                value = frame.value
                if frame.merges:
                    value = self.merged(frame)
                if frame.anchor is not None:
                    anchors[frame.anchor] = (value, self.count - frame.start)
                self.add(value, stack, root, ev)
            elif t is yaml.AliasEvent:
                value, size = anchors.get(ev.anchor, (None, -1))
                if size < 0:
                    raise self.error(f"found undefined alias {ev.anchor!r} (line {ev.start_mark.line + 1})", stack)
                if value is _SELF:
                    raise self.error("a YAML alias refers to itself", stack)
                self.count += size
                self.aliased = True
                if self.count > MAX_VALUES:
                    raise _too_many(self.where, True)
                self.add(value, stack, root, ev)
            elif t is yaml.DocumentEndEvent:
                return root[0] if root else None
            else:  # pragma: no cover - libyaml sends nothing else inside a document
                raise LoadError(f"{self.where}: invalid YAML: unexpected {t.__name__}")

    def scalar(self, ev: Any, stack: list[_Frame], is_key: bool) -> Any:
        text = ev.value
        if len(text) > MAX_STRING_CHARS:
            raise self.error(_long_string(len(text)), stack, key=is_key)
        tag = ev.tag
        if tag is None or tag == "!":
            if not ev.implicit[0]:
                return text                      # quoted, or `!`: a string
            cached = _scalar_cache.get(text, _SELF)
            if cached is not _SELF:
                return cached
            tag = _resolver.resolve(yaml.ScalarNode, text, (True, False))
            value = self.construct(tag, text, stack, is_key, ev)
            if len(text) <= 32 and len(_scalar_cache) < 4096 and tag in _CACHED_TAGS:
                _scalar_cache[text] = value
            return value
        return self.construct(tag, text, stack, is_key, ev)

    def construct(self, tag: str, text: str, stack: list[_Frame], is_key: bool, ev: Any) -> Any:
        if tag == _STR or tag == _TIMESTAMP:     # Kubernetes keeps timestamps as text
            return text
        if tag == _MERGE:
            return _MergeKey if is_key else text
        node = yaml.ScalarNode(tag, text)
        try:
            if tag == _INT:
                # before int(): YAML 1.1's base-60 integers (`1:30:00`) cost quadratic time when long
                digits = sum(c.isdigit() for c in text) if len(text) > MAX_INT_DIGITS else 0
                if digits > MAX_INT_DIGITS:
                    raise self.error(_big_int(digits), stack, key=is_key)
                return _constructor.construct_yaml_int(node)
            if tag == _FLOAT:
                value = _constructor.construct_yaml_float(node)
                if not math.isfinite(value):
                    raise self.error(_not_finite(value), stack, key=is_key)
                return value
            if tag == _BOOL:
                return _constructor.construct_yaml_bool(node)
            if tag == _NULL:
                return None
            if tag == _BINARY:
                return base64.b64encode(_constructor.construct_yaml_binary(node)).decode("ascii")
        except LoadError:
            raise
        except (yaml.YAMLError, ValueError, KeyError, TypeError) as e:
            problem = getattr(e, "problem", None) or str(e)
            raise self.error(f"invalid YAML: cannot read {text[:40]!r} as {tag.rsplit(':', 1)[-1]}: {problem} "
                             f"(line {ev.start_mark.line + 1})", stack, key=is_key) from None
        raise self.error(f"could not determine a constructor for the tag {tag!r} "
                         f"(line {ev.start_mark.line + 1})", stack, key=is_key)

    def add(self, value: Any, stack: list[_Frame], root: list, ev: Any) -> None:
        if not stack:
            root.append(value)
            return
        top = stack[-1]
        if not top.is_map:
            top.value.append(value)
            return
        if top.key is _SELF:                     # this value is a key
            if value is _MergeKey:
                top.key = _MergeKey
                return
            if not isinstance(value, str):
                shown = repr(value) if not isinstance(value, (dict, list)) else _type_name(value)
                raise self.error(f"key {shown} is not a string", stack, key=True)
            if value in top.value:
                path = _path([f.slot() for f in stack] + [value])
                raise LoadError(f"{self.where}: {path}: line {ev.start_mark.line + 1}: key {_go_key(value)} "
                                f"already set in map")
            top.key = value
            return
        if top.key is _MergeKey:
            maps = value if isinstance(value, list) else [value]
            if not all(isinstance(m, dict) for m in maps):
                raise self.error("<<: a merge key takes a mapping or a list of mappings", stack)
            if top.merges is None:
                top.merges = []
            top.merges.append(maps)
        else:
            top.value[top.key] = value
        top.key = _SELF

    @staticmethod
    def merged(frame: _Frame) -> dict:
        """YAML 1.1 merge keys as go-yaml and PyYAML read them: the mapping's own keys win, then the
        merged mappings in the order given."""
        out: dict = {}
        for maps in reversed(frame.merges or []):
            for m in reversed(maps):
                out.update(m)
        out.update(frame.value)
        return out


class _MergeKeyType:
    __slots__ = ()


_MergeKey = _MergeKeyType()


# --- JSON: Python's fast reader, then one walk for the same limits ------------------------------------


class _DuplicateKeys(dict):
    """A JSON object that repeated a key (`dup` is the first repeated key)."""

    dup: str = ""


def _pairs(pairs: list) -> dict:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set = set()
        for k, _ in pairs:
            if k in seen:
                d = _DuplicateKeys(d)
                d.dup = k
                break
            seen.add(k)
    return d


_JSON_STRING = r'"(?:[^"\\]|\\.)*"'


def _json_lower_bound(text: str) -> int:
    """At least this many values: every `,`, `[` and `{` outside strings starts one."""
    bare = re.sub(_JSON_STRING, "", text)     # (compiled on first use: only a file of millions of characters)
    return bare.count(",") + bare.count("[") + bare.count("{")


def _check_scalar(x: Any, where: str, path: tuple, last: Any = None) -> None:
    t = type(x)
    if t is int:
        if -_INT_LIMIT < x < _INT_LIMIT:
            return
        problem = _big_int(len(str(abs(x))))
    elif t is str:
        if len(x) <= MAX_STRING_CHARS:
            return
        problem = _long_string(len(x))
    elif t is float and not math.isfinite(x):
        problem = _not_finite(x)
    else:
        return
    raise LoadError(f"{where}: {_path([*path, last])}: {problem}")


_CONTAINERS = (dict, list, _DuplicateKeys)


def _check_json(value: Any, where: str) -> None:
    """Walk a parsed JSON document without recursion: depth, values, strings, numbers, duplicate keys."""
    if type(value) not in _CONTAINERS:
        _check_scalar(value, where, (), None)
        return
    count = 1
    stack: list[tuple[Any, int, tuple]] = [(value, 1, ())]
    while stack:
        x, depth, path = stack.pop()
        if depth > MAX_DEPTH:
            raise _deep(where, _path(list(path)))
        if type(x) is _DuplicateKeys:
            raise LoadError(f'{where}: duplicate field "{_path(list(path) + [x.dup])}"')
        if type(x) is list:
            count += len(x)
            if count > MAX_VALUES:
                raise _too_many(where, False)
            for i, c in enumerate(x):
                if type(c) in _CONTAINERS:
                    stack.append((c, depth + 1, path + (i,)))
                elif type(c) is not str or len(c) > MAX_STRING_CHARS:
                    _check_scalar(c, where, path, i)
        else:
            count += 2 * len(x)
            if count > MAX_VALUES:
                raise _too_many(where, False)
            for k, c in x.items():
                if len(k) > MAX_STRING_CHARS:
                    raise LoadError(f"{where}: {_path(list(path))}: {_long_string(len(k))}")
                if type(c) in _CONTAINERS:
                    stack.append((c, depth + 1, path + (k,)))
                elif type(c) is not str or len(c) > MAX_STRING_CHARS:
                    _check_scalar(c, where, path, k)


def _parse_json(text: str, source: str) -> Any:
    """The one JSON document of `text`, checked; None when `text` is not JSON (let YAML say why)."""
    import json  # (here: YAML files, the usual input, do not need it)

    where = f"{source}: document 1"
    if len(text) > MAX_VALUES and _json_lower_bound(text) > MAX_VALUES:
        raise _too_many(where, False)
    try:
        value = json.loads(text, object_pairs_hook=_pairs)
    except RecursionError:
        raise LoadError(f"{where}: nested deeper than {MAX_DEPTH} levels") from None
    except ValueError:
        return None   # maybe YAML flow style, several JSON documents, or a number too long: YAML says
    _check_json(value, where)
    return value


def _decode_text(raw: bytes, source: str) -> str:
    if b"\x00" in raw:
        raise LoadError(f"{source}: binary data is not a YAML or JSON manifest")
    if raw.startswith(b"\xef\xbb\xbf"):    # a byte order mark ("utf-8-sig" without its codec's module)
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LoadError(f"{source}: not UTF-8 text (invalid byte at offset {e.start})") from None
    return text


def _yaml_error(e: yaml.YAMLError, source: str, doc_index: int) -> LoadError:
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    ctx = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    return LoadError(f"{source}: document {doc_index}: invalid YAML: {problem}{ctx}")


def parse_text(text: str, source: str) -> Iterator[tuple[int, Any]]:
    """(document index from 1, parsed value) for each non-empty document of a YAML/JSON stream,
    within the limits of the module docstring."""
    if text.lstrip()[:1] in ("{", "["):
        value = _parse_json(text, source)
        if value is not None:
            yield 1, value
            return
    reader = _YAMLReader(text, source)
    try:
        yield from reader.documents()
    except yaml.YAMLError as e:
        raise _yaml_error(e, source, max(reader.index, 1)) from None


def documents_from_text(text: str, source: str) -> list[Document]:
    docs: list[Document] = []
    for index, value in parse_text(text, source):
        where = f"{source}: document {index}"
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
    return {str: "a string", int: "a number", float: "a number", bool: "a boolean", list: "a list",
            dict: "an object"}.get(
        type(v), type(v).__name__)


def _require_type_meta(d: Document) -> None:
    missing = [k for k in ("apiVersion", "kind") if not isinstance(d.obj.get(k), str) or not d.obj.get(k)]
    if missing:
        raise LoadError(f"{d.where}: {', '.join(missing)}: Required value: every object needs "
                        f"apiVersion and kind")
    meta = d.obj.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise LoadError(f"{d.where}: metadata: expected an object, got {_type_name(meta)}")


def _read_limited(f: BinaryIO | TextIO, source: str) -> bytes:
    data = f.read(MAX_FILE_BYTES + 1)
    # (a standard input replaced by a text stream without `.buffer` reads str)
    raw = data.encode() if isinstance(data, str) else data
    if len(raw) > MAX_FILE_BYTES:
        raise LoadError(f"{source}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    return raw


def read_text(path: str, stdin: BinaryIO | None = None) -> tuple[str, str]:
    """(text, source name) of one file or `-`, with the size and binary checks."""
    if path == "-":
        stream = stdin if stdin is not None else getattr(sys.stdin, "buffer", sys.stdin)
        if stream is None:                    # `<&-`: Python leaves sys.stdin None
            raise LoadError("<stdin>: standard input is closed")
        try:
            raw = _read_limited(stream, "<stdin>")
        except OSError as e:
            raise LoadError(f"<stdin>: {e.strerror or e}") from None
        return _decode_text(raw, "<stdin>"), "<stdin>"
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
        out.append((f"{source}: document {index}", value))
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
