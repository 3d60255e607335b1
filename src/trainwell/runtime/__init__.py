"""The runtime checker: `trainwell run` and `trainwell.watch()`.

Hooks (``hooks.py``) turn PyTorch calls into events (``events.py``), probes
(``probes/``, one file per code) turn events into findings (``session.py``).
Nothing here is imported by ``import trainwell``; torch loads on first use.
"""
