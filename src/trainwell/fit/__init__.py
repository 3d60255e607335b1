"""The trainer: a training loop that is right by construction.

Modules: ``trainer`` (the public ``Trainer``), ``loop`` (epoch -> step ->
micro-step), ``step`` (the ordered phases of one optimizer step),
``precision``, ``accumulate``, ``schedule``, ``data``, ``evaluate``,
``checkpoint``, ``callbacks``, ``preflight``, ``seeding``, ``state``,
``freeze``. Nothing heavy is imported here, so ``trainwell.fit.command`` stays
cheap to import.
"""
