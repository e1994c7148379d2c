"""The documents virt-api serves so that the aggregator, kubectl and virtctl find the group
(pkg/virt-api/api.go composeSubresources): root paths, the APIGroupList, the APIGroup, the
version's APIResourceList, `version` and `healthz`. Only v1 is served (KubeVirt also serves the
deprecated v1alpha3), and only the resources this server answers are listed.
"""
from __future__ import annotations

import platform

from instancetype import __version__
from instancetype.api.kinds import KUBEVIRT_VERSION, SUBRESOURCE_GROUP, SUBRESOURCE_VERSION

GROUP, VERSION = SUBRESOURCE_GROUP, SUBRESOURCE_VERSION
GROUP_VERSION = f"{GROUP}/{VERSION}"
PREFIX = f"/apis/{GROUP_VERSION}"

# The subresources answered here (virt-api lists more: vnc, console, migrate...).
_GOARCH = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "ppc64le": "ppc64le", "s390x": "s390x"}
RESOURCES = ("expand-vm-spec", "virtualmachines/start", "virtualmachines/stop", "virtualmachines/restart",
             "virtualmachines/expand-spec", "virtualmachineinstances/pause", "virtualmachineinstances/unpause",
             "virtualmachineinstances/softreboot", "virtualmachines/addvolume", "virtualmachines/removevolume",
             "virtualmachineinstances/addvolume", "virtualmachineinstances/removevolume")


def root_paths() -> dict:
    return {"paths": ["/apis", "/openapi/v2", f"/apis/{GROUP}", PREFIX]}


def api_group() -> dict:
    """subresourceAPIGroup: its `name` is `subresource.kubevirt.io` (sic, KubeVirt; clients read
    only `preferredVersion`)."""
    gv = {"groupVersion": GROUP_VERSION, "version": VERSION}
    return {"kind": "APIGroup", "name": "subresource.kubevirt.io", "versions": [gv], "preferredVersion": gv,
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}]}


def api_group_list() -> dict:
    return {"kind": "APIGroupList", "groups": [api_group()]}


def api_resource_list() -> dict:
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": GROUP_VERSION,
            "resources": [{"name": name, "singularName": "", "namespaced": True, "kind": "", "verbs": None}
                          for name in RESOURCES]}


def version_info() -> dict:
    """client-go/version.Info of the KubeVirt this server answers as (virtctl compares major.minor)."""
    return {"gitVersion": KUBEVIRT_VERSION, "gitCommit": "", "gitTreeState": "clean",
            "buildDate": "1970-01-01T00:00:00Z", "goVersion": f"python{platform.python_version()}",
            "compiler": f"instancetype-{__version__}", "platform": f"{platform.system().lower()}/{_GOARCH.get(platform.machine(), platform.machine())}"}


def healthz(apiserver_version: dict | None, error: str | None = None) -> tuple[int, dict]:
    """healthz.KubeConnectionHealthzFuncFactory: the API server's /version, or why not."""
    if error is not None:
        return 500, {"apiserver": {"connectivity": "failed", "error": error}, "config-resource-version": ""}
    return 200, {"apiserver": {"connectivity": "ok", "version": apiserver_version}, "config-resource-version": ""}
