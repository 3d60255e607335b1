"""Activation memory of a standard transformer, term by term.

The per-layer terms follow Korthikanti et al., "Reducing Activation
Recomputation in Large Transformer Models" (2022), which for 16-bit
activations and dropout gives ``s*b*h*(34 + 5*a*s/h)`` bytes per layer. We
keep each saved tensor as its own term so that the dtype of each can follow
the precision (fp32, pure half, or autocast, where norms, softmax and the
residual stream stay fp32) and so that the FFN width ``F`` need not be 4h:

    LayerNorm inputs       2 * s*b*h   (residual stream dtype)
    QKV-linear input       s*b*h       (matmul dtype)
    Q and K for QK^T       2 * s*b*h
    softmax output         a*s*s*b     (softmax dtype)
    probs fed to P@V       a*s*s*b     only when dropout or autocast makes a new tensor
    V for P@V              s*b*h
    out-projection input   s*b*h
    FFN: fc1 input s*b*h, GELU input s*b*F, fc2 input s*b*F
    dropout masks          a*s*s*b + 2*s*b*h bytes (1-byte masks, as on CUDA)
    LayerNorm mean/rstd    2 * 2 * s*b fp32 (not in the paper; small)

With ``--vocab``: token ids and targets (int64), the final LayerNorm input,
the LM-head input and the log-softmax output ``s*b*V`` of the cross-entropy
(fp32 under autocast). Under autocast, each matmul weight is cast to half once
per forward and backward keeps the copy: 2 bytes per matmul parameter.
With ``attention="flash"`` (``F.scaled_dot_product_attention``'s fused
kernels, FlashAttention) the attention core keeps q, k, v (3*s*b*h, views of
the QKV output), its output (s*b*h, laid out (b, s, a, d), so it is also the
out-projection input: one storage) and an fp32 log-sum-exp (a*s*b) instead of
the s*s terms; dropout is regenerated from the RNG state, so no mask.
The architecture assumed: pre-LN GPT blocks, fused QKV, GELU MLP, head tied
to the token embedding, no positional table.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainwell.errors import TrainwellError
from trainwell.memory.precision import Precision

INDEX_BYTES = 8  # int64 token ids / targets
STAT_BYTES = 4  # LayerNorm mean and rstd are kept in fp32 for half inputs on CUDA


@dataclass(frozen=True)
class TransformerShape:
    """The shape of a standard GPT-style transformer and of one micro-batch."""

    batch: int
    seq: int
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int | None = None
    dropout: bool = True
    attention: str = "eager"  # "eager" (softmax(QK^T)V, the paper) or "flash" (fused SDPA / FlashAttention)

    def __post_init__(self) -> None:
        for name in ("batch", "seq", "hidden", "layers", "heads", "ffn"):
            if getattr(self, name) <= 0:
                raise TrainwellError(f"--{name} must be a positive integer, got {getattr(self, name)}")
        if self.vocab is not None and self.vocab <= 0:
            raise TrainwellError(f"--vocab must be a positive integer, got {self.vocab}")
        if self.attention not in ("eager", "flash"):
            raise TrainwellError(f"--attention must be eager or flash, got {self.attention!r}")
        if self.hidden % self.heads:
            raise TrainwellError(f"--hidden {self.hidden} is not divisible by --heads {self.heads}; "
                                 "each head needs hidden/heads channels")

    def layer_parameter_shapes(self) -> list[tuple[int, ...]]:
        """One block: LN1, fused QKV, out projection, LN2, fc1, fc2 (weights and biases)."""
        h, f = self.hidden, self.ffn
        return [(h,), (h,), (3 * h, h), (3 * h,), (h, h), (h,), (h,), (h,), (f, h), (f,), (h, f), (h,)]

    def parameter_shapes(self) -> list[tuple[int, ...]]:
        """All parameters: the blocks, the final LayerNorm and (with a vocab) the tied embedding."""
        shapes = self.layer_parameter_shapes() * self.layers + [(self.hidden,), (self.hidden,)]
        if self.vocab:
            shapes.append((self.vocab, self.hidden))
        return shapes

    def linear_shapes(self) -> list[tuple[int, int]]:
        """(out, in) of every linear layer in the blocks (what LoRA adapts)."""
        h, f = self.hidden, self.ffn
        return [(3 * h, h), (h, h), (f, h), (h, f)] * self.layers

    def layer_matmul_params(self) -> int:
        """Weights of the four matmuls of one block (what autocast casts to half)."""
        return 4 * self.hidden * self.hidden + 2 * self.hidden * self.ffn

def _sizes(precision: Precision) -> dict[str, int]:
    """Element size of each kind of saved tensor."""
    if precision.activations == "fp32":
        return {"stream": 4, "matmul": 4, "softmax": 4, "act": 4, "logits": 4}
    if precision.activations == "half":
        return {"stream": 2, "matmul": 2, "softmax": 2, "act": 2, "logits": 2}
    return {"stream": 4, "matmul": 2, "softmax": 4, "act": 2, "logits": 4}  # CUDA autocast op lists


def layer_terms(shape: TransformerShape, precision: Precision) -> dict[str, int]:
    """Bytes saved for backward by ONE transformer block, by term."""
    e = _sizes(precision)
    s, b, h, a, f = shape.seq, shape.batch, shape.hidden, shape.heads, shape.ffn
    sbh, ass_b = s * b * h, a * s * s * b
    terms = {
        "layernorm inputs": 2 * sbh * e["stream"],
        "layernorm mean/rstd": 2 * 2 * s * b * STAT_BYTES,
        "qkv input": sbh * e["matmul"],
        "out-projection input": sbh * e["matmul"],  # flash: the kernel's output itself (same storage)
        "fc1 input": sbh * e["matmul"],
        "gelu input": s * b * f * e["act"],
        "fc2 input": s * b * f * e["matmul"],
    }
    if shape.attention == "flash":  # the fused kernel keeps q, k, v, its output and the log-sum-exp, no s*s term
        terms["q, k, v"] = 3 * sbh * e["matmul"]
        terms["logsumexp"] = a * s * b * 4
    else:
        terms["q, k"] = 2 * sbh * e["matmul"]
        terms["v"] = sbh * e["matmul"]
        terms["softmax output"] = ass_b * e["softmax"]
        if shape.dropout or precision.autocast:
            terms["attention probs for P@V"] = ass_b * e["matmul"]
    if shape.dropout:  # residual dropouts; eager attention also keeps the mask of the attention probs
        terms["dropout masks"] = 2 * sbh + (ass_b if shape.attention == "eager" else 0)
    if precision.autocast:
        terms["autocast weight copies"] = 2 * shape.layer_matmul_params()
    return terms


def head_terms(shape: TransformerShape, precision: Precision) -> dict[str, int]:
    """Bytes saved outside the blocks: embedding, final norm, LM head and the loss."""
    if not shape.vocab:
        return {}
    e = _sizes(precision)
    s, b, h = shape.seq, shape.batch, shape.hidden
    terms = {
        "token ids and targets": 2 * s * b * INDEX_BYTES,
        "final layernorm": s * b * h * e["stream"] + 2 * s * b * STAT_BYTES,
        "lm-head input": s * b * h * e["matmul"],
        "log-softmax output": s * b * shape.vocab * e["logits"],
    }
    if shape.dropout:
        terms["embedding dropout mask"] = s * b * h
    if precision.autocast:
        terms["autocast weight copies (head)"] = 2 * shape.vocab * h
    return terms


def activation_terms(shape: TransformerShape, precision: Precision) -> dict[str, int]:
    """All bytes saved for backward in one forward of ``shape.batch`` sequences, by term."""
    totals = {name: value * shape.layers for name, value in layer_terms(shape, precision).items()}
    for name, value in head_terms(shape, precision).items():
        totals[name] = totals.get(name, 0) + value
    return totals


def checkpointed_bytes(shape: TransformerShape, precision: Precision) -> int:
    """Activation checkpointing per block: keep each block's input, recompute one block at a time."""
    kept_inputs = shape.layers * shape.seq * shape.batch * shape.hidden * _sizes(precision)["stream"]
    one_layer = sum(layer_terms(shape, precision).values())
    return kept_inputs + one_layer + sum(head_terms(shape, precision).values())
