"""Fixtures for the conformance test: the LiteRT oracle, the delegato
binary and the shared models. Everything here carries the `conformance`
marker (select with `-m conformance`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import litert_oracle  # noqa: E402

CONFORMANCE_DIR = Path(__file__).resolve().parent


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "conformance: every shared model through delegato against LiteRT")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if CONFORMANCE_DIR in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.conformance)


@pytest.fixture(scope="session")
def oracle_backend():
    try:
        return litert_oracle.backend()
    except litert_oracle.OracleUnavailable as error:
        pytest.skip(str(error))


@pytest.fixture(scope="session")
def delegato_bin():
    binary = litert_oracle.delegato_binary()
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        message = (f"delegato binary not found at {binary}: build it "
                   "(cmake --build build --target delegato) or set DELEGATO_BIN")
        if litert_oracle.strict_mode():
            pytest.fail(message)
        pytest.skip(message)
    return binary


@pytest.fixture(scope="session")
def oracle_cache(oracle_backend):
    """One reference-kernel interpreter per model for the whole session."""
    cache = {}

    def get(model: Path) -> litert_oracle.Oracle:
        if model not in cache:
            try:
                cache[model] = litert_oracle.Oracle(model, reference=True)
            except litert_oracle.OracleRejectsModel as error:
                cache[model] = error
        found = cache[model]
        if isinstance(found, Exception):
            pytest.skip(f"LiteRT cannot run {model.name}, no oracle: {found}")
        return found

    return get
