"""The clean VM is admitted, without warnings; the seed snippets v1.9 refuses or warns on."""
from __future__ import annotations

import yaml
from vmv_helpers import admit, clean_vm

SEED_003_EXAMPLE_VM = """
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: example-vm
spec:
  instancetype:
    kind: VirtualMachineInstancetype
    name: example-instancetype
  preference:
    kind: VirtualMachinePreference
    name: example-preference
"""


def test_clean_vm_is_admitted():
    assert admit(clean_vm()) == {"allowed": True, "causes": [], "message": "", "stage": "validate"}


def test_running_is_admitted_with_the_deprecation_warning():
    vm = clean_vm()
    del vm["spec"]["runStrategy"]
    vm["spec"]["running"] = True
    res = admit(vm)
    assert res["allowed"] and res["warnings"] == ["spec.running is deprecated, please use spec.runStrategy instead."]


def test_seed_003_example_vm_has_no_template():
    # The seed's snippet is abridged; KubeVirt v1.9's schema check refuses it (v1.9 wins).
    res = admit(yaml.safe_load(SEED_003_EXAMPLE_VM))
    assert res["stage"] == "mutate" and res["code"] == 422
    assert res["message"] == "spec.template in body is required"


def test_whole_false_is_the_instancetype_part_only():
    vm = clean_vm()
    vm["spec"]["runStrategy"] = "always"
    assert not admit(vm)["allowed"]
    assert admit(vm, whole=False)["allowed"]
