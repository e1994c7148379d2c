"""The VM validating webhook after its instancetype step (KubeVirt vms-admitter.go Admit, from
the CREATE-only checks to the warnings)."""
from __future__ import annotations

from typing import Any

from instancetype.engine.vm_validation import data_volume_templates, devices, networks, run_strategy, volume_requests
from instancetype.engine.vm_validation._common import _E
from instancetype.engine.vm_validation.spec import context, validate_vm_spec, validate_vmi_spec


def validate_vm_after_apply(vm: dict[str, Any], tspec: dict[str, Any], tmeta: dict[str, Any], *, operation: str = "CREATE",
                            old: dict[str, Any] | None = None, config: Any = None) -> tuple[list[Any], list[Any]]:
    """`vm` is the VM as the mutating webhook left it; `tspec`/`tmeta` the validating webhook's
    copy of its template after apply and defaults. Returns (causes, warnings): the causes of
    the first step that refuses (empty when admitted) and, when admitted, the warnings."""
    ctx = context(config)
    spec = (vm.get("spec") or _E)
    if operation == "CREATE":
        # the feature gates read the VM's own template, the network rules the defaulted copy
        causes = devices.validate_discontinued_gates(ctx.raw, (spec.get("template") or _E).get("spec") or _E)
        if causes:
            return causes, []
        causes = networks.validate_network_creation("spec", tspec)
        if causes:
            return causes, []
    vm_spec = dict(spec)
    if spec.get("template") is not None:
        vm_spec["template"] = {**(spec["template"] or _E), "metadata": tmeta, "spec": tspec}
    causes = validate_vm_spec(vm_spec, ctx)
    if causes:
        return causes, []
    causes = data_volume_templates.validate_data_volume_template_namespaces(vm, operation, old)
    if causes:
        return causes, []
    causes = volume_requests.validate_volume_requests(vm, ctx, validate_vmi_spec)
    if causes:
        return causes, []
    warnings = []
    if spec.get("running") is not None:
        warnings.append(run_strategy.RUNNING_DEPRECATED_WARNING)
    return [], warnings
