"""``tooldeck`` on two hosts sharing one PostgreSQL: the calls one host runs are counted in the
database (no metrics file), and ``tooldeck stats`` on the other host shows them; ``--metrics
FILE`` still reads a file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.integration.store.conftest import WeatherAPI, base_env, weather_manual


def tooldeck(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tools.cli", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def host(tmp_path: Path, name: str, database_url: str) -> tuple[Path, dict[str, str]]:
    """A project directory and the environment of one host (its own home), the shared database."""
    project = tmp_path / name / "project"
    project.mkdir(parents=True)
    return project, base_env(tmp_path / name / "home", TOOLDECK_DATABASE_URL=database_url)


def test_calls_run_on_one_host_are_counted_where_every_host_reads_them(
    tmp_path: Path, database_url: str, weather_api: WeatherAPI
) -> None:
    project, env = host(tmp_path, "a", database_url)
    (project / "apis.json").write_text(json.dumps(weather_manual(weather_api.url)))
    for setup in (("catalog", "sync", "--manuals", "apis.json"), ("adopt", "apis:weather"), ("approve", "weather")):
        done = tooldeck(project, env, *setup)
        assert done.returncode == 0, done.stderr
    for city in ("Lisbon", "Porto", ""):  # the last one is refused by the API
        tooldeck(project, env, "run", "weather", "--arg", f"city={city}")
    assert not (project / ".tooldeck" / "metrics.json").exists()
    other, other_env = host(tmp_path, "b", database_url)
    shown = tooldeck(other, other_env, "stats", "--json")
    assert shown.returncode == 0, shown.stderr
    rows = {row["tool"]: row for row in json.loads(shown.stdout)}
    assert (rows["weather"]["calls"], rows["weather"]["successes"], rows["weather"]["failures"]) == (3, 2, 1)
    one = tooldeck(other, other_env, "stats", "weather", "--json")
    assert json.loads(one.stdout)[0]["calls"] == 3
    from_file = tooldeck(other, other_env, "stats", "--json", "--metrics", str(project / "nothing.json"))
    assert from_file.returncode == 2 and "does not exist" in from_file.stderr


def test_an_unreachable_database_is_a_clear_error_without_the_password(tmp_path: Path) -> None:
    url = f"postgresql://app:s3cret@/nowhere?host={tmp_path}&connect_timeout=2"
    project, env = host(tmp_path, "a", url)
    shown = tooldeck(project, env, "stats")
    assert shown.returncode == 2
    assert "metrics: database postgresql://app@" in shown.stderr and "cannot be used" in shown.stderr
    assert "s3cret" not in shown.stderr + shown.stdout
