"""Imports delegato from the source tree with the extension of a build tree
(build/python/delegato, configured with -DDELEGATO_PYTHON=ON), so one CMake
build serves these tests. DELEGATO_EXTENSION_DIR overrides the location;
DELEGATO_TEST_INSTALLED=1 tests the installed package instead."""
import os
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

if os.environ.get("DELEGATO_TEST_INSTALLED") != "1":
    extension_dir = pathlib.Path(os.environ.get("DELEGATO_EXTENSION_DIR",
                                                REPO / "build" / "python" / "delegato"))
    # Without a built extension every test module skips (importorskip) with a message.
    if any(extension_dir.glob("_core*.so")):
        os.environ["DELEGATO_EXTENSION_DIR"] = str(extension_dir)
        sys.path.insert(0, str(REPO / "python"))


def shared_dir():
    return pathlib.Path(os.environ.get("DELEGATO_SHARED_DIR", REPO.parent / "shared"))


@pytest.fixture(scope="session")
def shared_models():
    models = shared_dir() / "models"
    if not models.is_dir():
        pytest.skip(f"shared models not found at {models} (set DELEGATO_SHARED_DIR)")
    return models


@pytest.fixture(scope="session")
def shared_images():
    images = shared_dir() / "images"
    if not images.is_dir():
        pytest.skip(f"shared images not found at {images}")
    return images
