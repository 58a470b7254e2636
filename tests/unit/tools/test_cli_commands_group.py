"""Commands added to ``tooldeck`` through the ``tooldeck.commands`` entry-point group.

``tools`` never imports ``orchestrator``: ``tooldeck ui`` reaches the CLI as an entry point
declared in setup.cfg, found in the installed distributions' metadata like pytest's plugins.
"""

from __future__ import annotations

import configparser
import logging
import textwrap
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from tools.cli.app import COMMAND_GROUP, build_app, command_entry_points

ROOT = Path(__file__).resolve().parents[3]


def register_hello(app: typer.Typer) -> None:
    """A command of an add-on package."""

    @app.command("hello")
    def hello(name: str = "world") -> None:
        """Say hello.

        [b]Examples[/b]

          tooldeck hello --name you
        """
        typer.echo(f"hello {name}")


def _entry(name: str, value: str) -> EntryPoint:
    return EntryPoint(name=name, value=value, group=COMMAND_GROUP)


def test_an_entry_point_adds_its_command() -> None:
    app = build_app([_entry("hello", f"{__name__}:register_hello")])
    result = CliRunner().invoke(app, ["hello", "--name", "you"])
    assert result.exit_code == 0, result.output
    assert result.output == "hello you\n"


def test_a_broken_entry_point_is_left_out_with_a_warning_and_the_rest_works(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="tools.cli.app")
    app = build_app([_entry("ghost", "no_such_module_here:register"), _entry("hello", f"{__name__}:register_hello")])
    assert "tooldeck command 'ghost' (no_such_module_here:register) not added: ModuleNotFoundError" in caplog.text
    assert CliRunner().invoke(app, ["hello"]).output == "hello world\n"


def _distribution(root: Path, name: str, commands: dict[str, str]) -> None:
    info = root / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    lines = "\n".join(f"{key} = {value}" for key, value in commands.items())
    (info / "entry_points.txt").write_text(f"[{COMMAND_GROUP}]\n{lines}\n")


def test_installed_entry_points_are_found_once_per_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two distributions declaring the same command (an editable and a regular install): one wins."""
    _distribution(tmp_path / "a", "addon_a", {"hello": f"{__name__}:register_hello", "zeta": "x:y"})
    _distribution(tmp_path / "b", "addon_b", {"hello": "elsewhere:register"})
    monkeypatch.syspath_prepend(str(tmp_path / "b"))
    monkeypatch.syspath_prepend(str(tmp_path / "a"))
    found = {entry.name: entry.value for entry in command_entry_points() if entry.name in ("hello", "zeta")}
    assert found == {"hello": f"{__name__}:register_hello", "zeta": "x:y"}


def test_setup_cfg_declares_tooldeck_ui_as_an_entry_point() -> None:
    config = configparser.ConfigParser(interpolation=None)
    config.read(ROOT / "setup.cfg")
    declared = textwrap.dedent(config["options.entry_points"][COMMAND_GROUP]).strip().splitlines()
    assert "ui = orchestrator.ui.command:register" in [line.strip() for line in declared]
    ui_extra = config["options.extras_require"]["ui"]
    assert {"fastapi", "uvicorn", "jinja2", "python-multipart"} <= {
        line.split(">=")[0].strip() for line in ui_extra.strip().splitlines()
    }
    assert "%(ui)s" in config["options.extras_require"]["all"]


def test_the_ui_command_registers_on_the_tooldeck_app() -> None:
    app = build_app([_entry("ui", "orchestrator.ui.command:register")])
    result = CliRunner().invoke(app, ["ui", "--help"])
    assert result.exit_code == 0, result.output
    for option in ("--port", "--host", "--token", "--registry", "--no-builtins", "Examples"):
        assert option in result.output
