"""The bundled default: digits, a stratified held-out split, standardisation from train only."""

import math

import numpy as np
import torch
from sklearn.datasets import load_digits

from trainwell.fit import config as cfg
from trainwell.fit.default import PRESET, VALIDATION_FRACTION, make_data, make_model


def test_split_is_held_out_stratified_and_covers_every_sample():
    (x_train, y_train), (x_val, y_val) = make_data()
    _, y = load_digits(return_X_y=True)
    assert len(x_train) + len(x_val) == len(y) and x_train.shape[1] == x_val.shape[1] == 64
    assert len(x_val) == math.ceil(len(y) * VALIDATION_FRACTION)
    assert x_train.dtype == torch.float32 and y_train.dtype == torch.long
    share = np.bincount(y) / len(y)
    assert np.allclose(np.bincount(y_val.numpy(), minlength=10) / len(y_val), share, atol=0.01)
    assert np.allclose(np.bincount(y_train.numpy(), minlength=10) / len(y_train), share, atol=0.01)
    # no validation row is also a training row
    train_rows = {tuple(row) for row in x_train.numpy().round(4)}
    assert sum(tuple(row) in train_rows for row in x_val.numpy().round(4)) < len(x_val) * 0.02


def test_standardisation_is_fitted_on_the_training_split_only():
    (x_train, _), (x_val, _) = make_data()
    mean, std = x_train.mean(0), x_train.std(0, unbiased=False)
    varying = std > 0
    assert torch.allclose(mean, torch.zeros(64), atol=1e-5)
    assert ((std[varying] <= 1 + 1e-4)).all()
    # the validation split was moved by the training statistics, not its own
    assert not torch.allclose(x_val.mean(0), torch.zeros(64), atol=1e-2)


def test_model_maps_64_features_to_10_classes():
    model = make_model()
    assert model(torch.zeros(5, 64)).shape == (5, 10)


def test_preset_is_a_valid_config():
    config = cfg.build(PRESET)
    assert config.model == "trainwell.fit.default:make_model"
    assert config.scheduler.interval == "step" and config.monitor == "val_acc"
