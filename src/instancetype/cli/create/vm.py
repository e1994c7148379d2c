"""`create vm`: a VirtualMachine manifest, as KubeVirt v1.9's virtctl builds it
(pkg/virtctl/create/vm/vm.go). Volume sources are in `volumes.py`.

The option functions run in a fixed order for the flags that were set:
run-strategy, instancetype, preference, containerdisk, pvc, the deprecated
datasource/clone-pvc/blank aliases (each prepends to the import list),
import, sysprep, access-cred; then cloud-init; then inference (so the
cloud-init and sysprep disks count as volumes for inference).
"""
from __future__ import annotations

from instancetype.errors import CLIError

from . import goparse, params, volumes
from .command import Command, Context, rand_suffix
from .flags import BOOL, INT64, STRING, STRING_ARRAY, STRING_SLICE, Flag
from .params import flag_err

RUN_STRATEGIES = ("Always", "Manual", "Halted", "Once", "RerunOnFailure")
CLOUD_INIT_DISK = "cloudinitdisk"
CLOUD_INIT_HEADER = "#cloud-config"
NOCLOUD, CONFIGDRIVE, NONE = "nocloud", "configdrive", "none"

_CLOUD_INIT_FLAGS = ("user", "password-file", "ssh-key", "ga-manage-ssh", "cloud-init",
                     "cloud-init-user-data", "cloud-init-network-data")


def make_flags() -> list[Flag]:
    vs = "Supported parameters: name:string,src:string,bootorder:uint"
    return [
        Flag("name", STRING, usage="Specify the name of the VM."),
        Flag("run-strategy", STRING, "Always", usage="Specify the RunStrategy of the VM."),
        Flag("termination-grace-period", INT64, 180, usage="Specify the termination grace period of the VM."),
        Flag("memory", STRING, "512Mi", usage="Specify the memory of the VM."),
        Flag("instancetype", STRING, usage="Specify the Instance Type of the VM. Mutually exclusive with "
             "instancetype inference flags."),
        Flag("infer-instancetype", BOOL, True, usage="Specify if the Instance Type of the VM should be inferred "
             "from the first boot disk. Mutually exclusive with --infer-instancetype-from."),
        Flag("infer-instancetype-from", STRING, usage="Specify the volume to infer the Instance Type of the VM "
             "from. Mutually exclusive with --infer-instancetype."),
        Flag("preference", STRING, usage="Specify the Preference of the VM. Mutually exclusive with preference "
             "inference flags."),
        Flag("infer-preference", BOOL, True, usage="Specify if the Preference of the VM should be inferred from "
             "the first boot disk. Mutually exclusive with --infer-preference-from."),
        Flag("infer-preference-from", STRING, usage="Specify the volume to infer the Preference of the VM from. "
             "Mutually exclusive with --infer-preference."),
        Flag("volume-containerdisk", STRING_ARRAY, [], usage="Specify a containerdisk to be used by the VM. Can be "
             "provided multiple times.\n" + vs),
        Flag("volume-pvc", STRING_ARRAY, [], usage="Specify a PVCs to be used by the VM. Can be provided multiple "
             "times.\n" + vs),
        Flag("volume-import", STRING_ARRAY, [], usage="Specify the source for DataVolume. Can be provided multiple "
             "times.\nSupported parameters:\n" + volumes.import_help()),
        Flag("volume-sysprep", STRING, usage="Specify a ConfigMap or Secret to be used as sysprep volume by the "
             "VM.\nSupported parameters: src:string,type:string"),
        Flag("user", STRING, usage="Specify the user in the cloud-init user data that is added to the VM."),
        Flag("password-file", STRING, usage="Specify a file to read the password from for the cloud-init user "
             "data that is added to the VM."),
        Flag("ssh-key", STRING_SLICE, [], usage="Specify one or more SSH authorized keys in the cloud-init user "
             "data that is added to the VM."),
        Flag("ga-manage-ssh", BOOL, False, usage="Specify if the qemu-guest-agent should be able to manage SSH in "
             "the cloud-init user data that is added to the VM.\nThis is useful in combination with the "
             "\"credentials add-ssh-key\" command or when using the --access-cred flag."),
        Flag("access-cred", STRING_ARRAY, [], usage="Specify an access credential to be injected into the VM. Can "
             "be provided multiple times.\nSupported parameters: type:string,src:string,method:string,user:string"),
        Flag("cloud-init", STRING, NOCLOUD, usage="Specify the type of the generated cloud-init data source.\n"
             "Supported values: nocloud, configdrive, none"),
        Flag("cloud-init-user-data", STRING, usage="Specify the base64 encoded cloud-init user data of the VM."),
        Flag("cloud-init-network-data", STRING, usage="Specify the base64 encoded cloud-init network data of the VM."),
        Flag("volume-datasource", STRING_ARRAY, [], usage="Specify a DataSource to be cloned by the VM. Can be "
             "provided multiple times.\nSupported parameters: name:string,src:string,bootorder:uint,"
             "size:resource.Quantity\nDEPRECATED: Use --volume-import with type:ds and same params instead."),
        Flag("volume-clone-pvc", STRING_ARRAY, [], usage="Specify a PVC to be cloned by the VM. Can be provided "
             "multiple times.\nSupported parameters: name:string,src:string,bootorder:uint,size:resource.Quantity"
             "\nDEPRECATED: Use --volume-import with type:pvc and same params instead."),
        Flag("volume-blank", STRING_ARRAY, [], usage="Specify a blank volume to be used by the VM. Can be provided "
             "multiple times.\nSupported parameters: name:string,size:resource.Quantity\nDEPRECATED: Use "
             "--volume-import with type:blank and same params instead."),
    ]


class VMBuilder:
    """The state of one `create vm` run (KubeVirt's createVM struct plus the VM being built)."""

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.name = ctx.value("name") or "vm-" + rand_suffix()
        self.boot_orders: dict[int, str] = {}
        self.volume_import: list[str] = list(ctx.value("volume-import"))
        self.vm = self._new_vm()

    # -- accessors for the VM being built -----------------------------------------------

    @property
    def template_spec(self) -> dict:
        return self.vm["spec"]["template"]["spec"]

    @property
    def domain(self) -> dict:
        return self.template_spec["domain"]

    @property
    def volumes(self) -> list[dict]:
        return self.template_spec.setdefault("volumes", [])

    def find_volume(self, name: str) -> dict | None:
        for vol in self.template_spec.get("volumes", ()):
            if vol["name"] == name:
                return vol
        return None

    def volume_should_not_exist(self, flag: str, name: str) -> None:
        if self.find_volume(name) is not None:
            raise flag_err(flag, f'there is already a volume with name "{name}"')

    def add_disk_with_boot_order(self, flag: str, name: str, boot_order: int | None) -> None:
        if boot_order is None:
            return
        if boot_order == 0:
            raise flag_err(flag, "bootorder must be greater than 0")
        if boot_order in self.boot_orders:
            raise flag_err(flag, f"bootorder {boot_order} was specified multiple times")
        self.domain["devices"].setdefault("disks", []).append({"name": name, "bootOrder": boot_order})
        self.boot_orders[boot_order] = name

    # -- newVM -----------------------------------------------------------------------

    def _new_vm(self) -> dict:
        from instancetype.api.quantity import Quantity

        try:
            memory = str(Quantity.parse(self.ctx.value("memory")))
        except ValueError as exc:
            raise flag_err("memory", str(exc)) from None
        metadata = {"name": self.name}
        if self.ctx.namespace:
            metadata["namespace"] = self.ctx.namespace
        return {
            "apiVersion": "kubevirt.io/v1",
            "kind": "VirtualMachine",
            "metadata": metadata,
            "spec": {
                "runStrategy": self.ctx.value("run-strategy"),
                "template": {
                    "metadata": {},
                    "spec": {
                        "domain": {"devices": {}, "memory": {"guest": memory}, "resources": {}},
                        "terminationGracePeriodSeconds": self.ctx.value("termination-grace-period"),
                    },
                },
            },
            "status": {},
        }

    # -- the option functions -------------------------------------------------------------

    def with_run_strategy(self) -> None:
        value = self.ctx.value("run-strategy")
        for rs in RUN_STRATEGIES:
            if goparse.equal_fold_ascii(value, rs):  # strings.EqualFold
                self.vm["spec"]["runStrategy"] = rs
                return
        raise flag_err("run-strategy", f'invalid run strategy "{value}", supported values are: '
                       + ", ".join(RUN_STRATEGIES))

    def _matcher(self, flag: str, what: str, kinds: tuple[str, str]) -> dict:
        try:
            kind, name = params.split_prefixed_name(self.ctx.value(flag))
        except params.ParamError as exc:
            raise flag_err(flag, str(exc)) from None
        kind = goparse.to_lower(kind)  # strings.ToLower, printed as lowered in the error
        if kind and kind not in kinds:
            raise flag_err(flag, f'invalid {what} kind "{kind}", supported values are: {kinds[0]}, {kinds[1]}')
        matcher = {"name": name}
        if kind:
            matcher["kind"] = kind
        return matcher

    def with_instancetype(self) -> None:
        matcher = self._matcher("instancetype", "instancetype",
                                ("virtualmachineinstancetype", "virtualmachineclusterinstancetype"))
        self.domain.pop("memory", None)
        self.vm["spec"]["instancetype"] = matcher

    def with_preference(self) -> None:
        self.vm["spec"]["preference"] = self._matcher(
            "preference", "preference", ("virtualmachinepreference", "virtualmachineclusterpreference"))

    def alias_to_volume_import(self, flag: str, vol_type: str) -> None:
        # KubeVirt prints this straight to stderr (cobra's MarkDeprecated would taint stdout)
        self.ctx.warn(f"Flag --{flag} has been deprecated, use flag --volume-import instead")
        for vol in self.ctx.value(flag):
            if vol == "":
                raise flag_err("volume-import", "params may not be empty")
            # prepended "to keep the documented boot order" (which it does not)
            self.volume_import.insert(0, f"type:{vol_type},{vol}")
        self.ctx.flags.flags["volume-import"].changed = True

    def option_functions(self):
        return (
            ("run-strategy", self.with_run_strategy),
            ("instancetype", self.with_instancetype),
            ("preference", self.with_preference),
            ("volume-containerdisk", lambda: volumes.with_containerdisks(self)),
            ("volume-pvc", lambda: volumes.with_pvcs(self)),
            ("volume-datasource", lambda: self.alias_to_volume_import("volume-datasource", "ds")),
            ("volume-clone-pvc", lambda: self.alias_to_volume_import("volume-clone-pvc", "pvc")),
            ("volume-blank", lambda: self.alias_to_volume_import("volume-blank", "blank")),
            ("volume-import", lambda: volumes.with_imported_volumes(self)),
            ("volume-sysprep", lambda: volumes.with_sysprep(self)),
            ("access-cred", lambda: volumes.with_access_credentials(self)),
        )

    # -- cloud-init ------------------------------------------------------------------

    def cloud_init_config(self) -> None:
        ctx = self.ctx
        if not any(ctx.changed(f) for f in _CLOUD_INIT_FLAGS):
            return
        if ctx.changed("password-file"):
            ctx.warn("WARNING: --password-file: The password is stored in cleartext in the VM definition!")
        if self.find_volume(CLOUD_INIT_DISK) is not None:
            raise CLIError(f'there is already a volume with name "{CLOUD_INIT_DISK}"')
        kind = ctx.value("cloud-init")
        lowered = goparse.to_lower(kind)  # cloudInitConfig switches on strings.ToLower
        key = {NOCLOUD: "cloudInitNoCloud", CONFIGDRIVE: "cloudInitConfigDrive"}.get(lowered)
        if lowered == NONE:
            if any(ctx.changed(f) for f in ("password-file", "ssh-key", "ga-manage-ssh", "cloud-init-user-data",
                                            "cloud-init-network-data")):
                ctx.warn("WARNING: --cloud-init: was set to none, not creating a data source although other "
                         "cloud-init options were set")
            return
        if key is None:
            raise flag_err("cloud-init", f'invalid cloud-init data source type "{kind}", supported values are: '
                           f"{NOCLOUD}, {CONFIGDRIVE}, {NONE}")
        src: dict = {}
        if ctx.value("cloud-init-network-data"):
            src["networkDataBase64"] = ctx.value("cloud-init-network-data")
        if ctx.value("cloud-init-user-data"):
            src["userDataBase64"] = ctx.value("cloud-init-user-data")
        else:
            src["userData"] = self.build_cloud_init_config()
        # isCloudInitSourceEmpty: only the header, nothing asked for explicitly
        if not ctx.changed("cloud-init") and src.get("userData") == CLOUD_INIT_HEADER \
                and not src.get("networkDataBase64"):
            return
        self.volumes.append({"name": CLOUD_INIT_DISK, key: src})

    def build_cloud_init_config(self) -> str:
        ctx = self.ctx
        config = CLOUD_INIT_HEADER
        if ctx.value("user"):
            config += "\nuser: " + ctx.value("user")
        path = ctx.value("password-file")
        if path:
            password = go_trim_space(read_file(path))
            if password:
                config += f"\npassword: {password}\nchpasswd: {{ expire: False }}"
        keys = ctx.value("ssh-key")
        if keys:
            config += "\nssh_authorized_keys:" + "".join("\n  - " + k for k in keys)
        if ctx.value("ga-manage-ssh"):
            config += "\nruncmd:\n  - [ setsebool, -P, 'virt_qemu_ga_manage_ssh', 'on' ]"
        return config

    # -- inference ---------------------------------------------------------------------

    def infer_from_volume(self) -> None:
        ctx = self.ctx
        explicit_it = ctx.changed("infer-instancetype") or ctx.changed("infer-instancetype-from")
        explicit_pref = ctx.changed("infer-preference") or ctx.changed("infer-preference-from")
        if ctx.value("infer-instancetype") and not ctx.value("instancetype") and not ctx.changed("memory"):
            try:
                vol = self._inference_volume(ctx.value("infer-instancetype-from"))
                matcher = {"inferFromVolume": vol}
                if explicit_it:
                    self.domain.pop("memory", None)
                else:
                    # implicit: let the backend ignore failures, and keep the memory as a fallback
                    matcher["inferFromVolumeFailurePolicy"] = "Ignore"
                self.vm["spec"]["instancetype"] = matcher
            except CLIError:
                if explicit_it:
                    raise
        if ctx.value("infer-preference") and not ctx.value("preference"):
            try:
                vol = self._inference_volume(ctx.value("infer-preference-from"))
                matcher = {"inferFromVolume": vol}
                if not explicit_pref:
                    matcher["inferFromVolumeFailurePolicy"] = "Ignore"
                self.vm["spec"]["preference"] = matcher
            except CLIError:
                if explicit_pref:
                    raise

    def _inference_volume(self, name: str) -> str:
        if not name:
            name = self._default_inference_volume()
        vol = self.find_volume(name)
        if vol is None:
            raise CLIError(f'there is no volume with name "{name}"')
        if "dataVolume" in vol:
            self._data_volume_valid_to_infer_from(vol["dataVolume"]["name"])
        elif "persistentVolumeClaim" not in vol:
            raise CLIError("inference of instancetype or preference works only with datasources, "
                           "datavolumes or pvcs")
        return name

    def _default_inference_volume(self) -> str:
        # the disk with the lowest boot order, else the first volume
        vols = self.template_spec.get("volumes")
        if not vols:
            raise CLIError("at least one volume is needed to infer an instance type or preference")
        if self.boot_orders:
            return self.boot_orders[min(self.boot_orders)]
        return vols[0]["name"]

    def _data_volume_valid_to_infer_from(self, name: str) -> None:
        for dvt in self.vm["spec"].get("dataVolumeTemplates", ()):
            if dvt["metadata"]["name"] != name:
                continue
            spec = dvt["spec"]
            source = spec.get("source") or {}
            if any(k in source for k in ("pvc", "registry", "snapshot")):
                return
            if (spec.get("sourceRef") or {}).get("kind") == "DataSource":
                return
            raise CLIError("this datavolume is not valid to infer an instancetype or preference from "
                           "(source needs to be PVC, Registry or Snapshot, sourceRef needs to be DataSource)")

    # -- run ---------------------------------------------------------------------------

    def build(self) -> dict:
        for flag, fn in self.option_functions():
            if self.ctx.changed(flag):
                fn()
        self.cloud_init_config()
        self.infer_from_volume()
        return self.vm


def read_file(path: str) -> str:
    """os.ReadFile with Go's error texts (`open <path>: no such file or directory`)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except IsADirectoryError:
        raise flag_err("password-file", f"read {path}: is a directory") from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        reason = reason[:1].lower() + reason[1:]
        raise flag_err("password-file", f"open {path}: {reason}") from None
    return data.decode("utf-8", "surrogateescape")


_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
            "\u2028\u2029\u202f\u205f\u3000"


def go_trim_space(s: str) -> str:
    """strings.TrimSpace (Go's notion of white space, not Python's)."""
    return s.strip(_GO_SPACE)


def run(ctx: Context) -> dict:
    return VMBuilder(ctx).build()


COMMAND = Command(
    "vm", "Create a VirtualMachine manifest.", make_flags, run,
    long="Create a VirtualMachine manifest.\n\nIf no boot order was specified volumes have the following fixed "
         "boot order:\nContainerdisk > PVC > DataSource > Clone PVC > Blank > Imported volumes",
    example="""  # Create a manifest for a VirtualMachine with a random name:
  {{ProgramName}} create vm

  # Create a manifest for a VirtualMachine with a specified name and RunStrategy Always
  {{ProgramName}} create vm --name=my-vm --run-strategy=Always

  # Create a manifest for a VirtualMachine with a specified VirtualMachineInstancetype (namespaced)
  {{ProgramName}} create vm --instancetype=virtualmachineinstancetype/my-instancetype

  # Create a manifest for a VirtualMachine with a specified VirtualMachineClusterPreference
  {{ProgramName}} create vm --preference=my-preference

  # Create a manifest for a VirtualMachine with specified memory and an ephemeral containerdisk volume
  {{ProgramName}} create vm --memory=1Gi --volume-containerdisk=src:my.registry/my-image:my-tag

  # Create a manifest for a VirtualMachine with a cloned DataSource and inferred instancetype and preference
  {{ProgramName}} create vm --volume-import=type:ds,src:my-annotated-ds --infer-instancetype --infer-preference

  # Create a manifest for a VirtualMachine using a PVC without cloning it
  {{ProgramName}} create vm --volume-pvc=src:my-pvc

  # Create a manifest for a VirtualMachine with a generated cloud-init config (user and ssh authorized key)
  {{ProgramName}} create vm --user cloud-user --ssh-key="ssh-ed25519 AAAA...."

  # Create a manifest for a VirtualMachine with password injected into the VM from a secret called my-pws
  {{ProgramName}} create vm --access-cred=type:password,src:my-pws""",
    exclusive=(
        ("memory", "instancetype", "infer-instancetype", "infer-instancetype-from"),
        ("preference", "infer-preference", "infer-preference-from"),
        ("cloud-init-user-data", "user"),
        ("cloud-init-user-data", "password-file"),
        ("cloud-init-user-data", "ssh-key"),
        ("cloud-init-user-data", "ga-manage-ssh"),
    ),
    no_args=True,
)
