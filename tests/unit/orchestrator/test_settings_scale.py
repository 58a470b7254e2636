"""The settings of issue 23: the database URL (a secret, postgresql:// only), the executor and
the Ray address, from the environment and from flags."""

from __future__ import annotations

import pytest

from orchestrator.cli import build_parser
from orchestrator.settings import Settings, SettingsError


def test_defaults_keep_everything_local() -> None:
    settings = Settings.from_env({})
    assert (settings.database_url, settings.executor, settings.ray_address) == (None, "threads", None)


def test_the_database_url_is_a_secret_read_from_the_environment() -> None:
    url = "postgresql://app:s3cret@db.internal/tooldeck"
    settings = Settings.from_env({"TOOLDECK_DATABASE_URL": url})
    assert settings.database_url is not None and settings.database_url.get_secret_value() == url
    assert "s3cret" not in repr(settings) and "s3cret" not in str(settings.public_dict())


@pytest.mark.parametrize("bad", ["mysql://root:s3cret@db/x", "db.internal/tooldeck"])
def test_a_database_url_that_is_not_postgresql_names_the_variable_and_hides_the_value(bad: str) -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({"TOOLDECK_DATABASE_URL": bad})
    message = str(caught.value)
    assert message.startswith("environment variable TOOLDECK_DATABASE_URL=...: ")
    assert "must start with postgresql://" in message and "s3cret" not in message


def test_executor_and_ray_address_from_the_environment_and_flags() -> None:
    env = {"TOOLDECK_EXECUTOR": " Ray ", "TOOLDECK_RAY_ADDRESS": "ray://head:10001"}
    assert Settings.from_env(env).executor == "ray"
    args = build_parser().parse_args(["--executor", "threads", "--ray-address", "auto", "q"])
    flagged = Settings.from_env(env, executor=args.executor, ray_address=args.ray_address)
    assert (flagged.executor, flagged.ray_address) == ("threads", "auto")
    with pytest.raises(SettingsError, match="TOOLDECK_EXECUTOR='dask': Input should be 'threads' or 'ray'"):
        Settings.from_env({"TOOLDECK_EXECUTOR": "dask"})
