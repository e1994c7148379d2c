"""Every test runs with its own state file and data directory: none touches the user's
`~/.local/share/instancetype/state.db`, whatever command it runs."""
from __future__ import annotations

import pytest

# The cluster-mode fixtures (kube, kube_netns, namespace...): see tests/kube/conftest.py;
# any_cluster (one test body on both stores): see tests/kube/both_stores.py.
# The command-line fixtures (state, target, installed_cluster: tests/cli/_helpers.py), the
# controller processes (controllers) and the real clients (clients) likewise, so a module uses
# them by naming them, never by importing a fixture.
pytest_plugins = [
    "tests.kube.plugin", "tests.kube.both_stores",
    "tests.cli._helpers", "tests.kube.controller_env", "tests.kube.clients",
]


@pytest.fixture(autouse=True)
def _isolated_state(monkeypatch, tmp_path_factory):
    home = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    monkeypatch.setenv("INSTANCETYPE_STATE", str(home / "instancetype" / "state.db"))
