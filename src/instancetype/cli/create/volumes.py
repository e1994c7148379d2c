"""The volume and access-credential flags of `create vm` (KubeVirt's vm.go option functions).

Each function takes the VMBuilder and adds to its VM; errors are CLIErrors with
KubeVirt's texts. The param field lists follow KubeVirt's tagged structs in
field order, which decides which bad value is reported first.
"""
from __future__ import annotations

from instancetype.api import names

from . import goparse, params
from .command import rand_suffix
from .params import LIST, QUANTITY, STR, UINT, flag_err

IMPORT = "volume-import"

VOLUME_SOURCE = (("name", STR), ("src", STR), ("bootorder", UINT))
SYSPREP_SOURCE = (("src", STR), ("type", STR))
ACCESS_CREDENTIAL = (("type", STR), ("src", STR), ("method", STR), ("user", STR))
_TAIL = (("size", QUANTITY), ("type", STR), ("name", STR), ("bootorder", UINT))
DATA_VOLUME_SOURCE = (("name", STR), ("src", STR), ("size", QUANTITY), ("type", STR), ("bootorder", UINT))
IMPORT_FIELDS = {
    "blank": _TAIL,
    "gcs": (("secretref", STR), ("url", STR)) + _TAIL,
    "http": (("certconfigmap", STR), ("extraheaders", LIST), ("secretextraheaders", LIST),
             ("secretref", STR), ("url", STR)) + _TAIL,
    "imageio": (("certconfigmap", STR), ("diskid", STR), ("secretref", STR), ("url", STR)) + _TAIL,
    "pvc": DATA_VOLUME_SOURCE,
    "registry": (("certconfigmap", STR), ("imagestream", STR), ("pullmethod", STR), ("secretref", STR),
                 ("url", STR)) + _TAIL,
    "s3": (("certconfigmap", STR), ("secretref", STR), ("url", STR)) + _TAIL,
    "vddk": (("backingfile", STR), ("initimageurl", STR), ("secretref", STR), ("thumbprint", STR),
             ("url", STR), ("uuid", STR)) + _TAIL,
    "snapshot": DATA_VOLUME_SOURCE,
    "ds": DATA_VOLUME_SOURCE,
}
SIZE_OPTIONAL = frozenset(("pvc", "snapshot", "ds"))


def import_help() -> str:
    kinds = {STR: "string", UINT: "uint", QUANTITY: "resource.Quantity", LIST: "[]string"}
    return "\n".join(f"  type {t} - " + ",".join(f"{k}:{kinds[v]}" for k, v in fields)
                     for t, fields in IMPORT_FIELDS.items())


def _check_name(flag: str, name: str) -> None:
    errs = names.label_errors(name)
    if errs:
        raise flag_err(flag, f'invalid name "{name}": ' + ",".join(errs))


def _split_src(flag: str, src: str) -> tuple[str, str]:
    try:
        return params.split_prefixed_name(src)
    except params.ParamError as exc:
        raise flag_err(flag, f"src invalid: {exc}") from None


def with_containerdisks(b) -> None:
    flag = "volume-containerdisk"
    for i, raw in enumerate(b.ctx.value(flag)):
        p = params.parse(flag, raw, VOLUME_SOURCE)
        if not p.get("src"):
            raise flag_err(flag, "src must be specified")
        name = p.get("name") or f"{b.vm['metadata']['name']}-containerdisk-{i}"
        _check_name(flag, name)
        b.volume_should_not_exist(flag, name)
        b.volumes.append({"name": name, "containerDisk": {"image": p["src"]}})
        b.add_disk_with_boot_order(flag, name, p.get("bootorder"))


def with_pvcs(b) -> None:
    flag = "volume-pvc"
    for raw in b.ctx.value(flag):
        p = params.parse(flag, raw, VOLUME_SOURCE)
        if not p.get("src"):
            raise flag_err(flag, "src must be specified")
        namespace, claim = _split_src(flag, p["src"])
        if namespace:
            raise flag_err(flag, f'not allowed to specify namespace of pvc "{claim}"')
        name = p.get("name") or claim
        _check_name(flag, name)
        b.volume_should_not_exist(flag, name)
        b.volumes.append({"name": name, "persistentVolumeClaim": {"claimName": claim}})
        b.add_disk_with_boot_order(flag, name, p.get("bootorder"))


def with_sysprep(b) -> None:
    flag = "volume-sysprep"
    p = params.parse(flag, b.ctx.value(flag), SYSPREP_SOURCE)
    src = p.get("src", "")
    if not src:
        raise flag_err(flag, "src must be specified")
    namespace, name = _split_src(flag, src)
    if namespace:
        raise flag_err(flag, f'not allowed to specify namespace of configmap or secret "{name}"')
    kind = p.get("type") or "configmap"
    b.volume_should_not_exist(flag, "sysprepdisk")
    key = {"configmap": "configMap", "secret": "secret"}.get(goparse.to_lower(kind))
    if key is None:
        raise flag_err(flag, f'invalid sysprep source type "{kind}", supported values are: configmap, secret')
    b.volumes.append({"name": "sysprepdisk", "sysprep": {key: {"name": src}}})


# -- --volume-import --------------------------------------------------------------------

def _url_required(p: dict, what: str) -> None:
    if not p.get("url"):
        raise flag_err(IMPORT, f"url is required with {what} volume source")


def _copy(p: dict, out: dict, *pairs: tuple[str, str]) -> dict:
    # the optional string fields: printed only when non-empty (omitempty / nil pointer)
    for param, field in pairs:
        if p.get(param):
            out[field] = p[param]
    return out


def _namespaced_source(p: dict, kind: str) -> dict:
    # parseVolumeSource: pvc and snapshot clones need `src:<namespace>/<name>`
    if not p.get("src"):
        raise flag_err(IMPORT, "src must be specified")
    namespace, name = _split_src(IMPORT, p["src"])
    if not namespace:
        raise flag_err(IMPORT, f'namespace of {kind} "{name}" must be specified')
    return {"name": name, "namespace": namespace}


def import_spec(kind: str, p: dict) -> dict:
    """The DataVolume spec for one import of type `kind` (KubeVirt's withVolumeSource* functions)."""
    if kind == "blank":
        return {"source": {"blank": {}}}
    if kind == "gcs":
        _url_required(p, "gcs")
        return {"source": {"gcs": _copy(p, {"url": p["url"]}, ("secretref", "secretRef"))}}
    if kind == "http":
        _url_required(p, "http")
        src = _copy(p, {"url": p["url"]}, ("secretref", "secretRef"), ("certconfigmap", "certConfigMap"))
        for param, field in (("extraheaders", "extraHeaders"), ("secretextraheaders", "secretExtraHeaders")):
            if p.get(param):
                src[field] = p[param]
        return {"source": {"http": src}}
    if kind == "imageio":
        if not p.get("url") or not p.get("diskid"):
            raise flag_err(IMPORT, "url and diskid are both required with imageio volume source")
        return {"source": {"imageio": _copy(p, {"url": p["url"], "diskId": p["diskid"]},
                                            ("secretref", "secretRef"), ("certconfigmap", "certConfigMap"))}}
    if kind in ("pvc", "snapshot"):
        return {"source": {kind: _namespaced_source(p, kind)}}
    if kind == "registry":
        pull = p.get("pullmethod", "")
        if pull and pull not in ("pod", "node"):
            raise flag_err(IMPORT, "pullmethod must be set to pod or node")
        if bool(p.get("url")) == bool(p.get("imagestream")):
            raise flag_err(IMPORT, "exactly one of url or imagestream must be defined")
        return {"source": {"registry": _copy(p, {}, ("pullmethod", "pullMethod"), ("certconfigmap", "certConfigMap"),
                                             ("imagestream", "imageStream"), ("url", "url"),
                                             ("secretref", "secretRef"))}}
    if kind == "s3":
        _url_required(p, "s3")
        return {"source": {"s3": _copy(p, {"url": p["url"]}, ("certconfigmap", "certConfigMap"),
                                       ("secretref", "secretRef"))}}
    if kind == "vddk":
        for param in ("url", "uuid", "thumbprint", "secretref", "backingfile"):
            if not p.get(param):
                raise flag_err(IMPORT, f"{param} is required with vddk volume source")
        return {"source": {"vddk": _copy(p, {}, ("url", "url"), ("uuid", "uuid"), ("thumbprint", "thumbprint"),
                                         ("secretref", "secretRef"), ("initimageurl", "initImageURL"),
                                         ("backingfile", "backingFile"))}}
    if kind == "ds":
        if not p.get("src"):
            raise flag_err(IMPORT, "src must be specified")
        namespace, name = _split_src(IMPORT, p["src"])
        ref = {"kind": "DataSource", "name": name}
        if namespace:
            ref["namespace"] = namespace
        return {"sourceRef": ref}
    raise AssertionError(kind)  # pragma: no cover


def with_imported_volumes(b) -> None:
    for raw in b.volume_import:
        try:
            kind = params.get("type", raw)
        except params.ParamError as exc:
            raise flag_err(IMPORT, str(exc)) from None
        if kind is None:
            raise flag_err(IMPORT, "type must be specified")
        fields = IMPORT_FIELDS.get(kind)  # the type is matched case-sensitively
        if fields is None:
            raise flag_err(IMPORT, f'invalid volume import type "{kind}", see help for supported values')
        p = params.parse(IMPORT, raw, fields)
        spec = import_spec(kind, p)
        if "size" not in p and kind not in SIZE_OPTIONAL:
            raise flag_err(IMPORT, "size must be specified")
        name = p["name"] if "name" in p else "imported-volume-" + rand_suffix()
        _check_name(IMPORT, name)
        b.volume_should_not_exist(IMPORT, name)
        storage: dict = {"resources": {}}
        if p.get("size"):
            storage["resources"] = {"requests": {"storage": p["size"]}}
        spec["storage"] = storage
        b.vm["spec"].setdefault("dataVolumeTemplates", []).append({"metadata": {"name": name}, "spec": spec})
        b.volumes.append({"name": name, "dataVolume": {"name": name}})
        b.add_disk_with_boot_order(IMPORT, name, p.get("bootorder"))


# -- --access-cred ----------------------------------------------------------------------

_USER_INVALID = "user cannot be specified with selected access credential type and method"


def _secret(name: str) -> dict:
    return {"secret": {"secretName": name}}


def with_access_credentials(b) -> None:
    flag = "access-cred"
    for raw in b.ctx.value(flag):
        p = params.parse(flag, raw, ACCESS_CREDENTIAL)
        src = p.get("src", "")
        if not src:
            raise flag_err(flag, "src must be specified")
        namespace, name = _split_src(flag, src)
        if namespace:
            raise flag_err(flag, f'not allowed to specify namespace of secret "{name}"')
        kind = p.get("type", "")
        lowered = goparse.to_lower(kind)
        if lowered in ("ssh", ""):
            cred = _ssh_credential(b, p, src)
        elif lowered == "password":
            cred = _password_credential(p, src)
        else:
            raise flag_err(flag, f'invalid access credential type "{kind}", supported values are: ssh, password')
        b.template_spec.setdefault("accessCredentials", []).append(cred)


def _ssh_credential(b, p: dict, src: str) -> dict:
    flags = b.ctx.flags
    method = p.get("method", "")
    m = goparse.to_lower(method)
    if m in ("ga", ""):
        user = p.get("user") or b.ctx.value("user")
        if not user:
            raise flag_err("access-cred", 'user must be specified with access credential ssh method ga '
                           '("--user" flag or param "user")')
        if not flags.changed("ga-manage-ssh"):
            flags.set("ga-manage-ssh", "true")  # let the guest agent write the keys
        propagation = {"qemuGuestAgent": {"users": [user]}}
    elif m in ("nocloud", "configdrive"):
        if p.get("user"):
            raise flag_err("access-cred", _USER_INVALID)
        if not flags.changed("cloud-init"):
            flags.set("cloud-init", m)  # make sure the matching cloud-init volume exists
        current = b.ctx.value("cloud-init")
        if not goparse.equal_fold_ascii(current, m):  # strings.EqualFold
            raise flag_err("access-cred", f"method param and value passed to --cloud-init have to match: "
                           f"{m} vs {current}")
        propagation = {"noCloud": {}} if m == "nocloud" else {"configDrive": {}}
    else:
        raise flag_err("access-cred", f'invalid access credentials ssh method "{method}", supported values are: '
                       "ga, nocloud, configdrive")
    return {"sshPublicKey": {"source": _secret(src), "propagationMethod": propagation}}


def _password_credential(p: dict, src: str) -> dict:
    method = p.get("method", "")
    if method and not goparse.equal_fold_ascii(method, "ga"):  # strings.EqualFold
        raise flag_err("access-cred", f'invalid access credentials password method "{method}", supported values '
                       "are: ga")
    if p.get("user"):
        raise flag_err("access-cred", _USER_INVALID)
    return {"userPassword": {"source": _secret(src), "propagationMethod": {"qemuGuestAgent": {}}}}
