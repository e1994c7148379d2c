"""`instancetype create`: behaviour the conformance file does not pin (random names, help,
stderr notices, cloud-init text, inference choices, imports kept small)."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest
import yaml

from ._create import create, failure, obj, tspec  # noqa: F401

RAND = "[bcdfghjklmnpqrstvwxz2456789]{5}"


def error(*args: str) -> str:
    return failure(*args)


# -- names ------------------------------------------------------------------------------------

def test_random_names():
    vm = obj("vm", "--volume-containerdisk", "src:img", "--volume-import", "type:blank,size:1Gi")
    name = vm["metadata"]["name"]
    assert re.fullmatch("vm-" + RAND, name)
    vols = [v["name"] for v in tspec(vm)["volumes"]]
    assert vols[0] == f"{name}-containerdisk-0"
    assert re.fullmatch("imported-volume-" + RAND, vols[1])
    assert re.fullmatch("clusterinstancetype-" + RAND, obj("instancetype", "--cpu", "1", "--memory", "1Gi")
                        ["metadata"]["name"])
    assert re.fullmatch("instancetype-" + RAND, obj("instancetype", "--cpu", "1", "--memory", "1Gi",
                                                    "--namespaced")["metadata"]["name"])
    assert re.fullmatch("clusterpreference-" + RAND, obj("preference")["metadata"]["name"])
    assert re.fullmatch("preference-" + RAND, obj("preference", "-n", "ns")["metadata"]["name"])


def test_empty_name_is_random_for_a_vm_but_empty_for_instancetypes_and_preferences():
    assert obj("vm", "--name", "")["metadata"]["name"].startswith("vm-")
    assert "name" not in obj("instancetype", "--name=", "--cpu=1", "--memory=1Gi").get("metadata", {})
    assert "name" not in obj("preference", "--name", "").get("metadata", {})


def test_namespace_override():
    vm = obj("vm", "--name", "x", "--namespace", "ns")
    assert vm["metadata"] == {"name": "x", "namespace": "ns"}
    assert "namespace" not in obj("vm", "--name", "x", "-n", "")["metadata"]
    it = obj("instancetype", "--name", "a", "--cpu", "1", "--memory", "1Gi", "--namespaced=false", "-nns")
    assert it["kind"] == "VirtualMachineInstancetype" and it["metadata"]["namespace"] == "ns"
    pref = obj("preference", "--name", "p", "--namespaced")
    assert pref["kind"] == "VirtualMachinePreference" and "namespace" not in pref["metadata"]


# -- command line -------------------------------------------------------------------------------

@pytest.mark.parametrize("sub", ["vm", "instancetype", "preference"])
def test_help(sub):
    status, out, err = create(sub, "--help")
    assert status == 0 and err == ""
    assert "Usage:" in out and f"instancetype create {sub} [flags]" in out and "--name string" in out
    assert create(sub, "-h")[1] == out


def test_create_without_subcommand_prints_its_help():
    status, out, _ = create()
    assert status == 0 and "Available Commands:" in out and "instancetype" in out
    assert error("--bogus") == "unknown flag: --bogus"


def test_subcommand_after_global_flags():
    assert obj("-n", "ns", "preference", "--name", "p")["metadata"] == {"name": "p", "namespace": "ns"}


def test_errors_in_cobra_order():
    # flags first (in command-line order), then positionals, then required flags, then groups
    assert error("vm", "extra", "--bogus") == "unknown flag: --bogus"
    assert error("vm", "--infer-preference", "false") == 'unknown command "false" for "virtctl create vm"'
    assert error("instancetype", "--memory", "1Gi") == 'required flag(s) "cpu" not set'
    assert error("vm", "--user=u", "--cloud-init-user-data=x", "--memory=1Gi", "--instancetype=i") == (
        "if any flags in the group [cloud-init-user-data user] are set none of the others can be; "
        "[cloud-init-user-data user] were all set")
    # instancetype: positionals are ignored; memory is checked before the CPU count
    assert error("instancetype", "x", "--cpu=0", "--memory=1Q") == \
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    assert error("instancetype", "--cpu=0", "--memory=1Gi") == "cpu value must be greater than zero"


def test_deprecated_aliases_notice_on_stderr_and_prepend():
    status, out, err = create("vm", "--name", "x", "--volume-import", "type:blank,size:1Gi,name:c",
                              "--volume-blank", "size:1Gi,name:a", "--volume-blank", "size:1Gi,name:b",
                              "--volume-clone-pvc", "src:ns/p,name:d")
    assert status == 0
    assert err.splitlines() == ["Flag --volume-clone-pvc has been deprecated, use flag --volume-import instead",
                                "Flag --volume-blank has been deprecated, use flag --volume-import instead"]
    vm = yaml.safe_load(out)
    assert [d["metadata"]["name"] for d in vm["spec"]["dataVolumeTemplates"]] == ["b", "a", "d", "c"]


# -- cloud-init and access credentials ---------------------------------------------------------------

def test_generated_user_data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pw").write_text("  s3cret \n")
    vm = obj("vm", "--name", "x", "--user", "fedora", "--password-file", "pw", "--ssh-key", "k1,k2",
             "--access-cred", "src:keys")
    user_data = tspec(vm)["volumes"][-1]["cloudInitNoCloud"]["userData"]
    assert user_data == ("#cloud-config\nuser: fedora\npassword: s3cret\nchpasswd: { expire: False }\n"
                         "ssh_authorized_keys:\n  - k1\n  - k2\nruncmd:\n"
                         "  - [ setsebool, -P, 'virt_qemu_ga_manage_ssh', 'on' ]")
    cred = tspec(vm)["accessCredentials"][0]["sshPublicKey"]
    assert cred == {"source": {"secret": {"secretName": "keys"}},
                    "propagationMethod": {"qemuGuestAgent": {"users": ["fedora"]}}}
    assert error("vm", "--password-file", "missing").splitlines() == [
        "WARNING: --password-file: The password is stored in cleartext in the VM definition!",
        'failed to parse "--password-file" flag: open missing: no such file or directory']


def test_header_only_cloud_init_is_skipped_unless_asked_for():
    assert "volumes" not in tspec(obj("vm", "--name", "x", "--ga-manage-ssh=false"))
    vm = obj("vm", "--name", "x", "--cloud-init", "ConfigDrive")
    assert tspec(vm)["volumes"] == [{"name": "cloudinitdisk", "cloudInitConfigDrive": {"userData": "#cloud-config"}}]
    vm = obj("vm", "--name", "x", "--access-cred", "src:k,method:nocloud")
    assert tspec(vm)["volumes"][0]["cloudInitNoCloud"] == {"userData": "#cloud-config"}
    assert error("vm", "--cloud-init", "none", "--access-cred", "src:k,method:nocloud") == (
        'failed to parse "--access-cred" flag: method param and value passed to --cloud-init have to match: '
        "nocloud vs none")


# -- inference --------------------------------------------------------------------------------

def test_inference_volume_choice():
    vm = obj("vm", "--name", "x", "--volume-pvc", "src:a", "--volume-pvc", "src:b,bootorder:1")
    assert vm["spec"]["instancetype"] == {"inferFromVolume": "b", "inferFromVolumeFailurePolicy": "Ignore"}
    assert tspec(vm)["domain"]["memory"] == {"guest": "512Mi"}
    vm = obj("vm", "--name", "x", "--volume-pvc", "src:a", "--infer-instancetype", "--infer-preference-from", "a")
    assert vm["spec"]["instancetype"] == {"inferFromVolume": "a"} and "memory" not in tspec(vm)["domain"]
    assert vm["spec"]["preference"] == {"inferFromVolume": "a"}
    # implicit inference never fails; explicit does, and cloudinitdisk counts as a volume
    assert "instancetype" not in obj("vm", "--name", "x", "--user", "u")["spec"]
    assert error("vm", "--user", "u", "--infer-instancetype") == \
        "inference of instancetype or preference works only with datasources, datavolumes or pvcs"


# -- process and imports ------------------------------------------------------------------------

def test_command_line_entry_and_light_imports():
    code = ("import sys\nfrom instancetype.cli.create import run\nrun(['vm', '--name', 'x'])\n"
            "heavy = [m for m in sys.modules if m.split('.')[0] == 'click' or "
            "m.startswith(('instancetype.engine', 'instancetype.store', 'instancetype.controller'))]\n"
            "print(heavy, file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr.strip() == "[]", proc.stderr
    proc = subprocess.run([sys.executable, "-m", "instancetype", "create", "vm", "--name", "x", "-x"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and proc.stderr == "error: unknown shorthand flag: 'x' in -x\n" and proc.stdout == ""
