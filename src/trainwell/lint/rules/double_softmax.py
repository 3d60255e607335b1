"""TW301: softmax before CrossEntropyLoss, or sigmoid before BCEWithLogitsLoss."""

from __future__ import annotations

from typing import Iterator

from trainwell.lint import outputs
from trainwell.lint.context import FileContext
from trainwell.lint.loss_calls import loss_calls
from trainwell.diagnostic import Finding

CODE = "TW301"
_EXPECTS = {"CrossEntropyLoss": (outputs.SOFTMAX, "softmax", "raw logits (it applies log_softmax itself)"),
            "BCEWithLogitsLoss": (outputs.SIGMOID, "sigmoid", "raw logits (it applies sigmoid itself)")}


def check(ctx: FileContext) -> Iterator[Finding]:
    for call, loss, first, scope in loss_calls(ctx, set(_EXPECTS)):
        bad, activation, wants = _EXPECTS[loss]
        if outputs.kind(ctx, first, scope, call.lineno) != bad:
            continue
        yield ctx.finding(
            CODE, call,
            f"`{ctx.snippet(call)}` feeds {activation} outputs (`{ctx.snippet(first)}`) to {loss}, which expects {wants}: "
            f"the {activation} is applied twice, gradients flatten and training is weak.",
            f"Pass the logits to {loss}; apply {activation} only for reported probabilities.",
        )
