import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def shared_dir():
    return pathlib.Path(os.environ.get("DELEGATO_SHARED_DIR", REPO.parent / "shared"))


@pytest.fixture(scope="session")
def delegato_bin():
    path = pathlib.Path(os.environ.get("DELEGATO_BIN", REPO / "build" / "delegato"))
    if not path.exists():
        pytest.skip(f"delegato binary not found at {path} (build first or set DELEGATO_BIN)")
    return str(path)


@pytest.fixture(scope="session")
def shared_models():
    models = shared_dir() / "models"
    if not models.is_dir():
        pytest.skip(f"shared models not found at {models} (set DELEGATO_SHARED_DIR)")
    return models
