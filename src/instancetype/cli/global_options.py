"""The global options, once: what every parser of the command line reads.

kubectl's global flags (cobra's persistent flags) may come before or after the verb. Three readers
use this table and no other list:

* the click group (`cli.main`), which declares each as an option of the `instancetype` group
  (`cluster_options.global_options`);
* `cli.entry`, which finds `create` behind them without importing click (`create` is virtctl's
  pflag parser; it is given `-n` and refuses `--state ""`);
* `cli.main.hoist_store_options`, which moves the options that name the store from after the verb
  to before it (`get vm --kubeconfig K` is `--kubeconfig K get vm`).

No import beyond the standard library: `entry` reads this module on every command.
"""
from __future__ import annotations


class GlobalOption:
    """One global option: its spellings, whether it takes a value, where it may stand. (A plain
    class: `dataclasses` would cost `create` a few milliseconds of start-up.)"""

    __slots__ = ("names", "takes_value", "metavar", "help", "names_store", "envvar", "exposed")

    def __init__(self, names: tuple[str, ...], takes_value: bool, metavar: str, help: str, *,
                 names_store: bool, envvar: str | None = None, exposed: bool = False) -> None:
        self.names = names                # every spelling, the long one last (click's parameter name)
        self.takes_value = takes_value
        self.metavar = metavar
        self.help = help
        self.names_store = names_store    # chooses the store: hoisted from after the verb (unless the
        #                                   command has an option of its own by that name)
        self.envvar = envvar
        self.exposed = exposed            # passed to the group's function (else kept in ctx.meta only)

    @property
    def dest(self) -> str:
        """The parameter's name (`--kubeconfig` -> `kubeconfig`)."""
        return self.names[-1].lstrip("-").replace("-", "_")


STATE = GlobalOption(("--state",), True, "PATH",
                     "The embedded store's state file (default: $XDG_DATA_HOME/instancetype/state.db).",
                     names_store=True, envvar="INSTANCETYPE_STATE", exposed=True)
KUBECONFIG = GlobalOption(("--kubeconfig",), True, "PATH",
                          "Use the Kubernetes cluster of this kubeconfig instead of the embedded store.",
                          names_store=True)
CLUSTER = GlobalOption(("--cluster",), False, "",
                       "Use the cluster of kubectl's kubeconfig ($KUBECONFIG, else ~/.kube/config).",
                       names_store=True)
CONTEXT = GlobalOption(("--context",), True, "NAME", "The kubeconfig context to use (implies a cluster).",
                       names_store=True)
NAMESPACE = GlobalOption(("-n", "--namespace"), True, "NS",
                         "The namespace of the commands that take -n (theirs wins when both are given).",
                         names_store=False)

# kubectl's -v: hoisted like the store's options (a global flag wherever it stands on the line).
VERBOSITY = GlobalOption(("-v", "--v"), True, "N",
                         "Log level: 6 logs each request to the API server (on a cluster), as kubectl's -v.",
                         names_store=True, exposed=True)
GLOBAL_OPTIONS: tuple[GlobalOption, ...] = (STATE, KUBECONFIG, CLUSTER, CONTEXT, NAMESPACE, VERBOSITY)
BY_NAME: dict[str, GlobalOption] = {name: o for o in GLOBAL_OPTIONS for name in o.names}


def split_option(word: str) -> tuple[GlobalOption, str | None] | None:
    """(the global option, its `=value` or None) of one command-line word, or None when the word
    is not a global option (`--namespace=x` -> (NAMESPACE, "x"); `--cluster=x` is not: a flag
    takes no value)."""
    name, eq, value = word.partition("=")
    option = BY_NAME.get(name)
    if option is None or (eq and not option.takes_value):
        return None
    return option, (value if eq else None)
