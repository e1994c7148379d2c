"""The catalogue's version and the label keys every layer needs without building the catalogue."""
from __future__ import annotations

VERSION = "v1.7.0"
P = "instancetype.kubevirt.io/"
LABEL_VERSION = P + "common-instancetypes-version"
LABEL_DEPRECATED = P + "deprecated"
LABEL_CLASS = P + "class"
VENDOR = "kubevirt.io"
