"""The static checker: reads Python source (never imports or runs it) and
reports the catalog's silent training-loop bugs.

Layers, each built on the one before: ``context`` (imports, names, roles),
``loops`` (training loops and the ordered events of one iteration), ``rules/``
(one file per code), ``runner`` (files, config, noqa, errors). Nothing here
imports torch, so ``trainwell check`` starts fast.
"""
