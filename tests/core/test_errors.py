"""errors.py: the user's frames only, worker errors unpacked, Python names said as flags."""

import os

import torch

import trainwell
from trainwell.errors import describe_user_error, interface_words, is_user_file


def test_library_files_are_not_the_users_and_this_one_is():
    assert not is_user_file(torch.__file__)  # site-packages
    assert not is_user_file(trainwell.__file__)
    assert not is_user_file(__import__("json").__file__)  # the standard library
    assert not is_user_file("<frozen importlib._bootstrap>")
    assert is_user_file(__file__)


def test_a_torch_error_in_user_code_shows_the_user_frame_only():
    def forward(x):
        return torch.nn.functional.linear(x, torch.zeros(3, 4))

    try:
        forward(torch.zeros(2, 5))
    except RuntimeError as error:
        text = describe_user_error(error, "the model's forward", ["the model's input: (2, 5)"])
    lines = text.splitlines()
    here = os.path.relpath(__file__)
    here = __file__ if here.startswith("..") else here  # shown relative only below the cwd
    line = forward.__code__.co_firstlineno
    assert lines == [
        "the model's forward raised RuntimeError: mat1 and mat2 shapes cannot be multiplied "
        "(2x5 and 4x3)",
        f"  {here}:{line + 4} in {test_a_torch_error_in_user_code_shows_the_user_frame_only.__name__}: "
        "forward(torch.zeros(2, 5))",
        f"  {here}:{line + 1} in forward: return torch.nn.functional.linear(x, torch.zeros(3, 4))",
        "  the model's input: (2, 5)",
    ]  # torch's own frames (functional.linear) are left out


def test_a_dataloader_worker_error_names_the_original_error_and_its_frame():
    error = ValueError(
        "Caught ValueError in DataLoader worker process 0.\n"
        "Original Traceback (most recent call last):\n"
        f'  File "{torch.__file__}", line 1, in _worker_loop\n'
        "    data = fetcher.fetch(index)\n"
        '  File "/home/me/project/data.py", line 8, in __getitem__\n'
        '    raise ValueError("sample 5 is broken")\n'
        "ValueError: sample 5 is broken\n")
    assert describe_user_error(error, "training").splitlines() == [
        "training raised Caught ValueError in DataLoader worker process 0: ValueError: sample 5 is broken",
        '  /home/me/project/data.py:8 in __getitem__: raise ValueError("sample 5 is broken")',
    ]


def test_python_arguments_become_flags_and_nothing_else_changes():
    names = ["resume", "nonfinite", "stop_at", "scheduler_interval"]
    message = ("resume='runs/int': no checkpoint; nonfinite='skip' needs; stop_at=10: must; "
               "use scheduler_interval='step'; OneCycleLR has total_steps=20; pass loss=nn.MSELoss()")
    assert interface_words(message, names) == (
        "--resume runs/int: no checkpoint; --nonfinite skip needs; --stop-at 10: must; "
        "use --scheduler-interval step; OneCycleLR has total_steps=20; pass loss=nn.MSELoss()")
