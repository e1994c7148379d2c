from tests.controller.test_cluster import IT, PREF, vm
from tests.kube.both_stores import any_cluster, kube_stack  # noqa


def test_scratch(any_cluster):
    c = any_cluster
    if c.store_name != "kube":
        return
    c.apply(IT), c.apply(PREF), c.apply(vm("halted", "Halted"))
    for action in ("stop", "start", "start"):
        gc = c.remote.store._gc
        req = gc._client.build_request("PUT", c.remote._vm_path("halted", c.namespace, action), json={})
        resp = gc.send(req)
        print(action, resp.status_code, resp.headers, resp.text)
        c.settle([("VirtualMachine", c.namespace, "halted")])
    assert 0
