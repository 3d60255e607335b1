"""One model at a time: correct scripts that build, train and drop several
models (cross-validation folds, a teacher then a student, pretraining then
fine-tuning) report nothing; and two watches in one process share no state."""

from __future__ import annotations

import torch
from torch import nn

from trainwell.runtime.watcher import watch


def net() -> nn.Module:
    return nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 3))


def fit(model: nn.Module, x: torch.Tensor, y: torch.Tensor, steps: int = 6, params=None) -> None:
    optimizer = torch.optim.AdamW(params if params is not None else model.parameters(), lr=1e-2)
    model.train()
    for i in range(steps):
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x[i::steps]), y[i::steps]).backward()
        optimizer.step()


def evaluate(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    model.eval()
    with torch.no_grad():
        return model(x).argmax(1)


def data() -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    return torch.randn(96, 6), torch.randint(0, 3, (96,))


def cross_validation_folds() -> None:
    x, y = data()
    for fold in range(3):
        model = net()  # a new model and optimizer per fold; the last fold's stays alive meanwhile
        fit(model, x[fold::2], y[fold::2])
        evaluate(model, x)


def teacher_then_student() -> None:
    x, y = data()
    teacher = net()
    fit(teacher, x, y)
    teacher.eval()
    student = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
    for i in range(6):
        with torch.no_grad():
            soft = teacher(x[i::6]).softmax(1)
        optimizer.zero_grad()
        nn.functional.cross_entropy(student(x[i::6]), soft).backward()
        optimizer.step()


def pretrain_then_finetune() -> None:
    x, y = data()
    model = net()
    fit(model, x, y)  # pretraining, all parameters
    head = nn.Linear(16, 3)
    model[-1] = head
    for param in model[:-1].parameters():
        param.requires_grad_(False)
    fit(model, x, y, params=head.parameters())  # fine-tuning the new head only
    evaluate(model, x)


def two_models_one_after_the_other() -> None:
    x, y = data()
    first, second = net(), net()
    fit(first, x, y)
    fit(second, x, y)  # `first` still holds its last gradients
    evaluate(first, x), evaluate(second, x)


def test_correct_scripts_with_several_models_report_nothing() -> None:
    for script in (cross_validation_folds, teacher_then_student, pretrain_then_finetune, two_models_one_after_the_other):
        with watch() as w:
            script()
        assert (w.findings, w.faults) == ([], []), (script.__name__, [(f.code, f.line, f.message) for f in w.findings])
        assert w.steps >= 6


def test_params_left_out_of_the_second_models_optimizer_are_still_reported() -> None:
    x, y = data()
    with watch() as w:
        fit(net(), x, y)
        model = net()
        fit(model, x, y, params=model[-1].parameters())  # forgot the body: it gets gradients, no optimizer
    [finding] = w.findings
    assert finding.code == "TW603" and "4 parameter(s) receive gradients but belong to no optimizer" in finding.message


def test_no_tw603_on_top_of_a_tw102() -> None:
    x, y = data()
    model = net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch() as w:
        for i in range(6):
            nn.functional.cross_entropy(model(x[i::6]), y[i::6]).backward()
            optimizer.zero_grad()  # noqa: TW102 -- on purpose: wipes what backward() gave
            optimizer.step()
    assert [f.code for f in w.findings] == ["TW102"]


def buggy_then_correct(zero_grad: bool) -> None:
    x, y = data()
    model = net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model.train()
    for i in range(6):
        if zero_grad:
            optimizer.zero_grad()
        nn.functional.cross_entropy(model(x[i::6]), y[i::6]).backward()
        optimizer.step()
    model.eval()


def test_two_watches_in_one_process_share_nothing() -> None:
    with watch() as first:
        buggy_then_correct(zero_grad=False)
    with watch() as second:
        buggy_then_correct(zero_grad=True)
    with watch() as third:
        buggy_then_correct(zero_grad=False)
    assert [(f.code, f.step, f.count) for f in first.findings] == [("TW101", 2, 5)]
    assert (second.findings, second.steps) == ([], 6)
    assert [(f.code, f.step, f.count) for f in third.findings] == [("TW101", 2, 5)] and third.steps == 6


def test_training_in_eval_mode_on_purpose_is_not_tw201_or_tw205() -> None:
    x, y = data()
    frozen_statistics = net()
    whole_model_in_eval = net()
    with watch() as w:
        optimizer = torch.optim.SGD(frozen_statistics.parameters(), lr=0.1)
        for i in range(6):
            frozen_statistics.train()
            for module in frozen_statistics.modules():
                if isinstance(module, nn.BatchNorm1d):
                    module.eval()  # frozen-BatchNorm fine-tuning: statistics fixed, affine parameters train
            optimizer.zero_grad()
            nn.functional.cross_entropy(frozen_statistics(x[i::6]), y[i::6]).backward()
            optimizer.step()
        whole_model_in_eval.eval()  # no dropout, fixed statistics, on purpose: it trains before any evaluation
        optimizer = torch.optim.SGD(whole_model_in_eval.parameters(), lr=0.1)
        for epoch in range(2):
            for i in range(6):
                optimizer.zero_grad()
                nn.functional.cross_entropy(whole_model_in_eval(x[i::6]), y[i::6]).backward()
                optimizer.step()
            evaluate(whole_model_in_eval, x)
    assert (w.findings, w.faults) == ([], [])
