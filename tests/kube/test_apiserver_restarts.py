"""kube-apiserver restarted again and again, cleanly and with kill -9, under a running
`instancetype controller` and `instancetype serve` (the webhooks), with VMs created between the
restarts while the controller is still starting the earlier ones.

Both processes must stay up through every restart (they reconnect: informers relist or rewatch,
workers retry) and everything must converge: every VM Running with exactly one VMI and its two
revisions, as after any fault (test_controller_faults.py). A crash shows as an exit code (-11 for
SIGSEGV) and the process's faulthandler dump in the log tails printed on failure.
"""
from __future__ import annotations

from . import test_controller_stack
from .controller_env import until
from .test_controller_faults import IT, PREF, _converged, _create, _names, _vm

RESTARTS = 8             # half clean (SIGTERM, then start), half kill -9
VMS_PER_ROUND = 4


# install, then `serve`; controllers started by the test: the stack of test_controller_stack.
stack = test_controller_stack.stack


def _alive(serve, controller) -> None:
    assert controller.poll() is None, f"the controller exited {controller.poll()}"
    assert serve.proc.poll() is None, f"serve exited {serve.proc.poll()}"


def test_apiserver_restarted_and_killed_under_the_controller_and_serve(kube, namespace, stack):
    serve, controllers = stack
    controller = controllers.start(workers=4)
    _create(kube, namespace, [IT, PREF] + [_vm(f"vm-0-{i}") for i in range(VMS_PER_ROUND)])
    until(lambda: _converged(kube, namespace, VMS_PER_ROUND), timeout=120, what="the first VMs running")
    total = VMS_PER_ROUND
    for round_ in range(1, RESTARTS + 1):
        if round_ % 2:
            kube.restart_apiserver()
        else:
            kube.kill_apiserver()
            kube.start_apiserver()
        _alive(serve, controller)
        # New VMs at once (serve's webhooks admit them from caches that are reconnecting), and the
        # next restart while the controller is still starting them.
        _create(kube, namespace, [_vm(f"vm-{round_}-{i}") for i in range(VMS_PER_ROUND)])
        total += VMS_PER_ROUND
        until(lambda n=total: len(_names(kube, namespace, "vmis")) > n - VMS_PER_ROUND, timeout=120,
              what=f"the controller at work after restart {round_}", every=0.1)
    until(lambda: _converged(kube, namespace, total), timeout=240, what=f"{total} VMs running after the restarts")
    _alive(serve, controller)
