"""Audit of `instancetype create` against KubeVirt v1.9's virtctl source, branch by branch.

Each test names the Go function whose behaviour it pins (pkg/virtctl/create/vm/vm.go,
.../instancetype/instancetype.go, .../preference/preference.go, .../params/params.go,
spf13/pflag, spf13/cobra, apimachinery's validation). The last part fuzzes argument lists
built from the real flag words: nothing may raise, hang or print a traceback; a failure is
exit 1 with nothing on stdout and exactly one error line on stderr (besides virtctl's own
notices); a success prints exactly one manifest.
"""
from __future__ import annotations

import os

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ._create import create, failure, obj, tspec  # noqa: F401

LABEL_REGEX_ERR = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
                   "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
                   "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


def error(*args: str) -> str:
    return failure(*args).splitlines()[-1]


# -- Go strings semantics: strings.EqualFold / strings.ToLower ---------------------------------

def test_run_strategy_is_matched_with_equal_fold():
    # withRunStrategy: strings.EqualFold, which folds LATIN SMALL LETTER LONG S onto `s`
    assert obj("vm", "--name", "x", "--run-strategy", "Alway\u017f")["spec"]["runStrategy"] == "Always"
    assert obj("vm", "--name", "x", "--run-strategy", "rerunonfailure")["spec"]["runStrategy"] == "RerunOnFailure"
    assert error("vm", "--name", "x", "--run-strategy", "Always ") == (
        'failed to parse "--run-strategy" flag: invalid run strategy "Always ", supported values are: '
        "Always, Manual, Halted, Once, RerunOnFailure")


def test_matcher_kind_is_lowered_with_go_to_lower():
    # withInstancetype / withPreference: strings.ToLower maps U+0130 to a plain `i`
    assert error("vm", "--name", "x", "--instancetype", "\u0130T/x") == (
        'failed to parse "--instancetype" flag: invalid instancetype kind "it", supported values are: '
        "virtualmachineinstancetype, virtualmachineclusterinstancetype")
    assert error("vm", "--name", "x", "--preference", "VirtualMachinePreferences/x") == (
        'failed to parse "--preference" flag: invalid preference kind "virtualmachinepreferences", supported '
        "values are: virtualmachinepreference, virtualmachineclusterpreference")
    vm = obj("vm", "--name", "x", "--instancetype", "VIRTUALMACHINEINSTANCETYPE/u1", "--preference",
             "VirtualMachineClusterPreference/p")
    assert vm["spec"]["instancetype"] == {"kind": "virtualmachineinstancetype", "name": "u1"}
    assert vm["spec"]["preference"] == {"kind": "virtualmachineclusterpreference", "name": "p"}
    assert "memory" not in tspec(vm)["domain"]


def test_access_credential_methods_compare_like_go():
    # withAccessCredentialPassword: strings.EqualFold(method, "ga")
    vm = obj("vm", "--name", "x", "--access-cred", "type:PassWord,src:pw,method:Ga")
    assert tspec(vm)["accessCredentials"] == [
        {"userPassword": {"source": {"secret": {"secretName": "pw"}}, "propagationMethod": {"qemuGuestAgent": {}}}}]
    assert error("vm", "--name", "x", "--access-cred", "type:password,src:pw,method:nocloud") == (
        'failed to parse "--access-cred" flag: invalid access credentials password method "nocloud", supported '
        "values are: ga")
    # withAccessCredentialSSHGeneric: --cloud-init given in another case still matches
    vm = obj("vm", "--name", "x", "--cloud-init", "ConfigDrive", "--access-cred", "src:k,method:CONFIGDRIVE")
    assert tspec(vm)["volumes"] == [{"name": "cloudinitdisk", "cloudInitConfigDrive": {"userData": "#cloud-config"}}]
    assert error("vm", "--name", "x", "--cloud-init", "none", "--access-cred", "src:k,method:NoCloud") == (
        'failed to parse "--access-cred" flag: method param and value passed to --cloud-init have to match: '
        "nocloud vs none")


def test_second_access_credential_sees_the_cloud_init_the_first_one_set():
    # withAccessCredentialSSHGeneric sets --cloud-init through cmd.Flags().Set, which marks it changed
    assert error("vm", "--name", "x", "--access-cred", "src:a,method:nocloud", "--access-cred",
                 "src:b,method:configdrive") == (
        'failed to parse "--access-cred" flag: method param and value passed to --cloud-init have to match: '
        "configdrive vs nocloud")


def test_ga_access_credential_turns_on_ga_manage_ssh_unless_given():
    # withAccessCredentialSSHMethodGA: Set(ga-manage-ssh, "true") only when not Changed
    vm = obj("vm", "--name", "x", "--user", "fedora", "--access-cred", "src:k")
    assert tspec(vm)["volumes"][-1]["cloudInitNoCloud"]["userData"] == (
        "#cloud-config\nuser: fedora\nruncmd:\n  - [ setsebool, -P, 'virt_qemu_ga_manage_ssh', 'on' ]")
    vm = obj("vm", "--name", "x", "--ga-manage-ssh=false", "--access-cred", "src:k,user:u")
    assert "volumes" not in tspec(vm)  # only the header: not added without --cloud-init
    assert tspec(vm)["accessCredentials"][0]["sshPublicKey"]["propagationMethod"] == {
        "qemuGuestAgent": {"users": ["u"]}}


# -- pflag --------------------------------------------------------------------------------

def test_unknown_non_ascii_shorthand_prints_its_first_byte():
    # pflag parseSingleShortArg: `%q` of the byte shorthands[0]
    assert error("vm", "--name", "x", "-\u00e9") == "unknown shorthand flag: '\u00c3' in -\u00e9"
    # `-h` (help, a bool) is consumed first, then the next byte fails
    assert error("vm", "-h\u00e9") == "unknown shorthand flag: '\u00c3' in -\u00e9"
    assert error("vm", "-nfoo", "-x") == "unknown shorthand flag: 'x' in -x"


def test_klog_verbosity_flag_uses_go_flag_errors():
    # virtctl adds client-go/log's `-v` (a Go flag.Int) with pflag.PFlagFromGoFlag
    assert error("vm", "--name", "x", "-v", "x") == 'invalid argument "x" for "-v, --v" flag: parse error'
    assert error("vm", "--v=99999999999999999999") == (
        'invalid argument "99999999999999999999" for "-v, --v" flag: value out of range')
    assert obj("vm", "--name", "x", "-v", "0x10")["metadata"] == {"name": "x"}


def test_bad_flag_syntax_and_needs_argument():
    # pflag parseLongArg
    assert error("vm", "---name", "x") == "bad flag syntax: ---name"
    assert error("vm", "--=x") == "bad flag syntax: --=x"
    assert error("vm", "--name") == "flag needs an argument: --name"
    assert error("vm", "-n") == "flag needs an argument: 'n' in -n"


def test_namespace_shorthand_forms():
    assert obj("vm", "--name", "x", "-n=ns")["metadata"] == {"name": "x", "namespace": "ns"}
    assert obj("vm", "--name", "x", "-nns")["metadata"] == {"name": "x", "namespace": "ns"}
    # `-n=` is not the `-f=arg` form (too short): the value is "="
    assert obj("vm", "--name", "x", "-n=")["metadata"] == {"name": "x", "namespace": "="}
    assert obj("vm", "--name", "x", "-n", "")["metadata"] == {"name": "x"}


def test_kubeconfig_user_flag_is_shadowed_by_the_local_one():
    # cobra merges a parent's persistent --user only when the command has none of its own
    vm = obj("vm", "--name", "x", "--user", "u", "--cloud-init", "nocloud")
    assert tspec(vm)["volumes"][0]["cloudInitNoCloud"]["userData"] == "#cloud-config\nuser: u"
    assert obj("preference", "--name", "p", "--user", "u", "--password", "p")["spec"] == {}


# -- cobra order ------------------------------------------------------------------------

def test_positional_argument_before_required_and_groups():
    # cobra execute: ValidateArgs, then ValidateRequiredFlags, then ValidateFlagGroups
    assert error("vm", "x", "--memory", "1Gi", "--instancetype", "u") == 'unknown command "x" for "virtctl create vm"'
    assert error("vm", "--", "--name") == 'unknown command "--name" for "virtctl create vm"'
    assert error("instancetype", "x", "--cpu", "1") == 'required flag(s) "memory" not set'
    # then the groups, then RunE (the memory quantity is parsed in RunE)
    assert error("vm", "--memory", "bad", "--instancetype", "u").startswith("if any flags in the group [memory ")
    assert error("vm", "--memory", "bad", "--user", "u", "--cloud-init-user-data", "x") == (
        "if any flags in the group [cloud-init-user-data user] are set none of the others can be; "
        "[cloud-init-user-data user] were all set")


def test_group_counts_a_flag_set_to_its_default():
    # pflag marks a flag Changed on any Set, even to its default value
    assert error("vm", "--infer-preference=true", "--preference", "p") == (
        "if any flags in the group [preference infer-preference infer-preference-from] are set none of the "
        "others can be; [infer-preference preference] were all set")


# -- params -------------------------------------------------------------------------------

PARSE_UINT = 'failed to parse "{}" flag: failed to parse param "bootorder": strconv.ParseUint: parsing "{}": {}'


@pytest.mark.parametrize("flag, params, message", [
    # params.apply walks the struct fields in order: dataVolumeSourceBlank is size, type, name, bootorder
    ("--volume-import", "bootorder:x,size:y,type:blank",
     'failed to parse "--volume-import" flag: failed to parse param "size": quantities must match the '
     "regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    # volumeSource is name, src, bootorder
    ("--volume-pvc", "bootorder:-1,src:a", PARSE_UINT.format("--volume-pvc", "-1", "invalid syntax")),
    ("--volume-pvc", "bootorder:4294967296,src:a", PARSE_UINT.format("--volume-pvc", "4294967296", "value out of range")),
    # bootorder is base 10 (unlike --cpu, which is base 0)
    ("--volume-containerdisk", "src:i,bootorder:0x1", PARSE_UINT.format("--volume-containerdisk", "0x1", "invalid syntax")),
])
def test_param_field_order_decides_the_reported_error(flag, params, message):
    assert error("vm", flag, params) == message


def test_params_are_checked_before_the_source_specific_rules():
    # withVolumeSourceHTTP: params.Map (unknown keys) before `url is required`
    assert error("vm", "--volume-import", "type:http,size:1Gi,src:x") == (
        'failed to parse "--volume-import" flag: unknown param(s): src:x')
    assert error("vm", "--volume-import", "type:http,size:1Gi") == (
        'failed to parse "--volume-import" flag: url is required with http volume source')
    # the source's own rule comes before the missing size (withImportedVolume)
    assert error("vm", "--volume-import", "type:gcs") == (
        'failed to parse "--volume-import" flag: url is required with gcs volume source')
    assert error("vm", "--volume-import", "type:gcs,url:gs://b/o") == (
        'failed to parse "--volume-import" flag: size must be specified')
    # the type is matched case-sensitively
    assert error("vm", "--volume-import", "type:Blank,size:1Gi") == (
        'failed to parse "--volume-import" flag: invalid volume import type "Blank", see help for supported values')


def test_vddk_requirements_in_order():
    base = "type:vddk,size:1Gi"
    msgs = []
    for extra in ("", ",url:u", ",url:u,uuid:i", ",url:u,uuid:i,thumbprint:t", ",url:u,uuid:i,thumbprint:t,secretref:s"):
        msgs.append(error("vm", "--volume-import", base + extra).split(": ", 1)[1])
    assert msgs == [f"{p} is required with vddk volume source"
                    for p in ("url", "uuid", "thumbprint", "secretref", "backingfile")]
    vm = obj("vm", "--name", "x", "--volume-import",
             base + ",url:u,uuid:i,thumbprint:t,secretref:s,backingfile:b,initimageurl:img,name:d")
    assert vm["spec"]["dataVolumeTemplates"][0]["spec"]["source"] == {"vddk": {
        "url": "u", "uuid": "i", "thumbprint": "t", "secretRef": "s", "backingFile": "b", "initImageURL": "img"}}


def test_http_headers_are_split_at_semicolons():
    # params.apply: a []string field is strings.Split(value, ";"); an empty value is [""]
    vm = obj("vm", "--name", "x", "--volume-import",
             "type:http,url:http://a,size:1Gi,name:d,extraheaders:A: 1;B: 2,secretextraheaders:")
    assert vm["spec"]["dataVolumeTemplates"][0]["spec"]["source"]["http"] == {
        "url": "http://a", "extraHeaders": ["A: 1", "B: 2"], "secretExtraHeaders": [""]}


def test_registry_rules():
    # withVolumeSourceRegistry: pullmethod first, then exactly one of url / imagestream
    assert error("vm", "--volume-import", "type:registry,pullmethod:Pod,size:1Gi") == (
        'failed to parse "--volume-import" flag: pullmethod must be set to pod or node')
    vm = obj("vm", "--name", "x", "--volume-import", "type:registry,imagestream:is,pullmethod:node,size:1Gi,name:d")
    assert vm["spec"]["dataVolumeTemplates"][0]["spec"]["source"] == {
        "registry": {"imageStream": "is", "pullMethod": "node"}}


def test_import_names():
    # withImportedVolume: an explicit empty name is validated, not replaced
    assert error("vm", "--volume-import", "type:blank,size:1Gi,name:") == (
        f'failed to parse "--volume-import" flag: invalid name "": {LABEL_REGEX_ERR}')
    # the name check comes before the duplicate check (createDataVolume)
    assert error("vm", "--volume-pvc", "src:a", "--volume-import", "type:blank,size:1Gi,name:A") == (
        f'failed to parse "--volume-import" flag: invalid name "A": {LABEL_REGEX_ERR}')
    assert error("vm", "--volume-pvc", "src:a", "--volume-import", "type:blank,size:1Gi,name:a") == (
        'failed to parse "--volume-import" flag: there is already a volume with name "a"')


def test_volume_name_length_counts_bytes():
    # validation.IsDNS1123Label: len() of a Go string is its byte count
    name = "\u00e9" * 40
    assert error("vm", "--name", "x", "--volume-containerdisk", f"src:i,name:{name}") == (
        f'failed to parse "--volume-containerdisk" flag: invalid name "{name}": must be no more than 63 '
        f"characters,{LABEL_REGEX_ERR}")
    assert error("vm", "--name", "x", "--volume-pvc", "src:" + "a" * 64) == (
        f'failed to parse "--volume-pvc" flag: invalid name "{"a" * 64}": must be no more than 63 characters')


def test_pvc_and_sysprep_sources():
    assert error("vm", "--volume-pvc", "src:ns/claim") == (
        'failed to parse "--volume-pvc" flag: not allowed to specify namespace of pvc "claim"')
    assert error("vm", "--volume-pvc", "src:ns/") == 'failed to parse "--volume-pvc" flag: src invalid: name cannot be empty'
    # withSysprepVolume: the duplicate check comes before the type check
    assert error("vm", "--volume-pvc", "src:sysprepdisk", "--volume-sysprep", "src:cm,type:bad") == (
        'failed to parse "--volume-sysprep" flag: there is already a volume with name "sysprepdisk"')
    vm = obj("vm", "--name", "x", "--volume-sysprep", "src:s,type:SeCrEt")
    assert tspec(vm)["volumes"] == [{"name": "sysprepdisk", "sysprep": {"secret": {"name": "s"}}}]


def test_deprecated_alias_type_is_overridden_and_errors_name_volume_import():
    # aliasToVolumeImport prepends "type:<t>," so a later type: param wins (map overwrite in params.split)
    vm = obj("vm", "--name", "x", "--volume-blank", "type:pvc,src:ns/c,name:d")
    assert vm["spec"]["dataVolumeTemplates"][0]["spec"]["source"] == {"pvc": {"name": "c", "namespace": "ns"}}
    assert error("vm", "--volume-clone-pvc", "src:c,name:d") == (
        'failed to parse "--volume-import" flag: namespace of pvc "c" must be specified')
    assert error("vm", "--volume-datasource", "bad") == (
        'failed to parse "--volume-import" flag: params need to have at least one colon: bad')


def test_datasource_namespace_is_optional():
    vm = obj("vm", "--name", "x", "--volume-import", "type:ds,src:ns/d,name:a", "--volume-import",
             "type:ds,src:d,name:b,size:0.5Ti")
    dvts = vm["spec"]["dataVolumeTemplates"]
    # createDataVolume: Storage is an empty StorageSpec, whose Resources struct always prints
    assert dvts[0]["spec"] == {"sourceRef": {"kind": "DataSource", "name": "d", "namespace": "ns"},
                               "storage": {"resources": {}}}
    assert dvts[1]["spec"]["storage"] == {"resources": {"requests": {"storage": "512Gi"}}}


# -- cloud-init, inference ------------------------------------------------------------------

def test_cloud_init_disk_name_taken(tmp_path):
    assert error("vm", "--volume-pvc", "src:cloudinitdisk", "--user", "u") == (
        'there is already a volume with name "cloudinitdisk"')
    # checked before the data source type, even for `none`
    assert error("vm", "--volume-pvc", "src:cloudinitdisk", "--cloud-init", "none") == (
        'there is already a volume with name "cloudinitdisk"')


def test_password_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pw").write_bytes(b"\xc2\xa0 s3cret\r\n\x85")
    (tmp_path / "empty").write_text("  \n")
    (tmp_path / "dir").mkdir()
    vm = obj("vm", "--name", "x", "--password-file", "pw")
    assert tspec(vm)["volumes"][0]["cloudInitNoCloud"]["userData"] == (
        "#cloud-config\npassword: s3cret\r\n\ufffd\nchpasswd: { expire: False }")
    # an empty password adds nothing, so only the header is left: no volume
    assert "volumes" not in tspec(obj("vm", "--name", "x", "--password-file", "empty"))
    assert error("vm", "--password-file", "dir") == 'failed to parse "--password-file" flag: read dir: is a directory'
    # with --cloud-init none the file is never read
    assert "volumes" not in tspec(obj("vm", "--name", "x", "--cloud-init", "none", "--password-file", "missing"))


def test_inference_sees_sysprep_and_cloud_init_volumes():
    # inferFromVolume runs after cloudInitConfig; a sysprep volume is a valid first volume for nothing
    assert error("vm", "--volume-sysprep", "src:cm", "--infer-preference") == (
        "inference of instancetype or preference works only with datasources, datavolumes or pvcs")
    # implicit inference is silent and keeps the memory
    vm = obj("vm", "--name", "x", "--volume-sysprep", "src:cm", "--volume-pvc", "src:p,bootorder:1")
    assert vm["spec"]["instancetype"] == {"inferFromVolume": "p", "inferFromVolumeFailurePolicy": "Ignore"}
    assert tspec(vm)["domain"]["memory"] == {"guest": "512Mi"}


def test_explicit_inference_of_one_kind_only():
    vm = obj("vm", "--name", "x", "--volume-pvc", "src:p", "--infer-instancetype-from", "p")
    assert vm["spec"]["instancetype"] == {"inferFromVolume": "p"}
    assert vm["spec"]["preference"] == {"inferFromVolume": "p", "inferFromVolumeFailurePolicy": "Ignore"}
    assert "memory" not in tspec(vm)["domain"]
    # --memory switches instancetype inference off; the preference is still inferred
    vm = obj("vm", "--name", "x", "--volume-pvc", "src:p", "--memory", "1Gi")
    assert "instancetype" not in vm["spec"] and tspec(vm)["domain"]["memory"] == {"guest": "1Gi"}
    assert vm["spec"]["preference"]["inferFromVolume"] == "p"
    # --infer-instancetype=false is explicit but off
    vm = obj("vm", "--name", "x", "--volume-pvc", "src:p", "--infer-instancetype=false")
    assert "instancetype" not in vm["spec"]


def test_lowest_boot_order_wins_for_inference():
    vm = obj("vm", "--name", "x", "--volume-pvc", "src:a,bootorder:7", "--volume-import",
             "type:snapshot,src:ns/s,name:b,bootorder:3", "--volume-containerdisk", "src:i,bootorder:9")
    assert vm["spec"]["instancetype"]["inferFromVolume"] == "b"
    assert [d["name"] for d in tspec(vm)["domain"]["devices"]["disks"]] == ["x-containerdisk-0", "a", "b"]


# -- instancetype / preference ----------------------------------------------------------------

def test_instancetype_checks_in_order():
    # validateFlags: the memory (no prefix) before the cpu, both before the devices
    assert error("instancetype", "--cpu", "0", "--memory", "x", "--gpu", "bad") == (
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    assert error("instancetype", "--cpu", "0", "--memory", "1Gi", "--gpu", "bad") == (
        "cpu value must be greater than zero")
    assert error("instancetype", "--cpu", "4294967296", "--memory", "1Gi") == (
        'invalid argument "4294967296" for "--cpu" flag: strconv.ParseUint: parsing "4294967296": value out of range')
    it = obj("instancetype", "--name", "i", "--cpu", "0x10", "--memory", "+1Gi", "-n", "ns", "--namespaced=false")
    assert it == {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
                  "metadata": {"name": "i", "namespace": "ns"}, "spec": {"cpu": {"guest": 16},
                                                                       "memory": {"guest": "+1Gi"}}}


def test_instancetype_devices():
    it = obj("instancetype", "--name", "i", "--cpu", "1", "--memory", "1Gi", "--gpu", "name:g,devicename:d",
             "--gpu", "devicename:e,name:h", "--hostdevice", "name:n:1,devicename:x/y")
    assert it["spec"]["gpus"] == [{"name": "g", "deviceName": "d"}, {"name": "h", "deviceName": "e"}]
    assert it["spec"]["hostDevices"] == [{"name": "n:1", "deviceName": "x/y"}]
    assert error("instancetype", "--cpu", "1", "--memory", "1Gi", "--hostdevice", "name:n,devicename:") == (
        'failed to parse "--hostdevice" flag: deviceName must be specified')
    assert error("instancetype", "--cpu", "1", "--memory", "1Gi", "--gpu", "Name:n,devicename:d") == (
        'failed to parse "--gpu" flag: unknown param(s): Name:n')


def test_preference_topologies():
    for topology in ("sockets", "cores", "threads", "spread", "any", "preferSockets", "preferCores",
                     "preferThreads", "preferSpread", "preferAny"):
        assert obj("preference", "--name", "p", "--cpu-topology", topology)["spec"] == {
            "cpu": {"preferredCPUTopology": topology}}
    assert error("preference", "--cpu-topology", "Any") == (
        'failed to parse "--cpu-topology" flag: CPU topology must have a value of sockets, cores, threads or spread')


# -- fuzzing ----------------------------------------------------------------------------------

NOTICES = ("Flag --volume-", "WARNING: --password-file:", "WARNING: --cloud-init:")

_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\x85\u2028\u2029"),
                max_size=8)
_NOISE = ["", "x", "-", "--", "-x", "--unknown", "---x", "-hn", "-n", "ns", "-v", "3", "extra", "a/b/c", "-1Gi"]
_VOLS = ["d1", "d2", "d3", "cloudinitdisk", "sysprepdisk", "UPPER", "a.b", "", "x-containerdisk-0"]
_NUMS = ["0", "1", "2", "3", "-1", "x", "", "4294967295", "4294967296", "01", "0x1"]
_QTY = ["1Gi", "0.5Ti", "5000M", "Gi", "1e", "--1Gi", "+1Gi", "", "1.5.5", "512Mi", "0", "1e9", "100m"]


def _params(*pairs) -> st.SearchStrategy:
    """`key:value,...` lists: mostly the flag's own keys with fitting values, sometimes junk."""
    kv = st.one_of(*[st.tuples(st.just(k), st.sampled_from(v)) for k, v in pairs],
                   st.tuples(st.sampled_from(["Name", "foo", "", "bootorder", "size"]), st.sampled_from(_NUMS + _VOLS)))
    good = st.lists(kv, min_size=1, max_size=6).map(lambda kvs: ",".join(f"{k}:{v}" for k, v in kvs))
    return st.one_of(good, good, good, st.sampled_from(["", ",", "x", "a:b,", "src"]))


_SRC = ["img", "ns/c", "c", "a/b/c", "ns/", "", "cloudinitdisk", "p1", "p2"]
_VOLUME = _params(("name", _VOLS), ("src", _SRC), ("bootorder", _NUMS))
_IMPORT = _params(("type", ["blank", "gcs", "http", "imageio", "pvc", "registry", "s3", "vddk", "snapshot", "ds",
                            "Blank", ""]),
                  ("name", _VOLS), ("src", _SRC), ("size", _QTY), ("bootorder", _NUMS),
                  ("url", ["u", "http://h/p", ""]), ("secretref", ["s", ""]), ("certconfigmap", ["c", ""]),
                  ("extraheaders", ["A: 1;B", ""]), ("secretextraheaders", ["s1;s2", ""]), ("diskid", ["d", ""]),
                  ("imagestream", ["is", ""]), ("pullmethod", ["pod", "node", "Pod", ""]),
                  ("backingfile", ["b"]), ("initimageurl", ["i"]), ("thumbprint", ["t"]), ("uuid", ["u"]))
_BOOL = ["true", "false", "1", "0", "T", "yes", ""]
VM_VALUES = {
    "name": st.sampled_from(["vm", "my-vm", "UPPER", "a.b", "", "x" * 60]),
    "run-strategy": st.sampled_from(["Always", "manual", "HALTED", "Once", "rerunonfailure", "Never", ""]),
    "termination-grace-period": st.sampled_from(_NUMS + ["9223372036854775808", "1.5"]),
    "memory": st.sampled_from(_QTY),
    "instancetype": st.sampled_from(["u1", "virtualmachineinstancetype/u1", "VirtualMachineClusterInstancetype/u",
                                     "bad/u", "a/b/c", "k/", ""]),
    "preference": st.sampled_from(["p", "virtualmachinepreference/p", "VIRTUALMACHINECLUSTERPREFERENCE/p",
                                   "virtualmachinepreferences/p", "//", ""]),
    "infer-instancetype": None, "infer-preference": None, "ga-manage-ssh": None,
    "infer-instancetype-from": st.sampled_from(_VOLS + ["p1", "c", "missing"]),
    "infer-preference-from": st.sampled_from(_VOLS + ["p1", "c", "missing"]),
    "volume-containerdisk": _VOLUME, "volume-pvc": _VOLUME,
    "volume-import": _IMPORT, "volume-datasource": _IMPORT, "volume-clone-pvc": _IMPORT, "volume-blank": _IMPORT,
    "volume-sysprep": _params(("src", _SRC), ("type", ["configmap", "Secret", "volume", ""])),
    "user": st.sampled_from(["fedora", "", "a b"]),
    "password-file": st.sampled_from(["pw.txt", "empty.txt", "missing.txt", "dir", ""]),
    "ssh-key": st.sampled_from(["ssh-rsa AAAA", "a,b", '"a,b",c', 'a"b', "", '"a']),
    "access-cred": _params(("type", ["ssh", "password", "PASSWORD", "bad", ""]), ("src", _SRC),
                           ("method", ["ga", "nocloud", "ConfigDrive", "bad", ""]), ("user", ["u", ""])),
    "cloud-init": st.sampled_from(["nocloud", "ConfigDrive", "none", "NONE", "cloudinit", ""]),
    "cloud-init-user-data": st.sampled_from(["I2Nsb3VkLWNvbmZpZwo=", ""]),
    "cloud-init-network-data": st.sampled_from(["bmV0d29yaw==", ""]),
}
_DEVICE = _params(("name", ["g", "", "n:1"]), ("devicename", ["nvidia.com/A100", ""]))
IT_VALUES = {
    "name": st.sampled_from(["u1.small", "", "x"]), "cpu": st.sampled_from(_NUMS + ["0x10", "1.5"]),
    "memory": st.sampled_from(_QTY), "iothreadspolicy": st.sampled_from(["auto", "shared", "SHARED", "none", ""]),
    "namespaced": None, "gpu": _DEVICE, "hostdevice": _DEVICE,
}
PREF_VALUES = {
    "namespaced": None, "name": st.sampled_from(["p", "", "windows.11"]),
    "volume-storage-class": st.sampled_from(["local", ""]), "machine-type": st.sampled_from(["q35", ""]),
    "cpu-topology": st.sampled_from(["sockets", "cores", "threads", "spread", "any", "preferAny", "Sockets", "",
                                     "numa"]),
}
GLOBAL_VALUES = {"namespace": st.sampled_from(["ns", "", "my-namespace"])}


def _word(values: dict) -> st.SearchStrategy:
    words = []
    for name, value in {**values, **GLOBAL_VALUES}.items():
        if value is None:  # a bool: bare, or only with `=`
            words.append(st.sampled_from([[f"--{name}"]] + [[f"--{name}={b}"] for b in _BOOL]))
        else:
            words.append(st.tuples(st.just(name), value).map(lambda nv: [f"--{nv[0]}", nv[1]]))
            words.append(st.tuples(st.just(name), value).map(lambda nv: [f"--{nv[0]}={nv[1]}"]))
    noise = st.one_of(st.sampled_from(_NOISE), _TEXT).map(lambda w: [w])
    return st.one_of(st.one_of(*words), st.one_of(*words), st.one_of(*words), st.one_of(*words), noise)


def _argv(sub: str, values: dict, prefix: list[str]):
    return st.lists(_word(values), max_size=9).map(lambda words: [sub, *prefix] + [w for ws in words for w in ws])


ARGV = st.one_of(
    _argv("vm", VM_VALUES, ["--name", "vm"]), _argv("vm", VM_VALUES, []),
    _argv("instancetype", IT_VALUES, ["--cpu", "2", "--memory", "1Gi"]), _argv("instancetype", IT_VALUES, []),
    _argv("preference", PREF_VALUES, []),
)
KINDS = {"VirtualMachine", "VirtualMachineInstancetype", "VirtualMachineClusterInstancetype",
         "VirtualMachinePreference", "VirtualMachineClusterPreference"}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("fuzz")
    (d / "pw.txt").write_text("secret\n")
    (d / "empty.txt").write_text("")
    (d / "dir").mkdir()
    return d


def check_run(argv: list[str]) -> None:
    status, out, err = create(*argv)
    assert "Traceback" not in err
    if status == 1:
        assert out == ""
        lines = [ln for ln in err.split("\n") if ln and not ln.startswith(NOTICES)]
        assert err.endswith("\n") and len(lines) == 1, (argv, err)
        return
    assert status == 0, (argv, status, err)
    if "\nUsage:\n" in out:  # help text, asked for with -h or --help
        assert any(a in ("-h", "-hn", "--help") for a in argv), argv
        return
    docs = [d for d in yaml.safe_load_all(out) if d is not None]
    assert len(docs) == 1, (argv, out)
    doc = docs[0]
    assert doc["kind"] in KINDS and isinstance(doc["metadata"], dict) and isinstance(doc["spec"], dict)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(argv=ARGV)
def test_fuzz_argument_lists(argv, workdir):
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        check_run(argv)
    finally:
        os.chdir(cwd)
