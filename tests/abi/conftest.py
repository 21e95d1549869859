import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def shared_dir():
    return pathlib.Path(os.environ.get("DELEGATO_SHARED_DIR", REPO.parent / "shared"))


@pytest.fixture(scope="session")
def plugin_path():
    path = pathlib.Path(os.environ.get("DELEGATO_PLUGIN", REPO / "build" / "libdelegato_delegate.so"))
    if not path.exists():
        pytest.skip(f"plugin not found at {path} (build target delegato_delegate or set DELEGATO_PLUGIN)")
    return str(path)


@pytest.fixture(scope="session")
def delegato_bin():
    path = pathlib.Path(os.environ.get("DELEGATO_BIN", REPO / "build" / "delegato"))
    if not path.exists():
        pytest.skip(f"delegato binary not found at {path} (build first or set DELEGATO_BIN)")
    return str(path)
