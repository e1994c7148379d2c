"""kubectl `edit`: the objects as YAML in `$KUBE_EDITOR`, else `$EDITOR`, else `vi`; what was
saved is sent as a merge patch over the stored object, through the same update path as `apply`.

The loop is kubectl's (kubectl/pkg/cmd/util/editor/editoptions.go): an unchanged file is
`Edit cancelled, no changes made.`; an empty one `Edit cancelled, saved file was empty.`; a YAML
syntax error or an Invalid refusal reopens the file with the reasons at the top; the same file
saved again after an error is `Edit cancelled, no valid changes were saved.`; any other refusal
keeps the file and says where it is.
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from typing import Any

import click

from .completers import complete_args
from .kubectl import CommandError, cluster_of, namespace_option, reports_errors

HEADER = ("# Please edit the object below. Lines beginning with a '#' will be ignored,\n"
          "# and an empty file will abort the edit. If an error occurs while saving this file will be\n"
          "# reopened with the relevant failures.\n#\n")


def _hash_on_line_break(s: str) -> str:
    """editoptions `hashOnLineBreak`: continuation lines stay comments."""
    out = []
    for i, ch in enumerate(s):
        if ch == "\n" and i + 1 < len(s) and s[i + 1] != "#":
            out.append("\n# ")
        else:
            out.append(ch)
    return "".join(out)


def header_text(reasons: list[tuple[str, list[str]]]) -> str:
    """editHeader `writeTo`."""
    text = HEADER
    for head, others in reasons:
        text += f"# {_hash_on_line_break(head)}{':' if others else ''}\n"
        text += "".join(f"# * {_hash_on_line_break(o)}\n" for o in others)
        text += "#\n"
    return text


def manual_strip(text: str) -> str:
    """cmdutil `ManualStrip`: the file without its comment lines."""
    lines = text.split("\n")
    kept = []
    for i, line in enumerate(lines):
        t = line.strip()
        if t.startswith("#") and not t.startswith("#!"):
            continue
        kept.append(line + ("\n" if i < len(lines) - 1 else ""))
    return "".join(kept)


def strip_comments(text: str) -> Any:
    """cmdutil `StripComments`: the content as data when it parses, else the text without comments."""
    import yaml

    try:
        return ("data", list(yaml.safe_load_all(text)))
    except yaml.YAMLError:
        return ("text", manual_strip(text))


def has_lines(text: str) -> bool:
    return any(line.strip() and not line.strip().startswith("#") for line in text.splitlines())


def editor_command(path: str) -> list[str]:
    """kubectl's `defaultEnvEditor`: a plain word is run as is, words split on spaces, anything
    quoted goes to the shell."""
    editor = os.environ.get("KUBE_EDITOR") or os.environ.get("EDITOR") or "vi"
    if " " not in editor:
        return [editor, path]
    if not any(c in editor for c in "\"'\\"):
        return [w for w in editor.split(" ")] + [path]
    return [os.environ.get("SHELL") or "/bin/bash", "-c", f"{editor} {shlex.quote(path)}"]


def launch(text: str, ext: str) -> tuple[str, str]:
    """Write the text to a new temporary file, run the editor on it, read it back."""
    fd, path = tempfile.mkstemp(prefix="instancetype-edit-", suffix=ext)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    cmd = editor_command(path)
    try:
        rc = subprocess.call(cmd)
    except OSError:
        rc = -1
    if rc != 0:
        raise CommandError(f'A copy of your changes has been stored to "{path}"\n'
                           f'error: there was a problem with the editor "{cmd[0] if cmd[0] != "/bin/bash" else cmd[-1]}"')
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    except (OSError, UnicodeDecodeError) as e:
        raise CommandError(f'A copy of your changes has been stored to "{path}"\nerror: {e}') from None


def create_merge_patch(original: Any, edited: Any) -> Any:
    """jsonpatch `CreateMergePatch`: what turns `original` into `edited` (objects key by key,
    anything else replaced whole, removed keys as null)."""
    if not isinstance(original, dict) or not isinstance(edited, dict):
        return edited
    patch: dict = {}
    for k in original:
        if k not in edited:
            patch[k] = None
    for k, v in edited.items():
        if k not in original:
            patch[k] = v
        elif original[k] != v:
            if isinstance(v, dict) and isinstance(original[k], dict):
                patch[k] = create_merge_patch(original[k], v)
            else:
                patch[k] = v
    return patch


def _printed(obj: dict, fmt: str) -> str:
    from instancetype.jsonutil import sorted_keys

    from .kubectl import go_json

    if fmt == "json":
        return go_json(obj, indent=4) + "\n"
    from .output import yaml_text

    return yaml_text(sorted_keys(obj))


@click.command("edit")
@click.argument("args", nargs=-1, shell_complete=complete_args)
@namespace_option
@click.option("-o", "--output", "fmt", default="yaml", help="yaml (default) or json: the format to edit in.")
@click.pass_context
@reports_errors
def edit_cmd(ctx, args, namespace, fmt):
    """Edit objects in your editor: TYPE NAME or TYPE/NAME (kubectl edit)."""
    from .changes import select

    if fmt not in ("yaml", "json"):
        raise CommandError(f'error: unable to match a printer suitable for the output format "{fmt}", allowed '
                           "formats are: json,yaml")
    with cluster_of(ctx) as cluster:
        found, errors = select(cluster, list(args), namespace, verb="edit")
        if errors:
            raise CommandError("\n".join(errors))
        if not found:
            raise CommandError("error: edit cancelled, no objects found")
        return _edit_loop(cluster, found, fmt)


def _edit_loop(cluster: Any, found: list, fmt: str) -> int:
    originals = [f.obj for f in found]
    doc = originals[0] if len(originals) == 1 else {"apiVersion": "v1", "kind": "List", "metadata": {},
                                                    "items": originals}
    ext = ".json" if fmt == "json" else ".yaml"
    reasons: list[tuple[str, list[str]]] = []
    contains_error = False
    edited = ""
    original = ""
    previous_file = ""
    for _ in range(1000):   # each pass waits for a person; the bound only stops a runaway editor
        buf = header_text(reasons)
        if not contains_error:
            buf += _printed(doc, fmt)
            original = buf
        else:
            buf += manual_strip(edited)
        edited_before = edited
        edited, path = launch(buf, ext)
        if contains_error and strip_comments(edited_before) == strip_comments(edited):
            raise CommandError(f'A copy of your changes has been stored to "{path}"\n'
                               "error: Edit cancelled, no valid changes were saved.")
        if previous_file:
            _remove(previous_file)
        if strip_comments(original) == strip_comments(edited):
            _remove(path)
            sys.stderr.write("Edit cancelled, no changes made.\n")
            return 0
        if not has_lines(edited):
            _remove(path)
            sys.stderr.write("Edit cancelled, saved file was empty.\n")
            return 0
        previous_file = path
        reasons = []
        objs, syntax = _parse(edited)
        if syntax is not None:
            contains_error = True
            reasons.append((f"The edited file had a syntax error: {syntax}", []))
            continue
        contains_error = False
        invalid = retryable = notfound = 0
        for obj in objs:
            f = _original_for(found, obj)
            if f is None:
                raise CommandError(f'A copy of your changes has been stored to "{path}"\n'
                                   "error: no original object found for the edited object")
            if obj == f.obj:
                sys.stdout.write(f.printed("skipped"))
                continue
            patch = create_merge_patch(f.obj, obj)
            if any(k in patch for k in ("apiVersion", "kind")) or "name" in (patch.get("metadata") or {}):
                raise CommandError(f'A copy of your changes has been stored to "{path}"\n'
                                   "error: At least one of apiVersion, kind and name was changed")
            try:
                stored = _save_patch(cluster, f, patch)
            except Exception as e:  # noqa: BLE001 - sorted as kubectl sorts them below
                from .patch_cmd import _is_refusal

                if not _is_refusal(e):
                    raise
                kind_of = _classify(e)
                resource = f.resource.qualified
                if kind_of == "invalid":
                    invalid += 1
                    reasons.append((f'{resource} "{f.name}" was not valid', _causes(e)))
                    sys.stderr.write(f'error: {resource} "{f.name}" is invalid\n')
                elif kind_of == "notfound":
                    notfound += 1
                    sys.stderr.write(f'error: {resource} "{f.name}" could not be found on the server\n')
                else:
                    retryable += 1
                    sys.stderr.write(f'error: {resource} "{f.name}" could not be patched: {_message(e)}\n')
                continue
            f.obj = stored
            sys.stdout.write(f.printed("edited"))
        sys.stdout.flush()
        if retryable:
            sys.stderr.write(f"You can run `instancetype apply -f {path}` to try this update again.\n")
            return 1
        if notfound:
            sys.stderr.write(f'The edits you made on deleted resources have been saved to "{path}"\n')
            return 1
        if not invalid:
            _remove(path)
            return 0
        contains_error = True
    raise CommandError("error: too many edits")


def _parse(text: str) -> tuple[list[dict], str | None]:
    import yaml

    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as e:
        return [], " ".join(str(e).split())
    objs: list[dict] = []
    for d in docs:
        if not isinstance(d, dict):
            return [], "the edited file does not hold objects"
        if d.get("kind") == "List" and isinstance(d.get("items"), list):
            objs.extend(i for i in d["items"] if isinstance(i, dict))
        else:
            objs.append(d)
    return objs, None


def _original_for(found: list, obj: dict):
    uid = (obj.get("metadata") or {}).get("uid") if isinstance(obj.get("metadata"), dict) else None
    for f in found:
        if (f.obj.get("metadata") or {}).get("uid") == uid:
            return f
    return None


def _save_patch(cluster: Any, f: Any, patch: dict) -> dict:
    """The API server's PATCH: the merge patch applied to the stored object, then the update path."""
    from instancetype.store.base import merge_patch

    from .changes import save

    current = cluster.get(f.resource.kind, f.name, f.namespace)
    return save(cluster, current, merge_patch(current, patch))


def _classify(e: Exception) -> str:
    from instancetype.lifecycle.admission import Refused

    if isinstance(e, Refused):
        return "invalid" if getattr(e.result, "causes", None) else "retryable"
    reason = getattr(e, "reason", "")
    return {"Invalid": "invalid", "NotFound": "notfound"}.get(reason, "retryable")


def _causes(e: Exception) -> list[str]:
    causes = getattr(getattr(e, "result", None), "causes", None) or getattr(e, "causes", None) or []
    return [f"{c.field}: {c.message}" for c in causes]


def _message(e: Exception) -> str:
    from instancetype.lifecycle.admission import Refused

    if isinstance(e, Refused) and e.webhook:
        return f'admission webhook "{e.webhook}" denied the request: {e.result.message}'
    return str(e)


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass
