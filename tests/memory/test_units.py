import pytest

from trainwell.errors import TrainwellError
from trainwell.memory.units import format_bytes, format_count, parse_count


@pytest.mark.parametrize("text, value", [("7B", 7_000_000_000), ("1.5M", 1_500_000), ("350m", 350_000_000),
                                         ("125k", 125_000), ("1e9", 1_000_000_000), ("12345", 12345),
                                         ("6.7b", 6_700_000_000), ("2T", 2 * 10**12), ("1_000", 1000)])
def test_parse_count(text, value):
    assert parse_count(text) == value


@pytest.mark.parametrize("text", ["7Q", "abc", "-1B", "", "nanB"])
def test_parse_count_rejects(text):
    with pytest.raises(TrainwellError, match="--params"):
        parse_count(text)


def test_format_bytes_shows_binary_and_decimal():
    assert format_bytes(14.2e9) == "13.2 GiB (14.2 GB)"
    assert format_bytes(16e9) == "14.9 GiB (16.0 GB)"
    assert format_bytes(512) == "512 B"
    assert format_bytes(3 * 2**20) == "3.0 MiB (3.1 MB)"


def test_format_count():
    assert format_count(6_740_000_000) == "6.74B"
    assert format_count(999) == "999"
