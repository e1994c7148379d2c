"""Just enough of cobra to run `virtctl create <kind>` the way virtctl does.

Order of the checks (cobra's Command.execute): parse the flags in command-line
order (first error wins), `--help`, positional arguments, required flags, then
the mutually exclusive groups (in the order of their space-joined flag lists
sorted as strings), then the command itself.
"""
from __future__ import annotations

import sys

from instancetype.errors import CLIError

from . import goparse
from .flags import BOOL, GOINT, STRING, STRING_ARRAY, Flag, FlagError, FlagSet

PROGRAM = "virtctl"  # cobra's CommandPath, as KubeVirt's messages name the command
HELP_PROGRAM = "instancetype"  # what the help texts show (our own program name)

_RAND_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand


def rand_suffix(n: int = 5) -> str:
    """apimachinery's rand.String(n): the suffix of generated names."""
    import random

    return "".join(random.choice(_RAND_ALPHABET) for _ in range(n))


def global_flags() -> list[Flag]:
    """virtctl's persistent flags (kubeconfig overrides and klog's -v); only the namespace is used."""
    s = STRING
    return [
        Flag("as", s, usage="Username to impersonate for the operation"),
        Flag("as-group", STRING_ARRAY, [], usage="Group to impersonate for the operation"),
        Flag("as-uid", s, usage="UID to impersonate for the operation"),
        Flag("certificate-authority", s, usage="Path to a cert file for the certificate authority"),
        Flag("client-certificate", s, usage="Path to a client certificate file for TLS"),
        Flag("client-key", s, usage="Path to a client key file for TLS"),
        Flag("cluster", s, usage="The name of the kubeconfig cluster to use"),
        Flag("context", s, usage="The name of the kubeconfig context to use"),
        Flag("disable-compression", BOOL, usage="If true, opt-out of response compression"),
        Flag("insecure-skip-tls-verify", BOOL, usage="If true, the server's certificate will not be checked"),
        Flag("kubeconfig", s, usage="Path to the kubeconfig file to use for CLI requests."),
        Flag("namespace", s, shorthand="n", usage="If present, the namespace scope for this CLI request"),
        Flag("password", s, usage="Password for basic authentication to the API server"),
        Flag("proxy-url", s, usage="If provided, this URL will be used to connect via proxy"),
        Flag("request-timeout", s, "0",
             usage="The length of time to wait before giving up on a single server request."),
        Flag("server", s, shorthand="s", usage="The address and port of the Kubernetes API server"),
        Flag("tls-server-name", s, usage="Server name to use for server certificate validation."),
        Flag("token", s, usage="Bearer token for authentication to the API server"),
        Flag("user", s, usage="The name of the kubeconfig user to use"),
        Flag("username", s, usage="Username for basic authentication to the API server"),
        Flag("v", GOINT, 2, shorthand="v", usage="log level for V logs"),
    ]


class Context:
    """What a command's run function sees: its flags, the namespace override and stderr."""

    def __init__(self, flags: FlagSet):
        self.flags = flags

    @property
    def namespace(self) -> str:
        # clientcmd: a non-empty --namespace is an override; otherwise nothing is set
        return self.flags.value("namespace") or ""

    def value(self, name: str):
        return self.flags.value(name)

    def changed(self, name: str) -> bool:
        return self.flags.changed(name)

    @staticmethod
    def warn(text: str) -> None:
        sys.stderr.write(text if text.endswith("\n") else text + "\n")


class Command:
    """One `virtctl create` subcommand: `make_flags()` builds fresh flags for a run,
    `run(ctx)` returns the object to print."""

    def __init__(self, name: str, short: str, make_flags, run, *, long: str = "", example: str = "",
                 required: tuple[str, ...] = (), exclusive: tuple[tuple[str, ...], ...] = (),
                 no_args: bool = False):
        self.name, self.short, self.long, self.example = name, short, long, example
        self.make_flags, self.run_fn = make_flags, run
        self.required, self.exclusive, self.no_args = required, exclusive, no_args

    @property
    def path(self) -> str:
        return f"{PROGRAM} create {self.name}"

    def flagset(self) -> FlagSet:
        fs = FlagSet()
        for f in self.make_flags():
            fs.add(f)
        fs.add(Flag("help", BOOL, shorthand="h", usage=f"help for {self.name}"))
        for f in global_flags():
            fs.add(f)
        return fs

    def execute(self, argv: list[str]) -> dict | None:
        """Run the command; returns the object to print, None after help; raises CLIError."""
        fs = self.flagset()
        try:
            fs.parse(argv)
        except FlagError as exc:
            raise CLIError(str(exc)) from None
        if fs.value("help"):
            sys.stdout.write(self.help_text(fs))
            return None
        if self.no_args and fs.args:
            # cobra.NoArgs
            raise CLIError(f"unknown command {goparse.quote(fs.args[0])} for {goparse.quote(self.path)}")
        missing = [n for n in sorted(self.required) if not fs.changed(n)]
        if missing:
            raise CLIError('required flag(s) "' + '", "'.join(missing) + '" not set')
        for group in sorted(self.exclusive, key=" ".join):
            set_ = sorted(n for n in group if fs.changed(n))
            if len(set_) > 1:
                raise CLIError(f"if any flags in the group [{' '.join(group)}] are set none of the others "
                               f"can be; [{' '.join(set_)}] were all set")
        return self.run_fn(Context(fs))

    # -- help (cobra's usage template, local flags only as virtctl prints them) ----------

    def help_text(self, fs: FlagSet | None = None) -> str:
        fs = fs or self.flagset()
        out = [(self.long or self.short).rstrip(), ""]
        out.append("Usage:")
        out.append(f"  {HELP_PROGRAM} create {self.name} [flags]")
        out.append("")
        if self.example:
            out += ["Examples:", self.example.replace("{{ProgramName}}", HELP_PROGRAM), ""]
        out.append("Flags:")
        out.append(flag_usages([f for f in fs.flags.values() if f.name in self._local_names()]))
        out.append("")
        out.append("Global flags: -n, --namespace string   the namespace of namespaced objects (virtctl's "
                   "other connection flags are accepted and ignored).")
        return "\n".join(out) + "\n"

    def _local_names(self) -> set[str]:
        return {f.name for f in self.make_flags()} | {"help"}


def flag_usages(flags: list[Flag]) -> str:
    """pflag's FlagUsages layout: `  -n, --name type   usage (default ...)`."""
    lines = []
    for f in flags:
        if f.hidden:
            continue
        left = f"  -{f.shorthand}, --{f.name}" if f.shorthand else f"      --{f.name}"
        tn = f.type_name()
        if tn:
            left += " " + tn
        usage = f.usage
        default = _default_text(f)
        if default:
            usage += f" (default {default})"
        lines.append((left, usage))
    width = max((len(left) for left, _ in lines), default=0)
    text = []
    for left, usage in lines:
        pad = " " * (width - len(left) + 3)
        body = usage.replace("\n", "\n" + " " * (width + 3))
        text.append(f"{left}{pad}{body}")
    return "\n".join(text)


def _default_text(f: Flag) -> str:
    d = f.default
    if f.kind == BOOL:
        return "true" if d else ""
    if f.kind == STRING:
        return goparse.quote(str(d)) if d else ""
    if isinstance(d, list):
        return "[" + ",".join(d) + "]" if d else ""
    return str(d) if d else ""
