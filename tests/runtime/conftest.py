"""One intra-op thread for the watcher's tests: the corpus scripts are tiny, and
on a loaded 2-core machine a second thread makes step times (and so TW404's
share of waiting) swing by 100x."""

import pytest
import torch


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(saved)
