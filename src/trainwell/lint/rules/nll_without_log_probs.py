"""TW303: NLLLoss fed probabilities or raw logits instead of log_softmax output."""

from __future__ import annotations

from typing import Iterator

from trainwell.lint import outputs
from trainwell.lint.context import FileContext
from trainwell.lint.loss_calls import loss_calls
from trainwell.diagnostic import Finding

CODE = "TW303"


def check(ctx: FileContext) -> Iterator[Finding]:
    for call, _, first, scope in loss_calls(ctx, {"NLLLoss"}):
        found = outputs.kind(ctx, first, scope, call.lineno)
        if found not in (outputs.SOFTMAX, outputs.RAW, outputs.SIGMOID):
            continue
        what = "probabilities (softmax)" if found != outputs.RAW else "raw logits"
        yield ctx.finding(
            CODE, call,
            f"`{ctx.snippet(call)}` feeds {what} (`{ctx.snippet(first)}`) to NLLLoss, which expects log-probabilities: "
            "the loss is not a likelihood and its gradients are wrong.",
            "Apply log_softmax before NLLLoss, or pass the logits to CrossEntropyLoss instead.",
        )
