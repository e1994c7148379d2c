"""kubectl `patch`: `--type merge` (RFC 7386), `json` (RFC 6902) or `strategic` (the default).

As kubectl does, a strategic merge patch is refused for custom resources (the media types a
CRD accepts); on the built-in kinds it is applied as a merge patch (their lists that
strategic merge would merge by key are not among what this project stores).
The patched object goes through the same update path as `apply` (admission, then the controller).
Prints `<resource>.<group>/<name> patched`, or `patched (no change)` when nothing changed.
"""
from __future__ import annotations

import sys

import click

from .completers import complete_args
from .kubectl import (
    DRY_RUN_SUFFIX,
    CommandError,
    cluster_of,
    dry_run_mode,
    go_json,
    namespace_option,
    reports_errors,
)

PATCH_TYPES = ("json", "merge", "strategic")
BUILTIN_GROUPS = ("", "apps", "coordination.k8s.io")
# kubectl's own refusal, from the media types the API server's discovery lists for a custom resource.
UNSUPPORTED_MEDIA = ("error: application/strategic-merge-patch+json is not supported by {gv}, Kind={kind}: the body "
                     "of the request was in an unknown format - accepted media types include: "
                     "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")
REJECTED = "The request is invalid: the server rejected our request due to an error in our request"


def parse_patch(text: str):
    """The patch as kubectl reads `-p`: JSON or YAML (cmd/patch: `yaml.ToJSON`)."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise CommandError(f'error: unable to parse "{text}": {str(e).splitlines()[0]}') from None


def patched_object(res, current: dict, patch, patch_type: str) -> dict:
    """What the API server makes of the patch (its refusals as kubectl prints them)."""
    from instancetype.errors import PatchError, PatchFormatError
    from instancetype.store.base import merge_patch
    from instancetype.webhook.jsonpatch import apply as apply_patch

    if patch_type == "strategic" and res.group not in BUILTIN_GROUPS:
        raise CommandError(UNSUPPORTED_MEDIA.format(gv=res.api_version, kind=res.kind))
    if patch_type == "json":
        try:
            out = apply_patch(current, patch)
        except PatchFormatError as e:
            raise CommandError(f"Error from server (BadRequest): {e}") from None
        except PatchError:
            raise CommandError(REJECTED) from None
    else:
        if not isinstance(patch, dict):
            raise CommandError("Error from server (BadRequest): json: cannot unmarshal "
                               f"{'array' if isinstance(patch, list) else 'value'} into Go value of type "
                               "map[string]interface {}")
        out = merge_patch(current, patch)
    if not isinstance(out, dict):
        raise CommandError(REJECTED)
    name = (current.get("metadata") or {}).get("name", "")
    new_name = (out.get("metadata") or {}).get("name", "") if isinstance(out.get("metadata"), dict) else ""
    if new_name != name:
        raise CommandError(f"Error from server (BadRequest): the name of the object ({new_name}) does not match the "
                           f"name on the URL ({name})")
    return out


@click.command("patch")
@click.argument("args", nargs=-1, shell_complete=complete_args)
@namespace_option
@click.option("-p", "--patch", "patch_text", default=None, help="The patch (JSON or YAML).")
@click.option("--patch-file", default=None, metavar="FILE", help="A file holding the patch.")
@click.option("--type", "patch_type", default="strategic", help="json, merge or strategic (the default).")
@click.option("--dry-run", "dry_run", default="none", flag_value="client", is_flag=False,
              help="none, client or server: admit the change but keep nothing.")
@click.option("-o", "--output", "fmt", default=None, help="yaml, json or name.")
@click.pass_context
@reports_errors
def patch_cmd(ctx, args, namespace, patch_text, patch_file, patch_type, dry_run, fmt):
    """Update fields of objects with a patch: TYPE NAME -p PATCH (kubectl patch)."""
    from .changes import select, write_change

    mode = dry_run_mode(dry_run)
    if patch_type not in PATCH_TYPES:
        raise CommandError(f'error: --type must be one of [{" ".join(PATCH_TYPES)}], not "{patch_type}"')
    if patch_text is not None and patch_file is not None:
        raise CommandError("error: cannot specify --patch and --patch-file together")
    if patch_file is not None:
        try:
            with open(patch_file, encoding="utf-8") as f:
                patch_text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            raise CommandError(f"error: unable to read patch file: {e}") from None
    if not patch_text:
        raise CommandError("error: must specify --patch or --patch-file containing the contents of the patch")
    if fmt not in (None, "yaml", "json", "name"):
        raise CommandError(f'error: unable to match a printer suitable for the output format "{fmt}", allowed '
                           "formats are: json,name,yaml")
    patch = parse_patch(patch_text)
    errors: list[str] = []
    with cluster_of(ctx) as cluster:
        found, errors = select(cluster, list(args), namespace, verb="patch")
        for item in found:
            try:
                new = patched_object(item.resource, item.obj, patch, patch_type)
            except CommandError as e:
                errors.append(str(e))
                continue
            changed = new != item.obj
            stored = item.obj
            if changed:
                written = write_change(cluster, item.obj, new, mode, errors)
                if written is None:
                    continue
                stored = written
            _print(item, stored, fmt, "patched" if changed else "patched (no change)", DRY_RUN_SUFFIX[mode])
    for text in errors:
        sys.stderr.write(text.rstrip("\n") + "\n")
    return 1 if errors else 0


def _is_refusal(e: Exception) -> bool:
    from instancetype.errors import StoreError
    from instancetype.store.base import StateFileError

    return isinstance(e, StoreError) and not isinstance(e, StateFileError)


def _print(f, stored: dict, fmt: str | None, operation: str, suffix: str) -> None:
    if fmt == "json":
        sys.stdout.write(go_json(stored, indent=4) + "\n")
    elif fmt == "yaml":
        from .get import _yaml

        sys.stdout.write(_yaml(stored))
    elif fmt == "name":
        sys.stdout.write(f"{f.resource.qualified_singular}/{f.name}\n")
    else:
        sys.stdout.write(f.printed(operation, suffix))
    sys.stdout.flush()
