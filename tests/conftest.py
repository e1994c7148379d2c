"""Every test runs with its own state file and data directory: none touches the user's
`~/.local/share/instancetype/state.db`, whatever command it runs."""
from __future__ import annotations

import pytest

# The cluster-mode fixtures (kube, kube_netns, namespace...): see tests/kube/conftest.py;
# any_cluster (one test body on both stores): see tests/kube/both_stores.py.
pytest_plugins = ["tests.kube.plugin", "tests.kube.both_stores"]


@pytest.fixture(autouse=True)
def _isolated_state(monkeypatch, tmp_path_factory):
    home = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    monkeypatch.setenv("INSTANCETYPE_STATE", str(home / "instancetype" / "state.db"))
