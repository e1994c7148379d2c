"""Byte-for-byte comparison with documents of the bundles KubeVirt vendors (common-instancetypes v1.7.0,
pkg/virt-operator/resource/generate/components/data/common-instancetypes/ in kubevirt/kubevirt)."""
from __future__ import annotations

import pytest
import yaml

from instancetype import catalog
from instancetype.cli.catalog import bundle_text

GOLDEN = {
    "cx1.large": '''---
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata:
  annotations:
    instancetype.kubevirt.io/description: |-
      The CX Series provides exclusive compute resources for compute
      intensive applications.

      *CX* is the abbreviation of "Compute Exclusive".

      The exclusive resources are given to the compute threads of the
      VM. In order to ensure this, some additional cores (depending
      on the number of disks and NICs) will be requested to offload
      the IO threading from cores dedicated to the workload.
      In addition, in this series, the NUMA topology of the used
      cores is provided to the VM.

      The amount of spec.cpu.maxSockets is set to the same as
      guest cpus. This avoids KubeVirt's default behavior of
      providing extra CPUs for hotplugging, which can exceed the
      amount of available CPUs on a node and cause the VM to fail.

      Requirements for CX series instance types:
      - CPU manager has to be enabled.
      - Huge pages have to be available on the nodes.
    instancetype.kubevirt.io/displayName: Compute Exclusive
  labels:
    instancetype.kubevirt.io/class: compute.exclusive
    instancetype.kubevirt.io/cpu: "2"
    instancetype.kubevirt.io/dedicatedCPUPlacement: "true"
    instancetype.kubevirt.io/hugepages: 2Mi
    instancetype.kubevirt.io/icon-pf: pficon-registry
    instancetype.kubevirt.io/isolateEmulatorThread: "true"
    instancetype.kubevirt.io/memory: 4Gi
    instancetype.kubevirt.io/numa: "true"
    instancetype.kubevirt.io/size: large
    instancetype.kubevirt.io/vendor: kubevirt.io
    instancetype.kubevirt.io/version: "1"
    instancetype.kubevirt.io/common-instancetypes-version: v1.7.0
  name: cx1.large
spec:
  cpu:
    dedicatedCPUPlacement: true
    guest: 2
    isolateEmulatorThread: true
    maxSockets: 2
    numa:
      guestMappingPassthrough: {}
  ioThreadsPolicy: auto
  memory:
    guest: 4Gi
    hugepages:
      pageSize: 2Mi
''',
    "n1.medium": '''---
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata:
  annotations:
    instancetype.kubevirt.io/description: |-
      The N Series provides resources for network intensive DPDK
      applications, like VNFs.

      *N* is the abbreviation for "Network".

      This series of instancetypes requires nodes capable
      of running DPDK workloads and being marked with the respective
      node-role.kubevirt.io/worker-dpdk label as such.
    instancetype.kubevirt.io/displayName: Network
  labels:
    instancetype.kubevirt.io/class: network
    instancetype.kubevirt.io/cpu: "4"
    instancetype.kubevirt.io/dedicatedCPUPlacement: "true"
    instancetype.kubevirt.io/hugepages: 1Gi
    instancetype.kubevirt.io/icon-pf: pficon-network
    instancetype.kubevirt.io/isolateEmulatorThread: "true"
    instancetype.kubevirt.io/memory: 4Gi
    instancetype.kubevirt.io/size: medium
    instancetype.kubevirt.io/vendor: kubevirt.io
    instancetype.kubevirt.io/version: "1"
    instancetype.kubevirt.io/common-instancetypes-version: v1.7.0
  name: n1.medium
spec:
  annotations:
    cpu-load-balancing.crio.io: disable
    cpu-quota.crio.io: disable
    irq-load-balancing.crio.io: disable
  cpu:
    dedicatedCPUPlacement: true
    guest: 4
    isolateEmulatorThread: true
  memory:
    guest: 4Gi
    hugepages:
      pageSize: 1Gi
''',
    "o1.nano": '''---
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata:
  annotations:
    instancetype.kubevirt.io/description: |-
      The O Series is based on the U Series, with the only difference
      being that memory is overcommitted.

      *O* is the abbreviation for "Overcommitted".
    instancetype.kubevirt.io/displayName: Overcommitted
  labels:
    instancetype.kubevirt.io/class: overcommitted
    instancetype.kubevirt.io/cpu: "1"
    instancetype.kubevirt.io/icon-pf: pficon-virtual-machine
    instancetype.kubevirt.io/memory: 512Mi
    instancetype.kubevirt.io/size: nano
    instancetype.kubevirt.io/vendor: kubevirt.io
    instancetype.kubevirt.io/version: "1"
    instancetype.kubevirt.io/common-instancetypes-version: v1.7.0
  name: o1.nano
spec:
  cpu:
    guest: 1
  memory:
    guest: 512Mi
    overcommitPercent: 50
''',
    "u1.2xmedium": '''---
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata:
  annotations:
    instancetype.kubevirt.io/description: |-
      The U Series is quite neutral and provides resources for
      general purpose applications.

      *U* is the abbreviation for "Universal", hinting at the universal
      attitude towards workloads.

      VMs of instance types will share physical CPU cores on a
      time-slice basis with other VMs.
    instancetype.kubevirt.io/displayName: General Purpose
  labels:
    instancetype.kubevirt.io/class: general.purpose
    instancetype.kubevirt.io/cpu: "2"
    instancetype.kubevirt.io/icon-pf: pficon-server-group
    instancetype.kubevirt.io/memory: 4Gi
    instancetype.kubevirt.io/size: 2xmedium
    instancetype.kubevirt.io/vendor: kubevirt.io
    instancetype.kubevirt.io/version: "1"
    instancetype.kubevirt.io/common-instancetypes-version: v1.7.0
  name: u1.2xmedium
spec:
  cpu:
    guest: 2
  memory:
    guest: 4Gi
''',
    "legacy": '''---
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterPreference
metadata:
  annotations:
    iconClass: icon-other
    openshift.io/display-name: Legacy Guest
    openshift.io/documentation-url: |
      "https://github.com/kubevirt/common-instancetypes"
    openshift.io/provider-display-name: KubeVirt
    openshift.io/support-url: |
      "https://github.com/kubevirt/common-instancetypes/issues"
    tags: hidden,kubevirt,legacy
  labels:
    instancetype.kubevirt.io/os-type: legacy
    instancetype.kubevirt.io/vendor: kubevirt.io
    instancetype.kubevirt.io/common-instancetypes-version: v1.7.0
  name: legacy
spec:
  annotations:
    vm.kubevirt.io/os: legacy
  devices:
    preferredDiskBus: sata
    preferredInterfaceModel: e1000
''',
    "fedora.arm64": '''---
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterPreference
metadata:
  annotations:
    iconClass: icon-fedora
    openshift.io/display-name: Fedora (arm64)
    openshift.io/documentation-url: |
      "https://github.com/kubevirt/common-instancetypes"
    openshift.io/provider-display-name: KubeVirt
    openshift.io/support-url: |
      "https://github.com/kubevirt/common-instancetypes/issues"
    tags: hidden,kubevirt,fedora
  labels:
    instancetype.kubevirt.io/arch: arm64
    instancetype.kubevirt.io/os-type: linux
    instancetype.kubevirt.io/preferred-architecture: arm64
    instancetype.kubevirt.io/required-architecture: arm64
    instancetype.kubevirt.io/required-cpu: "1"
    instancetype.kubevirt.io/required-memory: 2Gi
    instancetype.kubevirt.io/vendor: kubevirt.io
    instancetype.kubevirt.io/common-instancetypes-version: v1.7.0
  name: fedora.arm64
spec:
  annotations:
    vm.kubevirt.io/os: linux
  devices:
    preferredDiskBus: virtio
    preferredInterfaceModel: virtio
    preferredRng: {}
  preferredArchitecture: arm64
  requirements:
    architecture: arm64
    cpu:
      guest: 1
    memory:
      guest: 2Gi
''',
    "windows.2k3": '''---
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterPreference
metadata:
  annotations:
    iconClass: icon-windows
    openshift.io/display-name: Microsoft Windows Server 2003
    openshift.io/documentation-url: |
      "https://github.com/kubevirt/common-instancetypes"
    openshift.io/provider-display-name: KubeVirt
    openshift.io/support-url: |
      "https://github.com/kubevirt/common-instancetypes/issues"
    tags: hidden,kubevirt,windows
  labels:
    instancetype.kubevirt.io/os-type: windows
    instancetype.kubevirt.io/required-cpu: "1"
    instancetype.kubevirt.io/required-memory: 256Mi
    instancetype.kubevirt.io/vendor: kubevirt.io
    instancetype.kubevirt.io/common-instancetypes-version: v1.7.0
  name: windows.2k3
spec:
  annotations:
    kubevirt.io/disablePCIHole64: "true"
    vm.kubevirt.io/os: windows
  clock:
    preferredClockOffset:
      utc: {}
    preferredTimer:
      hpet:
        present: false
      hyperv: {}
      pit:
        tickPolicy: delay
      rtc:
        tickPolicy: catchup
  cpu:
    preferredCPUTopology: sockets
  devices:
    preferredAutoattachInputDevice: true
    preferredDiskBus: sata
    preferredInterfaceModel: rtl8139
  features:
    preferredAcpi: {}
    preferredApic: {}
    preferredHyperv:
      frequencies: {}
      ipi: {}
      reenlightenment: {}
      relaxed: {}
      reset: {}
      runtime: {}
      spinlocks:
        spinlocks: 8191
      synic: {}
      synictimer:
        direct: {}
      tlbflush: {}
      vapic: {}
      vpindex: {}
  preferredTerminationGracePeriodSeconds: 3600
  requirements:
    cpu:
      guest: 1
    memory:
      guest: 256Mi
''',
    "windows.11.virtio": '''---
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterPreference
metadata:
  annotations:
    iconClass: icon-windows
    openshift.io/display-name: Microsoft Windows 11 (virtio)
    openshift.io/documentation-url: |
      "https://github.com/kubevirt/common-instancetypes"
    openshift.io/provider-display-name: KubeVirt
    openshift.io/support-url: |
      "https://github.com/kubevirt/common-instancetypes/issues"
    tags: hidden,kubevirt,windows
  labels:
    instancetype.kubevirt.io/os-type: windows
    instancetype.kubevirt.io/required-cpu: "2"
    instancetype.kubevirt.io/required-memory: 4Gi
    instancetype.kubevirt.io/vendor: kubevirt.io
    instancetype.kubevirt.io/common-instancetypes-version: v1.7.0
  name: windows.11.virtio
spec:
  annotations:
    vm.kubevirt.io/os: windows
  clock:
    preferredClockOffset:
      utc: {}
    preferredTimer:
      hpet:
        present: false
      hyperv: {}
      pit:
        tickPolicy: delay
      rtc:
        tickPolicy: catchup
  cpu:
    preferredCPUTopology: sockets
  devices:
    preferredAutoattachInputDevice: true
    preferredDiskBus: virtio
    preferredInputBus: virtio
    preferredInputType: tablet
    preferredInterfaceModel: virtio
    preferredTPM:
      persistent: true
    preferredVideoType: virtio
  features:
    preferredAcpi: {}
    preferredApic: {}
    preferredHyperv:
      frequencies: {}
      ipi: {}
      reenlightenment: {}
      relaxed: {}
      reset: {}
      runtime: {}
      spinlocks:
        spinlocks: 8191
      synic: {}
      synictimer:
        direct: {}
      tlbflush: {}
      vapic: {}
      vpindex: {}
    preferredSmm: {}
  firmware:
    preferredEfi:
      persistent: true
      secureBoot: true
  preferredTerminationGracePeriodSeconds: 3600
  requirements:
    cpu:
      guest: 2
    memory:
      guest: 4Gi
''',
}

_ALL = {o["metadata"]["name"]: o for o in catalog.instancetypes() + catalog.preferences()}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_byte_for_byte(name):
    assert bundle_text([_ALL[name]]) == GOLDEN[name]


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_object_for_object(name):
    assert yaml.safe_load(GOLDEN[name]) == _ALL[name]
