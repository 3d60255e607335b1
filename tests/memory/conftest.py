"""Fixtures for the memory tests: the tiny models, loaded by path (tests run with --import-mode=importlib)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

TINY_MODELS = Path(__file__).with_name("tiny_models.py")


@pytest.fixture(scope="session")
def tiny():
    spec = importlib.util.spec_from_file_location("trainwell_tests_tiny_models", TINY_MODELS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
