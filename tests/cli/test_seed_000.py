"""Seed 000 (instancetype update #5): requirements refusals, image-upload labels, inference."""
from __future__ import annotations

from ._helpers import get_json, instancetype, manifest, preference, run, run_process, vm

# The seed's first apply: a preference requiring more memory than the instancetype gives.
CSMALL_CIRROS_VM = manifest(
    instancetype("csmall"),
    preference("cirros", {"devices": {"preferredDiskBus": "virtio"},
                          "requirements": {"cpu": {"guest": 1}, "memory": {"guest": "512Mi"}}}),
    vm("vm-cirros-csmall", instancetype="csmall", preference="cirros"))

# The second: preferCores requiring 2 vCPUs of a VM that gives sockets.
PREFER_CORES_VM = manifest(
    preference("cirros", {"cpu": {"preferredCPUTopology": "preferCores"},
                          "requirements": {"cpu": {"guest": 2}, "memory": {"guest": "128Mi"}}}),
    vm("vm-cirros", preference="cirros", domain={
        "cpu": {"sockets": 2}, "devices": {"disks": [{"disk": {"bus": "virtio"}, "name": "containerdisk"}]},
        "resources": {"requests": {"memory": "128Mi"}}}))


def test_requirements_refusals(tmp_path):
    state = tmp_path / "state.db"
    r = run_process(state, "apply", "-f", "-", stdin=CSMALL_CIRROS_VM)
    assert r.code == 1
    assert r.out == ("virtualmachineinstancetype.instancetype.kubevirt.io/csmall created\n"
                     "virtualmachinepreference.instancetype.kubevirt.io/cirros created\n")
    assert r.err == ("The request is invalid: spec.instancetype: failure checking preference requirements: "
                     "insufficient Memory resources of 128Mi provided by instance type, preference requires 512Mi\n")
    # The seed prints `cirros unchanged`, but the preference did change: kubectl says configured.
    r = run(state, "apply", "-f", "-", stdin=PREFER_CORES_VM)
    assert r.code == 1
    assert r.out == "virtualmachinepreference.instancetype.kubevirt.io/cirros configured\n"
    # KubeVirt v1.9 also warns about the deprecated preferCores (newer than the seed).
    assert r.err.startswith("Warning: PreferredCPUTopology preferCores is deprecated")
    assert r.err.splitlines()[-1] == (
        "The request is invalid: spec.template.spec.domain.cpu.cores: failure checking preference "
        "requirements: insufficient CPU resources of 0 vCPU provided by VirtualMachine, preference "
        "requires 2 vCPU provided as cores")


def test_image_upload_labels_and_inference(tmp_path):
    state = tmp_path / "state.db"
    image = tmp_path / "cirros.img"
    image.write_bytes(b"\0" * 65536)
    r = run_process(state, "image-upload", "dv", "cirros", "--size=1Gi", "--default-instancetype", "n1.medium",
                    "--default-preference", "cirros", "--force-bind", f"--image-path={image}")
    assert r.code == 0, r.err
    assert "DataVolume default/cirros created" in r.out
    assert f"Uploading {image} completed successfully" in r.out
    dv = get_json(state, "dv/cirros")
    assert dv["metadata"]["labels"] == {"instancetype.kubevirt.io/default-instancetype": "n1.medium",
                                        "instancetype.kubevirt.io/default-preference": "cirros"}
    pvc = get_json(state, "pvc/cirros")
    assert pvc["metadata"]["labels"] == {
        "app": "containerized-data-importer", "app.kubernetes.io/component": "storage",
        "app.kubernetes.io/managed-by": "cdi-controller",
        "instancetype.kubevirt.io/default-instancetype": "n1.medium",
        "instancetype.kubevirt.io/default-preference": "cirros"}
    # Keys come sorted, as kubectl prints an unstructured object.
    assert list(pvc["metadata"]["labels"]) == sorted(pvc["metadata"]["labels"])

    manifest = run(state, "create", "vm", "--volume-pvc=name:cirros,src:cirros", "--infer-instancetype",
                   "--infer-preference", "--name", "cirros")
    assert manifest.code == 0
    r = run(state, "apply", "-f", "-", stdin=manifest.out)
    assert (r.code, r.out) == (0, "virtualmachine.kubevirt.io/cirros created\n"), r.err
    spec = get_json(state, "vms/cirros")["spec"]
    it, pref = spec["instancetype"], spec["preference"]
    assert (it["kind"], it["name"]) == ("virtualmachineclusterinstancetype", "n1.medium")
    assert (pref["kind"], pref["name"]) == ("virtualmachineclusterpreference", "cirros")
    assert it["revisionName"].startswith("cirros-n1.medium-") and it["revisionName"].endswith("-1")
    assert pref["revisionName"].startswith("cirros-cirros-") and pref["revisionName"].endswith("-1")


def test_cluster_instancetypes_table(tmp_path):
    state = tmp_path / "state.db"
    r = run(state, "get", "virtualmachineclusterinstancetypes")
    lines = r.out.splitlines()
    assert r.code == 0 and lines[0].split() == ["NAME", "AGE"]
    width = max(len(line.split()[0]) for line in lines)
    assert lines[0] == "NAME".ljust(width + 3) + "AGE"
    assert all(line.split()[1].endswith("s") for line in lines[1:])
    r = run(state, "get", "virtualmachineclusterinstancetype", "-l", "instancetype.kubevirt.io/cpu=4",
            "-o", "name")
    assert r.code == 0 and r.out
    assert all(n.startswith("virtualmachineclusterinstancetype.instancetype.kubevirt.io/")
               for n in r.out.splitlines())


def test_overcommit_vmi_memory(tmp_path):
    state = tmp_path / "state.db"
    it = manifest(instancetype("overcommit", overcommitPercent=15))
    assert run(state, "apply", "-f", "-", stdin=it).code == 0
    created = run(state, "create", "vm", "--instancetype", "virtualmachineinstancetype/overcommit",
                  "--volume-containerdisk", "name:cirros,src:registry:5000/kubevirt/cirros-container-disk-demo:devel",
                  "--name", "cirros").out
    assert run(state, "apply", "-f", "-", stdin=created).out == "virtualmachine.kubevirt.io/cirros created\n"
    domain = get_json(state, "vmi/cirros")["spec"]["domain"]
    assert domain["memory"] == {"guest": "128Mi"}
    assert domain["resources"]["requests"]["memory"] == "114085072"
