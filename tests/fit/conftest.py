"""Lets the test modules here import their shared helpers (tiny.py, ddp_worker.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
