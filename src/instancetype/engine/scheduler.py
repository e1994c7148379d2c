"""kube-scheduler's decision for one virt-launcher pod (engine/launcher_pod.py) over the nodes:
the filters of the default profile that apply to it, in its order (NodeUnschedulable,
TaintToleration, NodeAffinity, NodeResourcesFit; a node fails on the first), a feasible node
chosen, or the FitError text the pod's `PodScheduled` condition carries (framework/types.go
`FitError.Error`, with the PostFilter plugins' part: DynamicResources' "no new claims to
deallocate" and DefaultPreemption's own FitError).

Scoring is NodeResourcesFit's LeastAllocated over cpu and memory; kube-scheduler breaks ties at
random, this picks the first name. Priorities are not modelled: every virt-launcher pod has the
same, so preemption never finds victims.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .cache import ContentCache, content_key
from .launcher_pod import CPU, MEMORY, PODS, quantity_int

# The reasons (pkg/scheduler/framework/plugins/...).
UNSCHEDULABLE = "node(s) were unschedulable"
UNTOLERATED = "node(s) had untolerated taint(s)"
AFFINITY = "node(s) didn't match Pod's node affinity/selector"
TOO_MANY_PODS = "Too many pods"
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_CLAIMS = "no new claims to deallocate"
NO_NODES = "no nodes available to schedule pods"
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


@dataclass
class Pod:
    """What the filters read of a pod."""

    requests: dict[str, int]
    node_selector: dict[str, str]
    affinity_terms: list[dict[str, Any]] | None
    tolerations: list[dict[str, Any]]


@dataclass
class Usage:
    """What the pods already on a node request (NodeInfo.Requested) and how many there are."""

    requested: dict[str, int] = field(default_factory=dict)
    pods: int = 0

    def add(self, requests: Mapping[str, int], sign: int = 1) -> None:
        for k, v in requests.items():
            self.requested[k] = self.requested.get(k, 0) + sign * v
        self.pods += sign


def _d(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def node_name(node: Mapping[str, Any]) -> str:
    return str(_d(node.get("metadata")).get("name") or "")


# A node's allocatable resources as integers, by the content of its ResourceList: every placement
# reads every node's, and a node's text changes rarely (nine quantities for the default node).
_ALLOCATABLE: ContentCache[dict[str, int]] = ContentCache(64)


def allocatable(node: Mapping[str, Any]) -> dict[str, int]:
    """status.allocatable (else capacity, as the API server defaults it), cpu in millicores;
    values that are no quantity count as none. A new dict each call (the caller may change it)."""
    status = _d(node.get("status"))
    source = _d(status.get("allocatable")) or _d(status.get("capacity"))
    key = content_key(source)
    known = _ALLOCATABLE.hit(key) if key is not None else None
    if known is not None:
        return dict(known)
    out: dict[str, int] = {}
    for k, v in source.items():
        n = quantity_int(v, milli=(k == CPU))
        if n is not None:
            out[str(k)] = n
    if key is not None:
        _ALLOCATABLE.put(key, out)
        return dict(out)
    return out


def tolerates(tolerations: Iterable[Mapping[str, Any]], taint: Mapping[str, Any]) -> bool:
    """v1helper.TolerationsTolerateTaint / Toleration.ToleratesTaint."""
    for t in tolerations:
        effect = t.get("effect") or ""
        if effect and effect != taint.get("effect"):
            continue
        key = t.get("key") or ""
        if key and key != taint.get("key"):
            continue
        op = t.get("operator") or "Equal"
        if op == "Exists" or (op == "Equal" and (t.get("value") or "") == (taint.get("value") or "")):
            return True
    return False


def _match_expression(expr: Mapping[str, Any], value: str | None) -> bool:
    op, values = expr.get("operator"), [str(v) for v in expr.get("values") or ()]
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt") and value is not None and len(values) == 1:
        try:
            have, want = int(value), int(values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return False


def _term_matches(term: Mapping[str, Any], labels: Mapping[str, str], name: str) -> bool:
    exprs = list(term.get("matchExpressions") or ())
    fields = list(term.get("matchFields") or ())
    if not exprs and not fields:
        return False        # an empty term matches no objects
    return all(_match_expression(_d(e), labels.get(str(_d(e).get("key")))) for e in exprs) and all(
        _d(f).get("key") == "metadata.name" and _match_expression(_d(f), name) for f in fields)


class NodeFacts:
    """What the filters and the score read of a node, read from it once (`node_facts`): a driver
    that keeps its nodes keeps these beside them (controller/node_usage.py), so that a placement
    does not read every node's labels and quantities again."""

    __slots__ = ("name", "labels", "unschedulable", "taints", "allocatable")

    def __init__(self, node: Mapping[str, Any]):
        spec = _d(node.get("spec"))
        self.name = node_name(node)
        self.labels = {str(k): str(v) for k, v in _d(_d(node.get("metadata")).get("labels")).items()}
        self.unschedulable = spec.get("unschedulable") is True
        self.taints = [_d(t) for t in spec.get("taints") or () if _d(t).get("effect") in ("NoSchedule", "NoExecute")]
        self.allocatable = allocatable(node)        # its own copy: only read here


def node_facts(nodes: Iterable[Mapping[str, Any]]) -> list[NodeFacts]:
    """The nodes' facts, in the order kube-scheduler's result depends on (by name)."""
    return sorted((NodeFacts(n) for n in nodes), key=lambda f: f.name)


def matches_affinity(pod: Pod, node: Mapping[str, Any] | NodeFacts) -> bool:
    """NodeAffinity's Filter: the node selector, then any required term."""
    facts = node if isinstance(node, NodeFacts) else NodeFacts(node)
    labels = facts.labels
    if any(labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    if pod.affinity_terms is None:
        return True
    return any(_term_matches(t, labels, facts.name) for t in pod.affinity_terms)


def filter_node(pod: Pod, node: Mapping[str, Any] | NodeFacts, usage: Usage) -> tuple[bool, list[str]]:
    """(resolvable, reasons) of the first filter that refuses the node; reasons empty: it fits.
    `resolvable`: kube-scheduler's Unschedulable (preemption might help), not ...AndUnresolvable."""
    facts = node if isinstance(node, NodeFacts) else NodeFacts(node)
    if facts.unschedulable and not tolerates(pod.tolerations, UNSCHEDULABLE_TAINT):
        return False, [UNSCHEDULABLE]
    for taint in facts.taints:
        if not tolerates(pod.tolerations, taint):
            return False, [UNTOLERATED]
    if not matches_affinity(pod, facts):
        return False, [AFFINITY]
    alloc = facts.allocatable
    reasons: list[str] = []
    resolvable = True
    if usage.pods + 1 > alloc.get(PODS, 0):
        reasons.append(TOO_MANY_PODS)
    names = [CPU, MEMORY] + sorted(k for k in pod.requests if k not in (CPU, MEMORY, PODS))
    for name in names:
        want = pod.requests.get(name, 0)
        if want <= 0:
            continue
        have = alloc.get(name, 0)
        if want > have - usage.requested.get(name, 0):
            reasons.append(f"Insufficient {name}")
            resolvable = resolvable and want <= have
    return resolvable, reasons


def _score(pod: Pod, facts: NodeFacts, usage: Usage) -> float:
    """LeastAllocated over cpu and memory: the share left free once the pod is placed."""
    alloc = facts.allocatable
    shares = []
    for name in (CPU, MEMORY):
        have = alloc.get(name, 0)
        if have > 0:
            shares.append((have - usage.requested.get(name, 0) - pod.requests.get(name, 0)) / have)
    return sum(shares) / len(shares) if shares else 0.0


_NO_USAGE = Usage()      # a node nothing is placed on (only read)


def _histogram(reasons: Iterable[str]) -> str:
    counts: dict[str, int] = {}
    for r in reasons:
        counts[r] = counts.get(r, 0) + 1
    return ", ".join(sorted(f"{n} {r}" for r, n in counts.items()))


def schedule(pod: Pod, nodes: Sequence[Mapping[str, Any]] | Sequence[NodeFacts],
             usage: Mapping[str, Usage]) -> tuple[str | None, str]:
    """(the chosen node's name, "") or (None, the PodScheduled message). `nodes`: the Node
    objects, or their facts from `node_facts` (sorted by name)."""
    if not nodes:
        return None, NO_NODES
    facts = nodes if isinstance(nodes[0], NodeFacts) else node_facts(nodes)    # type: ignore[arg-type]
    feasible: list[tuple[float, str]] = []
    failed: list[tuple[bool, list[str]]] = []
    for node in facts:
        assert isinstance(node, NodeFacts)
        used = usage.get(node.name) or _NO_USAGE
        resolvable, reasons = filter_node(pod, node, used)
        if reasons:
            failed.append((resolvable, reasons))
        else:
            feasible.append((-_score(pod, node, used), node.name))
    if feasible:
        return min(feasible)[1], ""
    total = len(nodes)
    filters = _histogram(r for _, reasons in failed for r in reasons)
    preemption = _histogram(NO_VICTIMS if resolvable else NOT_HELPFUL for resolvable, _ in failed)
    return None, (f"0/{total} nodes are available: {filters}. {NO_CLAIMS}, "
                  f"preemption: 0/{total} nodes are available: {preemption}.")
