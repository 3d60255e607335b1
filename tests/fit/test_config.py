"""`trainwell fit` config: YAML and flags validated into typed dataclasses."""

import argparse

import pytest

from trainwell.errors import TrainwellError
from trainwell.fit import command
from trainwell.fit import config as cfg
from trainwell.fit import factories


def error_of(fn, *args):
    with pytest.raises(TrainwellError) as info:
        fn(*args)
    return str(info.value)


def test_unknown_key_names_it_and_lists_the_valid_ones():
    message = error_of(cfg.build, {"max_epoch": 3}, "run.yaml")
    assert message.startswith("run.yaml: unknown key 'max_epoch' (did you mean 'max_epochs'?)")
    assert "valid keys: model, data," in message and "max_epochs" in message


def test_wrong_type_names_key_expected_type_and_value():
    message = error_of(cfg.build, {"batch_size": "big"})
    assert message == "config: batch_size: expected int, got 'big' (str)"
    assert "clip_grad_norm: expected float or null" in error_of(cfg.build, {"clip_grad_norm": [1]})
    # a bool is not an int, an int is a float
    assert "expected int" in error_of(cfg.build, {"max_epochs": True})
    assert cfg.build({"clip_grad_norm": 1}).clip_grad_norm == 1.0


def test_choices_and_sections_are_checked():
    assert "precision: 'fp16' is not one of 32, bf16-mixed, 16-mixed" in error_of(
        cfg.build, {"precision": "fp16"})
    assert "'name' is missing" in error_of(cfg.build, {"scheduler": {"interval": "step"}})
    assert "interval: 'batch' is not one of epoch, step" in error_of(
        cfg.build, {"scheduler": {"name": "StepLR", "interval": "batch"}})
    config = cfg.build({"optimizer": "SGD", "scheduler": {"name": "StepLR", "step_size": 2}})
    assert config.optimizer == cfg.OptimizerConfig("SGD", {})
    assert config.scheduler == cfg.SchedulerConfig("StepLR", "epoch", {"step_size": 2})


def test_yaml_reads_exponents_as_numbers_and_reports_syntax_errors(tmp_path):
    assert cfg.parse_yaml("lr: 1e-3\nn: 10", "t") == {"lr": 1e-3, "n": 10}
    bad = tmp_path / "run.yaml"
    bad.write_text("max_epochs: 3\n  batch_size: [\n")
    assert error_of(cfg.read_yaml, bad).startswith(f"{bad}:2: invalid YAML")
    bad.write_text("- 1\n- 2\n")
    assert "must be a mapping" in error_of(cfg.read_yaml, bad)


def test_merge_keeps_section_keys_unless_the_class_changes():
    base = {"optimizer": {"name": "AdamW", "lr": 1e-3, "weight_decay": 0.01}, "max_epochs": 3}
    same = cfg.merge(base, {"optimizer": {"lr": 0.1}})
    assert same["optimizer"] == {"name": "AdamW", "lr": 0.1, "weight_decay": 0.01}
    other = cfg.merge(base, {"optimizer": {"name": "SGD", "lr": 0.1}})
    assert other["optimizer"] == {"name": "SGD", "lr": 0.1}
    assert cfg.merge(base, {"max_epochs": 5})["max_epochs"] == 5


def test_dump_builds_the_same_config_again():
    config = cfg.build({"model": "m:f", "data": "m:g", "metrics": ["accuracy"],
                        "optimizer": {"name": "SGD", "lr": 0.5, "momentum": 0.9},
                        "scheduler": {"name": "OneCycleLR", "interval": "step", "max_lr": 0.1},
                        "clip_grad_norm": 1.0, "keep_last": None})
    assert cfg.build(cfg.parse_yaml(cfg.dump(config), "t")) == config


def test_every_config_key_has_a_flag():
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    flags = {s for action in parser._actions for s in action.option_strings}
    special = {"optimizer": "--optimizer", "scheduler": "--scheduler", "metrics": "--metric",
               "loggers": "--logger"}
    for name in cfg.field_names():
        assert special.get(name, "--" + name.replace("_", "-")) in flags, name


def test_optimizer_scheduler_and_loss_names_are_checked_against_torch():
    message = error_of(factories.optimizer_factory, cfg.OptimizerConfig("Adamw", {}))
    assert "optimizer 'Adamw' is not in torch.optim" in message and "AdamW, " in message
    message = error_of(factories.optimizer_factory, cfg.OptimizerConfig("SGD", {"lrate": 0.1}))
    assert "lrate: unknown argument of optimizer SGD; valid arguments: lr, momentum" in message
    message = error_of(factories.scheduler_factory, cfg.SchedulerConfig("Cosine"), 10)
    assert "torch.optim.lr_scheduler" in message and "CosineAnnealingLR" in message
    assert "missing required argument(s) step_size" in error_of(
        factories.scheduler_factory, cfg.SchedulerConfig("StepLR"), 10)
    assert "'MSELoss'" in error_of(factories.loss_function, "MSELos")


def test_schedules_get_the_run_length_when_not_given():
    import torch

    optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    one_cycle = factories.scheduler_factory(cfg.SchedulerConfig("OneCycleLR", "step", {"max_lr": 1.0}), 37)
    assert one_cycle(optimizer).total_steps == 37
    cosine = factories.scheduler_factory(cfg.SchedulerConfig("CosineAnnealingLR", "epoch"), 5)
    assert cosine(optimizer).T_max == 5
    explicit = factories.scheduler_factory(cfg.SchedulerConfig("CosineAnnealingLR", "epoch", {"T_max": 9}), 5)
    assert explicit(optimizer).T_max == 9


def test_factories_import_from_the_current_directory(tmp_path, monkeypatch):
    (tmp_path / "tw_cfg_factories.py").write_text("def make():\n    return 42\nvalue = 3\n"
                                                  "def broken():\n    return 1 / 0\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.path", [p for p in __import__("sys").path if p not in ("", str(tmp_path))])
    assert factories.call_factory("tw_cfg_factories:make", "model") == 42
    assert "is not 'module:function'" in error_of(factories.import_factory, "tw_cfg_factories", "model")
    assert "no module named 'nope_tw'" in error_of(factories.import_factory, "nope_tw:make", "model")
    assert "has no attribute 'other'" in error_of(factories.import_factory, "tw_cfg_factories:other", "data")
    assert "is not callable (it is a int)" in error_of(factories.import_factory, "tw_cfg_factories:value", "data")
    message = error_of(factories.call_factory, "tw_cfg_factories:broken", "data")
    assert "raised ZeroDivisionError: division by zero (at tw_cfg_factories.py:5)" in message
