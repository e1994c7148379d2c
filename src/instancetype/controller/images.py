"""Disk images uploaded into the embedded cluster (virtctl image-upload).

An image's bytes live beside the state file, one directory per state file:
`<state file>.images/<namespace>/<name>`, named after the PVC (and DataVolume) they fill. When
the PVC or DataVolume goes, whether deleted itself or collected with its owner or namespace,
the bytes go too, once the deletion is committed.
"""
from __future__ import annotations

import os
from pathlib import Path

IMAGE_KINDS = ("PersistentVolumeClaim", "DataVolume")


def images_dir(state_path: str | os.PathLike) -> Path:
    return Path(f"{state_path}.images")


def image_path(state_path: str | os.PathLike, namespace: str, name: str) -> Path:
    return images_dir(state_path) / namespace / name


def remove_images(state_path: str | os.PathLike, deleted: list[tuple[str, str]]) -> None:
    """Remove the bytes of deleted PVCs and DataVolumes (`(namespace, name)` pairs)."""
    for namespace, name in deleted:
        path = image_path(state_path, namespace, name)
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError:
            continue  # an image we cannot remove is left, never an error for the deletion
        try:
            path.parent.rmdir()
        except OSError:
            pass
