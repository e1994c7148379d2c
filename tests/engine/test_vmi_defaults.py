"""SetDefaultVirtualMachineInstanceSpec (pkg/defaults/defaults.go) and the default disks/network."""
from __future__ import annotations

import pytest

from instancetype.engine.defaults import set_default_network_interface, set_default_volume_disk
from instancetype.engine.virt_config import cluster_config
from instancetype.engine.vmi_defaults import set_vmi_spec_defaults
from instancetype.errors import DefaultsError


def defaulted(spec, config=None):
    set_vmi_spec_defaults(spec, config)
    return spec


def test_empty_spec_defaults():
    assert defaulted({}) == {
        "architecture": "amd64", "evictionStrategy": "None",
        "domain": {"machine": {"type": "q35"}, "resources": {}, "memory": {}, "cpu": {"sockets": 1, "cores": 1, "threads": 1},
                   "devices": {"interfaces": [{"name": "default", "bridge": {}}]}},
        "networks": [{"name": "default", "pod": {}}]}


@pytest.mark.parametrize("arch,config,machine", [
    ("amd64", None, "q35"), ("arm64", None, "virt"), ("s390x", None, "s390-ccw-virtio"),
    ("arm64", {"architectureConfiguration": {"amd64": {"machineType": "pc-q35-9.1"},
                                             "arm64": {"machineType": "virt-9.0"}}}, "virt-9.0"),
    ("amd64", {"architectureConfiguration": {"arm64": {"machineType": "virt-9.0"}}}, "q35"),
    ("arm64", {"machineType": "pc-q35-rhel9.6.0"}, "pc-q35-rhel9.6.0"),
])
def test_machine_type(arch, config, machine):
    assert defaulted({"architecture": arch}, config)["domain"]["machine"] == {"type": machine}


def test_machine_type_kept_or_filled():
    assert defaulted({"domain": {"machine": {"type": "pc"}}})["domain"]["machine"] == {"type": "pc"}
    assert defaulted({"domain": {"machine": {}}})["domain"]["machine"] == {"type": "q35"}


def test_cpu_request_defaults():
    spec = defaulted({"domain": {"resources": {"limits": {"cpu": "2"}}}})
    assert spec["domain"]["resources"]["requests"] == {"cpu": "2"}
    assert spec["domain"]["cpu"] == {"sockets": 2, "cores": 1, "threads": 1}
    spec = defaulted({}, {"cpuRequest": "200m"})
    assert spec["domain"]["resources"]["requests"] == {"cpu": "200m"}
    spec = defaulted({"domain": {"cpu": {"dedicatedCpuPlacement": True, "cores": 2}}}, {"cpuRequest": "200m"})
    assert "requests" not in spec["domain"]["resources"]
    spec = defaulted({}, {"cpuRequest": "0.1"})   # equal to the default 100m by value
    assert "requests" not in spec["domain"]["resources"]


@pytest.mark.parametrize("domain,guest", [
    # copied as given (Go copies the Quantity); printing canonicalises once
    ({"resources": {"requests": {"memory": "1.5Gi"}, "limits": {"memory": "4Gi"}}}, "1.5Gi"),
    ({"resources": {"requests": {"memory": "0"}, "limits": {"memory": "4Gi"}}}, "4Gi"),
    ({"memory": {"hugepages": {"pageSize": "2Mi"}}}, "2Mi"),
    ({"memory": {"guest": "1G"}, "resources": {"requests": {"memory": "4Gi"}}}, "1G"),
])
def test_guest_memory(domain, guest):
    assert defaulted({"domain": domain})["domain"]["memory"]["guest"] == guest


def test_bad_pagesize_is_ignored():
    assert "guest" not in defaulted({"domain": {"memory": {"hugepages": {"pageSize": "huge"}}}})["domain"]["memory"]


def test_topology_from_cpu_quantities_rounds_up():
    assert defaulted({"domain": {"resources": {"requests": {"cpu": "500m"}}}})["domain"]["cpu"]["sockets"] == 1
    assert defaulted({"domain": {"resources": {"requests": {"cpu": "2500m"}}}})["domain"]["cpu"]["sockets"] == 3
    assert defaulted({"domain": {"cpu": {"cores": 4}}})["domain"]["cpu"] == {"cores": 4}


@pytest.mark.parametrize("image,policy", [
    ("quay.io/containerdisks/fedora:latest", "Always"), ("fedora", "Always"),
    ("quay.io/containerdisks/fedora:41", "IfNotPresent"), ("img@sha256:abc", "IfNotPresent"),
])
def test_container_disk_pull_policy(image, policy):
    spec = defaulted({"volumes": [{"name": "v", "containerDisk": {"image": image}}]})
    assert spec["volumes"][0]["containerDisk"]["imagePullPolicy"] == policy
    assert spec["domain"]["devices"]["disks"] == [{"name": "v"}]


def test_eviction_strategy():
    assert defaulted({}, {"evictionStrategy": "LiveMigrate"})["evictionStrategy"] == "LiveMigrate"
    assert defaulted({"evictionStrategy": "External"})["evictionStrategy"] == "External"


def test_default_volume_disk_skips_disks_and_filesystems():
    spec = {"domain": {"devices": {"disks": [{"name": "a"}], "filesystems": [{"name": "b"}]}},
            "volumes": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}
    set_default_volume_disk(spec)
    assert spec["domain"]["devices"]["disks"] == [{"name": "a"}, {"name": "c"}]


def test_network_interface_rules():
    spec = {}
    set_default_network_interface(spec, {"network": {"defaultNetworkInterface": "masquerade"}})
    assert spec["domain"]["devices"]["interfaces"] == [{"name": "default", "masquerade": {}}]
    assert spec["networks"] == [{"name": "default", "pod": {}}]
    for cfg, msg in [({"network": {"defaultNetworkInterface": "slirp"}}, "slirp interface is deprecated as of v1.3"),
                     ({"network": {"permitBridgeInterfaceOnPodNetwork": False}},
                      "bridge interface is not enabled in kubevirt-config")]:
        with pytest.raises(DefaultsError) as e:
            set_default_network_interface({}, cfg)
        assert str(e.value) == msg
    off = {"domain": {"devices": {"autoattachPodInterface": False}}}
    set_default_network_interface(off, None)
    assert "networks" not in off
    has_net = {"networks": [{"name": "x", "pod": {}}]}
    set_default_network_interface(has_net, {"network": {"defaultNetworkInterface": "slirp"}})
    assert has_net == {"networks": [{"name": "x", "pod": {}}]}


def test_cluster_config_cached_and_defaults():
    assert cluster_config(None) is cluster_config({})
    cfg = cluster_config({"cpuRequest": "1000m"})
    assert cfg.cpu_request == "1" and not cfg.cpu_request_is_default
    assert cluster_config({"cpuRequest": "1000m"}) is cfg
