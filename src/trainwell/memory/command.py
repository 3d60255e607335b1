"""`trainwell memory`: how much memory training needs, and what each saving buys.

Two modes: from numbers (``--params 7B``; pure Python, no torch import) or
from a model (``--model pkg.module:factory``; one real step on CPU).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from trainwell.errors import TrainwellError

MODEL_ONLY = ("input_shape", "sample", "loss")
SHAPE = ("batch", "seq", "hidden", "layers", "heads", "vocab", "ffn")
COUNTS = (*SHAPE, "shard", "top", "accumulate", "lora_rank", "what_if_gpus")  # each at least 1
MAX_PARAMS = 10**15  # 1000T: far above any model trained today; more is a typo


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_argument_group("what to size (give one)")
    source.add_argument("--params", metavar="N", help="parameter count: 7B, 1.5M, 350m, 125000")
    source.add_argument("--model", metavar="MODULE:FACTORY",
                        help="a function (or nn.Module class) that builds the model, importable from the current "
                             "directory; also path/to/file.py:factory")
    train = parser.add_argument_group("training setup")
    train.add_argument("--optimizer", default="adamw", help="sgd, sgd-momentum, adam, adamw, adam(w)-amsgrad, adagrad, "
                       "rmsprop(-momentum, -centered), adam8bit, adamw8bit, adafactor (default: adamw)")
    train.add_argument("--precision", default="32", help="32, bf16-mixed, 16-mixed (autocast); bf16-true, 16-true "
                       "(all half); bf16-master, 16-master (half + fp32 master copy, analytic only); Lightning's 16 and "
                       "bf16 mean 16-mixed and bf16-mixed (default: 32)")
    train.add_argument("--shard", type=int, default=1, metavar="N", help="shard over N GPUs (ZeRO / FSDP)")
    train.add_argument("--stage", type=int, choices=(0, 1, 2, 3), default=None,
                       help="ZeRO stage: 1 state, 2 + gradients (FSDP SHARD_GRAD_OP), 3 + weights (FSDP "
                            "FULL_SHARD, the default with --shard)")
    shape = parser.add_argument_group("transformer shape (analytic mode; activations need batch, seq, hidden, layers)")
    for name, text in (("batch", "micro-batch size per GPU"), ("seq", "sequence length"), ("hidden", "model width"),
                       ("layers", "number of blocks"), ("heads", "attention heads (default hidden/64)"),
                       ("vocab", "vocabulary size: adds the embedding, LM head and loss"),
                       ("ffn", "MLP width (default 4*hidden)")):
        shape.add_argument(f"--{name}", type=int, metavar="N", help=text)
    shape.add_argument("--no-dropout", action="store_true", help="no dropout masks (e.g. Llama-style training)")
    shape.add_argument("--attention", choices=("eager", "flash"), default="eager",
                       help="eager softmax(QK^T)V keeps s*s terms; flash (SDPA/FlashAttention) does not (eager)")
    model = parser.add_argument_group("model mode")
    model.add_argument("--input-shape", metavar="D0,D1,...", help="shape of one random input batch, e.g. 32,3,224,224")
    model.add_argument("--dtype", default="float32", help="dtype of the --input-shape batch: float32, bfloat16, "
                       "float16, long (token ids, all zeros) (default: float32)")
    model.add_argument("--sample", metavar="MODULE:FUNCTION", help="a function returning one batch: a tensor is "
                       "model(x), a tuple/list model(*x), a dict model(**x)")
    model.add_argument("--loss", metavar="MODULE:FUNCTION",
                       help="loss(output, batch) -> scalar (default: the sum of all outputs)")
    model.add_argument("--top", type=int, default=5, metavar="N", help="modules to list by activation memory")
    whatif = parser.add_argument_group("what if")
    whatif.add_argument("--freeze", action="append", metavar="PREFIX|N",
                        help="model mode: freeze parameters whose name starts with PREFIX (repeatable); "
                             "analytic mode: freeze N parameters")
    whatif.add_argument("--accumulate", type=int, default=4, metavar="K", help="gradient accumulation steps (4)")
    whatif.add_argument("--lora-rank", type=int, default=16, metavar="R", help="LoRA rank (16)")
    whatif.add_argument("--what-if-gpus", type=int, default=8, metavar="N", help="GPUs for the FSDP row (8)")
    parser.add_argument("--json", action="store_true", help="print JSON: total_bytes, one field per row, what_if")


def run(args: argparse.Namespace) -> int:
    if args.params is not None and args.model is not None:
        raise TrainwellError("give either --params (analytic estimate) or --model (measure one step), not both")
    _check_settings(args)
    if args.model is None:
        report = _estimate(args)
    else:
        report = _measure(args)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        from trainwell.memory.table import render

        print(render(report))
    return 0


def _check_settings(args: argparse.Namespace) -> None:
    """Every number in range before anything is computed, each named by its flag."""
    from trainwell.memory.units import parse_count

    for name in COUNTS:
        value = getattr(args, name)
        if value is not None and value < 1:
            raise TrainwellError(f"--{name.replace('_', '-')} {value}: must be at least 1")
    if args.params is not None:
        negative = args.params.strip().startswith("-")
        count = 0 if negative else parse_count(args.params, "--params")
        if not 1 <= count <= MAX_PARAMS:
            raise TrainwellError(f"--params {args.params}: must be between 1 and 1000T "
                                 "(a parameter count such as 7B, 1.5M or 350m)")
    if args.stage not in (None, 0) and args.shard == 1:
        raise TrainwellError(f"--stage {args.stage} shards over several GPUs: give --shard N "
                             "(N > 1 GPUs) too, or drop --stage for one GPU")


def _estimate(args: argparse.Namespace) -> Any:
    from trainwell.memory.estimate import estimate_memory

    used = [f"--{name.replace('_', '-')}" for name in MODEL_ONLY if getattr(args, name) is not None]
    if used:
        raise TrainwellError(f"{used[0]} needs --model MODULE:FACTORY")
    if args.params is None and args.hidden is None:
        raise TrainwellError("give --params N (e.g. --params 7B) or --model MODULE:FACTORY "
                             "(e.g. --model mypkg.models:build)")
    if args.freeze and len(args.freeze) > 1:
        raise TrainwellError("in the analytic mode --freeze takes one parameter count (e.g. --freeze 6B)")
    freeze = args.freeze[0] if args.freeze else None
    return estimate_memory(args.params, args.optimizer, args.precision, batch=args.batch, seq=args.seq,
                           hidden=args.hidden, layers=args.layers, heads=args.heads, vocab=args.vocab, ffn=args.ffn,
                           dropout=not args.no_dropout, attention=args.attention, gpus=args.shard, stage=args.stage,
                           freeze=freeze,
                           accumulate=args.accumulate, lora_rank=args.lora_rank, what_if_gpus=args.what_if_gpus)


def _measure(args: argparse.Namespace) -> Any:
    used = [f"--{name}" for name in SHAPE if getattr(args, name) is not None]
    if used:
        raise TrainwellError(f"{used[0]} is for the analytic mode (--params); "
                             "with --model the shape comes from the model")
    if (args.input_shape is None) == (args.sample is None):
        raise TrainwellError("with --model give one sample: --input-shape 32,3,224,224 or --sample MODULE:FUNCTION")
    from trainwell.memory.loading import call_factory, load_object
    from trainwell.memory.measure import measure_memory

    model = call_factory(load_object(args.model, "--model"), args.model, "--model")
    sample = _input(args.input_shape, args.dtype) if args.input_shape else \
        call_factory(load_object(args.sample, "--sample"), args.sample, "--sample")
    loss = load_object(args.loss, "--loss") if args.loss else None
    return measure_memory(model, sample, args.optimizer, loss_fn=loss, precision=args.precision,
                          freeze=args.freeze or (), gpus=args.shard, stage=args.stage, accumulate=args.accumulate,
                          lora_rank=args.lora_rank, what_if_gpus=args.what_if_gpus, top=args.top)


def _input(text: str, dtype_name: str) -> Any:
    import torch

    try:
        shape = tuple(int(part) for part in text.replace("x", ",").split(","))
    except ValueError:
        raise TrainwellError(f"--input-shape expects integers like 32,3,224,224, got {text!r}") from None
    if any(d <= 0 for d in shape):
        raise TrainwellError(f"--input-shape needs positive sizes, got {text!r}")
    dtype = getattr(torch, dtype_name.replace("torch.", ""), None)
    if not isinstance(dtype, torch.dtype):
        raise TrainwellError(f"--dtype: unknown dtype {dtype_name!r}; use float32, bfloat16, float16 or long")
    if dtype.is_floating_point:
        return torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(dtype)
    return torch.zeros(shape, dtype=dtype)  # token ids: 0 is valid for any embedding
