"""Cloud-init volumes and access credentials (KubeVirt vmi-create-admitter.go: the cloud-init
part of validateVolumes, validateAccessCredentials)."""
from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any

from instancetype.engine.vm_validation._common import _E, INVALID, cause

CLOUD_INIT_USER_MAX_LEN = 2048        # cloudInitUserMaxLen
CLOUD_INIT_NETWORK_MAX_LEN = 2048     # cloudInitNetworkMaxLen


def _b64(text: str) -> bytes | None:
    """base64.StdEncoding.DecodeString: padded standard alphabet; None when it fails.
    (Go ignores embedded newlines, as does the strict decode below once they are removed.)"""
    try:
        return base64.b64decode(text.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return None


def plain_user_data(vol: dict[str, Any]) -> bool:
    """A cloud-init volume with only inline user data within the limit: nothing to refuse."""
    src = vol.get("cloudInitNoCloud")
    if src is None:
        src = vol.get("cloudInitConfigDrive")
    if type(src) is not dict or len(src) != 1:
        return False
    data = src.get("userData")
    return type(data) is str and 0 < len(data) and len(data.encode()) <= CLOUD_INIT_USER_MAX_LEN


def validate_cloud_init_volume(at: str, vol: dict[str, Any]) -> list[Any]:
    """The cloud-init checks of one volume at `at` (`<spec>.volumes[i]`)."""
    if vol.get("cloudInitNoCloud") is not None:
        kind = "cloudInitNoCloud"
    elif vol.get("cloudInitConfigDrive") is not None:
        kind = "cloudInitConfigDrive"
    else:
        return []
    src = (vol[kind] or _E)
    where = f"{at}.{kind}"
    causes = []
    user_count = user_len = net_count = net_len = 0
    if ((src.get("secretRef") or _E).get("name") or ""):     # UserDataSecretRef's JSON name
        user_count += 1
    user_b64 = (src.get("userDataBase64") or "")
    if user_b64:
        user_count += 1
        data = _b64(user_b64)
        if data is None:
            causes.append(cause(INVALID, f"{where}.userDataBase64.{kind}.userDataBase64 is not a valid base64 value.",
                                f"{where}.userDataBase64"))
            data = b""
        user_len = len(data)
    user_data = (src.get("userData") or "")
    if user_data:
        user_count += 1
        user_len = len(user_data.encode())
    if user_count > 1:
        causes.append(cause(INVALID, f"{where} must have only one userdatasource set.", where))
    if user_len > CLOUD_INIT_USER_MAX_LEN:
        causes.append(cause(INVALID, f"{where} userdata exceeds {CLOUD_INIT_USER_MAX_LEN} byte limit. Should use "
                            f"UserDataSecretRef for larger data.", where))
    if ((src.get("networkDataSecretRef") or _E).get("name") or ""):
        net_count += 1
    net_b64 = (src.get("networkDataBase64") or "")
    if net_b64:
        net_count += 1
        data = _b64(net_b64)
        if data is None:
            causes.append(cause(INVALID, f"{where}.networkDataBase64.{kind}.networkDataBase64 is not a valid base64 "
                                f"value.", f"{where}.networkDataBase64"))
            data = b""
        net_len = len(data)
    net_data = (src.get("networkData") or "")
    if net_data:
        net_count += 1
        net_len = len(net_data.encode())
    if net_count > 1:
        causes.append(cause(INVALID, f"{where} must have only one networkdata source set.", where))
    if net_len > CLOUD_INIT_NETWORK_MAX_LEN:
        causes.append(cause(INVALID, f"{where} networkdata exceeds {CLOUD_INIT_NETWORK_MAX_LEN} byte limit. Should "
                            f"use NetworkDataSecretRef for larger data.", where))
    if user_count == 0 and net_count == 0:
        causes.append(cause(INVALID, f"{where} must have at least one userdatasource or one networkdatasource set.",
                            where))
    return causes


def validate_access_credentials(field: str, creds: Sequence[Any], volumes: Sequence[Any] | None) -> list[Any]:
    """validateAccessCredentials: `field` is `<spec>.accessCredentials`."""
    vols = (volumes or ())
    has_no_cloud = any(v.get("cloudInitNoCloud") is not None for v in vols)
    has_config_drive = any(v.get("cloudInitConfigDrive") is not None for v in vols)
    causes = []
    for idx, cred in enumerate(creds):
        at = f"{field}[{idx}]"
        count = 0
        ssh = cred.get("sshPublicKey")
        if ssh is not None:
            ssh = (ssh or _E)
            count += 1
            sources = 1 if (ssh.get("source") or _E).get("secret") is not None else 0
            methods = 0
            method = (ssh.get("propagationMethod") or _E)
            if method.get("noCloud") is not None:
                methods += 1
                if not has_no_cloud:
                    causes.append(cause(INVALID, f"{at} requires a noCloud volume to exist when the noCloud "
                                        f"propagationMethod is in use.", f"{at}.sshPublicKey.propagationMethod"))
            if method.get("configDrive") is not None:
                methods += 1
                if not has_config_drive:
                    causes.append(cause(INVALID, f"{at} requires a configDrive volume to exist when the configDrive "
                                        f"propagationMethod is in use.", f"{at}.sshPublicKey.propagationMethod"))
            if method.get("qemuGuestAgent") is not None:
                if not (method["qemuGuestAgent"] or _E).get("users"):
                    causes.append(cause(INVALID, f"{at} requires at least one user to be present in the users list",
                                        f"{at}.sshPublicKey.propagationMethod.qemuGuestAgent.users"))
                methods += 1
            if sources != 1:
                causes.append(cause(INVALID, f"{at} must have exactly one source set", f"{at}.sshPublicKey.source"))
            if methods != 1:
                causes.append(cause(INVALID, f"{at} must have exactly one propagationMethod set",
                                    f"{at}.sshPublicKey.propagationMethod"))
        pw = cred.get("userPassword")
        if pw is not None:
            pw = (pw or _E)
            count += 1
            if (pw.get("source") or _E).get("secret") is None:
                causes.append(cause(INVALID, f"{at} must have exactly one source set", f"{at}.userPassword.source"))
            if (pw.get("propagationMethod") or _E).get("qemuGuestAgent") is None:
                causes.append(cause(INVALID, f"{at} must have exactly one propagationMethod set",
                                    f"{at}.userPassword.propagationMethod"))
        if count != 1:
            causes.append(cause(INVALID, f"{at} must have exactly one access credential type set", at))
    return causes
