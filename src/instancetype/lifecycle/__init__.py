"""The rules the drivers share, over a store: the layer between `store` and the drivers
(`controller`, `webhook`, `deploy`), which never import one another.

    admission.py      every create and update admitted (KubeVirt's webhooks over a store):
                      the embedded Cluster, `serve`'s AdmissionReviews and the catalogue sync
    catalog_sync.py   the common-instancetypes deployment as virt-operator keeps it: the
                      controller carries it out, `install` plans the same objects
    expand.py         virt-api's expand-vm-spec over a store: the embedded `expand --file` and
                      `serve`'s subresource

What is here holds no state and runs no threads; the drivers own both.
"""
