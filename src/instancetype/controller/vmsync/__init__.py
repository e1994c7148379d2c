"""The VM controller's steps, one module each, as KubeVirt splits its synchronizers out of
pkg/virt-controller/watch/vm/vm.go.

`controller.vm.reconcile` runs them in order on one `state.VMSync` (the VM being reconciled, the
VM as stored, its VMI, the cluster configuration, a failure to report); a step either changes
that state and lets the next one run, or finishes the reconcile (returns the stored VM):

    deletion       the VM's finalizer; a VM being deleted: its VMI stopped, then the finalizer off
    pin            the matchers' ControllerRevisions, the status refs, referencePolicy expand
    vmis           the VMI as found: another owner's, one on its way out
    datavolumes    handleDataVolumes: dataVolumeTemplates created (filled by controller/cdi.py);
                   no VMI until they are ready
    run_strategy   syncRunStrategy: start, stop, restart by run strategy and state requests
    volumes        handleVolumeRequests, the declarative volume hotplug
    status         updateStatus: printable status, conditions, generations, run strategy
    printable      setPrintableStatus: v1.9's ordered predicates (read by status)

Both stores run the same steps: the embedded store inside each write's transaction
(`controller.cluster`), a cluster's controller from its work queue (`controller.runner`).
"""
