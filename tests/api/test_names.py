"""`api.names.object_meta_errors`: a valid name and namespace are answered without the field-by-field
check, which must then find nothing; every other metadata gets the field-by-field answer."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from instancetype.api import names

# Names near the patterns' edges: the characters they take, ones they refuse, upper case,
# non-ASCII (whose length in bytes differs), and lengths about the 63 / 253 limits.
_CHARS = st.sampled_from(list("abz09-.") + ["A", "_", " ", "é", "\u0131", "\n", "/"])
_NAMES = st.one_of(
    st.text(_CHARS, max_size=12),
    st.builds(lambda c, n, tail: c * n + tail, st.sampled_from(["a", "a.", "é", "-"]),
              st.integers(0, 130), st.sampled_from(["", "a", "-", ".b", "é"])),
    st.none(),
)
_KINDS = st.sampled_from(["VirtualMachine", "Namespace", "ControllerRevision", "VirtualMachineInstance"])


@settings(max_examples=600, deadline=None)
@given(kind=_KINDS, name=_NAMES, namespace=_NAMES, generate=st.one_of(st.none(), st.just(""), _NAMES),
       namespaced=st.booleans())
def test_the_quick_answer_is_the_field_by_field_one(kind, name, namespace, generate, namespaced):
    meta = {k: v for k, v in (("name", name), ("namespace", namespace), ("generateName", generate)) if v is not None}
    assert names.object_meta_errors(kind, meta, namespaced) == names.meta_errors(kind, meta, namespaced)


def test_limits():
    assert names.object_meta_errors("VirtualMachine", {"name": "a" * 253, "namespace": "b" * 63}, True) == []
    assert names.object_meta_errors("VirtualMachine", {"name": "a" * 254, "namespace": "b"}, True)
    assert names.object_meta_errors("VirtualMachine", {"name": "a", "namespace": "b" * 64}, True)
    assert names.object_meta_errors("Namespace", {"name": "a" * 64}, False)
    assert names.object_meta_errors("Namespace", {"name": "a.b"}, False)
    assert names.object_meta_errors("VirtualMachine", {"name": "a.b", "namespace": "x"}, True) == []
    assert names.object_meta_errors("VirtualMachine", {"name": "é", "namespace": "x"}, True)
