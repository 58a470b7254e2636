"""load_config: JSON and TOML, relative paths, and errors that name the file and keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.context_service import ConfigError, load_config


def test_sample_toml_config(examples: Path) -> None:
    config = load_config(examples / "context.toml")
    user = config.users["default"]
    assert user.timezone == "Europe/Lisbon"
    assert [(a.category, a.platform) for a in user.adapters] == [
        ("calendar", "ics"),
        ("finance", "csv"),
        ("finance", "ofx"),
        ("weather", "open-meteo"),
        ("commute", "osrm"),
    ]
    assert user.adapters[0].options["path"] == str(examples / "calendar.ics")
    assert user.adapters[3].cache_ttl_seconds == 600
    assert config.places["office"].label == "Office"


def test_json_config_with_absolute_path(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(
        json.dumps({"users": {"u": {"adapters": [{"category": "finance", "platform": "csv", "path": "/data/x.csv"}]}}})
    )
    config = load_config(path)
    assert config.users["u"].adapters[0].options == {"path": "/data/x.csv"}


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("a.json", "{not json", "a.json: invalid JSON"),
        ("a.toml", "x = [", "a.toml: invalid TOML"),
        ("a.json", "[1, 2]", "a.json: the config must be an object/table"),
        (
            "a.json",
            '{"users": {"u": {"timezon": "UTC"}}}',
            "a.json: users.u.timezon: Extra inputs are not permitted",
        ),
        (
            "a.json",
            '{"cache_ttl_seconds": -1}',
            "a.json: cache_ttl_seconds: Input should be greater than or equal to 0",
        ),
    ],
)
def test_invalid_configs(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(message)


def test_missing_and_oversized_config(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^nope.json: cannot read config"):
        load_config(tmp_path / "nope.json")
    big = tmp_path / "big.json"
    big.write_text(" " * (1024 * 1024 + 1))
    with pytest.raises(ConfigError, match="larger than 1 MiB"):
        load_config(big)
