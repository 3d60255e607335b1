"""The static checker: reads Python source (never imports or runs it) and
reports the catalog's silent training-loop bugs.

Layers, each built on the one before: the facts (``context``: imports, names,
roles; ``dataflow``: values and graphs; ``loops``: training loops and the
ordered events of one iteration; ``facts.CheckedFile`` ties them to a file;
``index``: the project), ``rules/`` (one file per code, asking the facts),
``runner`` (files, config, noqa, errors). Nothing here
imports torch, so ``trainwell check`` starts fast.
"""
