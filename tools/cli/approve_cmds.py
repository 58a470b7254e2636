"""``tooldeck approve | revoke | configure freedom | configure show``: the freedom dial and
the per-tool approvals (``~/.config/tooldeck/approvals.json``), plus what ``tooldeck run``
uses to apply them: the policy of this invocation and a terminal prompt."""

from __future__ import annotations

import json
import sys
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer

from tools._terminal import markup_safe, safe_text
from tools.cli._context import CliContext, console, fail, print_json, print_table, say, state

if TYPE_CHECKING:
    from rich.console import Console
    from rich.prompt import Prompt

    from tools.approvals import ApprovalPolicy, ApprovalRequest, ApprovalsBackend, Approve, Approver, Deny
    from tools.registry import LocalToolRegistry

configure_app = typer.Typer(
    help="The freedom dial: how much tools may run without asking a person.",
    no_args_is_help=True,
)
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
_EDIT_TRIES = 3


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("approve")(approve)
    app.command("revoke")(revoke)
    app.add_typer(configure_app, name="configure")


# ---------------------------------------------------------------------- shared with `run`


def approvals_store(cli: CliContext) -> ApprovalsBackend:
    """The user's approvals file (``$XDG_CONFIG_HOME/tooldeck/approvals.json``), or the
    approvals in the database of ``TOOLDECK_DATABASE_URL``."""
    from tools.approvals import open_approvals_store

    try:
        store = open_approvals_store(cli.env, database_url=cli.database_url)
    except ValueError as exc:
        fail(str(exc))
    close = getattr(store, "close", None)
    if callable(close):
        cli._closers.append(close)
    return store


def cli_policy(cli: CliContext, store: ApprovalsBackend | None = None) -> ApprovalPolicy:
    """The policy of this invocation: ``TOOLDECK_FREEDOM`` over the file's level over ``medium``.

    Raises:
        CliError: ``TOOLDECK_FREEDOM`` is not a level, or the approvals file is unusable.
    """
    from tools.approvals import ApprovalError, ApprovalPolicy, freedom_from_env

    try:
        policy = ApprovalPolicy(freedom_from_env(cli.env), store if store is not None else approvals_store(cli))
        _ = policy.level  # read the file now: a corrupt one is a setup error, not a tool error
    except ApprovalError as exc:
        fail(str(exc))
    return policy


class ApproveMode(str, Enum):
    """``tooldeck run --approve``: what happens to a call that needs a person's approval."""

    ASK = "ask"
    DENY = "deny"


def cli_approver(mode: ApproveMode, *, stdin: TextIO | None = None, err: Console | None = None) -> Approver | None:
    """``--approve ask``: a :class:`TerminalApprover`; ``deny``: none (calls that need approval are refused)."""
    if mode is ApproveMode.DENY:
        return None
    return TerminalApprover(stdin=stdin, console=err)


class TerminalApprover:
    """Asks the person at the terminal: run once, always (remember), edit the arguments, or no.

    When stdin is not a terminal nobody can answer: the call is denied with a message saying
    how to approve it beforehand.

    Args:
        stdin: Where answers are read (default ``sys.stdin``).
        console: Where the question is shown (default: a rich console on stderr).
    """

    def __init__(self, *, stdin: TextIO | None = None, console: Console | None = None) -> None:
        self._stdin = stdin
        self._console = console

    def __call__(self, request: ApprovalRequest) -> Approve | Deny:
        """The person's decision about ``request``."""
        from tools.approvals import Approve, Deny

        stdin = self._stdin if self._stdin is not None else sys.stdin
        if not _isatty(stdin):
            return Deny(
                "nobody could be asked, because stdin is not a terminal; approve the tool first with "
                f"`tooldeck approve {request.tool}` (or raise the level with `tooldeck configure freedom`), "
                "or run the command in a terminal"
            )
        out = self._console if self._console is not None else console(stderr=True)
        self._show(out, request)
        prompt = _line_prompt()
        try:
            answer = prompt.ask(
                "Run it? [b]y[/]es once, [b]a[/]lways for this version, [b]e[/]dit the arguments, [b]n[/]o",
                choices=["y", "a", "e", "n"],
                default="n",
                console=out,
                stream=stdin,
            )
            if answer == "e":
                return self._edit(out, stdin, prompt)
        except EOFError:
            return Deny("no answer came from the terminal")
        if answer in ("y", "a"):
            return Approve(remember=answer == "a")
        return Deny("denied at the terminal")

    @staticmethod
    def _show(out: Console, request: ApprovalRequest) -> None:
        from rich.panel import Panel
        from rich.text import Text

        arguments = json.dumps(request.arguments, indent=2, ensure_ascii=False, default=str)
        body = (
            f"[b]tool[/]       {markup_safe(request.tool)}\n"
            f"[b]risk[/]       {markup_safe(str(request.risk))}\n"
            f"[b]why[/]        {markup_safe(request.reason)}\n"
            f"[b]arguments[/]\n{markup_safe(arguments)}"
        )
        if request.preview is not None:  # what an install or a promotion would put in place
            body += f"\n[b]what it changes[/]\n{markup_safe(request.preview.rstrip())}"
        out.print(Panel(Text.from_markup(body), title="approval needed", expand=False))

    @staticmethod
    def _edit(out: Console, stdin: TextIO, prompt: type[Prompt]) -> Approve | Deny:
        from tools.approvals import Approve, Deny

        for _ in range(_EDIT_TRIES):
            text = prompt.ask("Arguments (one JSON object)", console=out, stream=stdin)
            try:
                value = json.loads(text)
            except ValueError as exc:
                out.print(f"not JSON ({markup_safe(str(exc))}); try again", markup=True)
                continue
            if isinstance(value, dict):
                return Approve(arguments=value)
            out.print('the arguments must be one JSON object, e.g. {"path": "a.txt"}; try again', markup=False)
        return Deny("no valid arguments were entered")


def _line_prompt() -> type[Prompt]:
    """rich's ``Prompt`` reading whole lines from a stream: the newline is dropped (so an empty
    answer takes the default, as with ``input()``) and end of input raises ``EOFError``."""
    from rich.prompt import Prompt

    class LinePrompt(Prompt):
        @classmethod
        def get_input(cls, console: Console, prompt: Any, password: bool, stream: TextIO | None = None) -> str:
            line = super().get_input(console, prompt, password, stream=stream)
            if stream is None:
                return line
            if not line:
                raise EOFError
            return line.rstrip("\r\n")

    return LinePrompt


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


# ---------------------------------------------------------------------- approve / revoke


def approve(  # noqa: PLR0917 - typer maps parameters to options
    ctx: typer.Context,
    tool_id: Annotated[str, typer.Argument(help="The tool's name (adopted, builtin, or of --registry).")],
    version_hash: Annotated[
        str | None,
        typer.Option("--version-hash", help="Approve exactly this version (from a refusal's approve_command)."),
    ] = None,
    registry: Annotated[
        str | None, typer.Option("--registry", "-r", help="The tool is in this module:factory registry.")
    ] = None,
    app_dir: Annotated[str | None, typer.Option("--app-dir", help="Where --registry is imported from.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Approve a tool: it runs without asking at every freedom level until it changes.

    The approval is bound to the tool's current version hash: a changed tool asks again.

    [b]Examples[/b]

      tooldeck approve weather
      tooldeck approve delete_file --registry myapp.tools:build_registry
      tooldeck approve shell --version-hash 3f1c...e9 --json
    """
    from tools.approvals import ApprovalError, check_approval_id

    cli = state(ctx)
    try:
        check_approval_id(tool_id)
    except ApprovalError as exc:
        fail(str(exc))
    found, risk = _current_version(cli, tool_id, registry, app_dir, explicit=version_hash is not None)
    if version_hash is not None and found is not None and version_hash != found:
        fail(
            f"tool {tool_id!r} changed since that version was refused: its version hash is now {found[:12]}..., "
            f"not {version_hash[:12]}...; review it and approve the current version with: tooldeck approve {tool_id}"
        )
    chosen = version_hash or found
    if chosen is None:
        fail(
            f"no tool {tool_id!r} is adopted or built in; for a tool of your application pass --registry "
            "module:factory, or pass --version-hash HASH (the approve_command in the refusal's details)"
        )
    store = approvals_store(cli)
    try:
        approval = store.approve(tool_id, chosen, risk=risk)
    except ApprovalError as exc:
        fail(str(exc))
    record = {
        "tool": tool_id,
        "version_hash": approval.version_hash,
        "approved_at": approval.approved_at.isoformat(),
        "risk": approval.risk,
        "file": store.location,
    }
    if as_json:
        print_json(record)
        return
    about = f", risk {risk}" if risk else ""
    say(
        f"approved {tool_id} (version {approval.version_hash[:12]}{about}): it runs without asking until its "
        f"configuration or schema changes; undo with: tooldeck revoke {tool_id}"
    )


def _current_version(
    cli: CliContext, tool_id: str, spec: str | None, app_dir: str | None, *, explicit: bool
) -> tuple[str | None, Any]:
    """The tool's current version hash and risk, from ``--registry`` or the builtins + adopted tools."""
    from pathlib import Path

    from tools.errors import TooldeckError

    registry: LocalToolRegistry
    if spec is not None:
        from tools.cli._registry_spec import load_registry

        registry = load_registry(spec, Path(app_dir) if app_dir else None)
        if tool_id not in registry:
            names = ", ".join(registry.names()[:30]) or "none"
            fail(f"registry {spec!r} has no tool {tool_id!r} (its tools: {names})")
    else:
        from tools.cli._registry_spec import default_registry

        try:
            registry = default_registry(cli)
        except TooldeckError:
            if explicit:  # the hash was given: a broken project registry need not stop it
                return None, None
            raise
    manual = registry.get_manual(tool_id)
    return registry.tool_version_hash(tool_id), manual.risk if manual is not None else None


def revoke(
    ctx: typer.Context,
    tool_id: Annotated[str, typer.Argument(help="The approved tool's name.")],
    as_json: JsonOption = False,
) -> None:
    """Withdraw a tool's approval: it asks again where the freedom level says so.

    [b]Examples[/b]

      tooldeck revoke weather
      tooldeck revoke shell --json
    """
    from tools.approvals import ApprovalError

    store = approvals_store(state(ctx))
    try:
        removed = store.revoke(tool_id)
    except ApprovalError as exc:
        fail(str(exc))
    if removed is None:
        fail(f"tool {tool_id!r} is not approved; see the approvals with: tooldeck configure show")
    if as_json:
        print_json({"revoked": tool_id, "version_hash": removed.version_hash})
    else:
        say(f"revoked the approval of {tool_id}")


# ---------------------------------------------------------------------- configure


@configure_app.command("freedom")
def freedom(
    ctx: typer.Context,
    level: Annotated[str, typer.Argument(help="low, medium or high; unset removes the stored level.", metavar="LEVEL")],
    as_json: JsonOption = False,
) -> None:
    """Set the freedom level: which tools run without asking a person.

    low: nothing runs without approval.

    medium (the default): only safe tools run freely.

    high: only dangerous tools need approval.

    unset: remove the stored level; the default, medium, applies again.

    The level applies to tooldeck, python -m orchestrator and serve-mcp alike. Approved tools
    run at every level; TOOLDECK_FREEDOM overrides the stored level for one run.

    [b]Examples[/b]

      tooldeck configure freedom high
      tooldeck configure freedom low --json
      tooldeck configure freedom unset
      TOOLDECK_FREEDOM=low tooldeck run weather --arg city=Lisbon
    """
    from tools.approvals import DEFAULT_FREEDOM, FREEDOM_VARIABLE, ApprovalError, FreedomLevel

    cli = state(ctx)
    store = approvals_store(cli)
    unset = level.strip().lower() == "unset"
    try:
        stored = None if unset else FreedomLevel.parse(level)
        store.set_freedom(stored)
    except ApprovalError as exc:
        fail(f"{exc}; or unset (remove the stored level)" if not unset else str(exc))
    override = cli.env.get(FREEDOM_VARIABLE, "").strip()
    in_force = stored or DEFAULT_FREEDOM
    if as_json:
        print_json(
            {
                "freedom": None if stored is None else stored.value,
                "in_force": in_force.value,
                "meaning": in_force.meaning,
                "file": store.location,
            }
        )
        return
    if stored is None:
        say(f"freedom level unset in {store.location}; the default applies: {in_force.value} ({in_force.meaning})")
    else:
        say(f"freedom level: {stored.value} ({stored.meaning}); stored in {store.location}")
    if override:
        say(f"note: {FREEDOM_VARIABLE}={override[:40]} overrides it in this environment")


@configure_app.command("show")
def show(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Show the freedom level in force, where it comes from, and the approved tools.

    An approval of an adopted tool that changed since shows as "changed": approve it again.

    [b]Examples[/b]

      tooldeck configure show
      tooldeck configure show --json | jq '.approvals[].tool'
    """
    from tools.approvals import FREEDOM_VARIABLE, FreedomLevel

    cli = state(ctx)
    store = approvals_store(cli)
    policy = cli_policy(cli, store)
    level, source = policy.level, policy.level_source
    current = _adopted_versions(cli)
    rows: list[dict[str, Any]] = [
        {
            "tool": tool,
            "version_hash": approval.version_hash,
            "approved_at": approval.approved_at.isoformat(),
            "risk": approval.risk,
            "status": _status(current.get(tool), approval.version_hash),
        }
        for tool, approval in store.approvals().items()
    ]
    stored = store.freedom()
    origin = {
        "given": FREEDOM_VARIABLE,
        "file": "the approvals file",
        "default": "the default: no level is stored, and tooldeck, python -m orchestrator and serve-mcp all apply "
        "medium then",
    }[source]
    if as_json:
        print_json(
            {
                "freedom": level.value,
                "meaning": level.meaning,
                "source": FREEDOM_VARIABLE if source == "given" else source,
                "stored_freedom": None if stored is None else stored.value,
                "file": store.location,
                "levels": {lvl.value: lvl.meaning for lvl in FreedomLevel},
                "approvals": rows,
            }
        )
        return
    say(f"freedom level: {level.value} ({level.meaning}), from {origin}")
    say(f"approvals file: {store.location}")
    if not rows:
        say("no tools approved yet (approve one with: tooldeck approve ID)")
        return
    print_table(
        ["tool", "version", "approved", "risk", "status"],
        [
            [
                row["tool"],
                row["version_hash"][:12],
                row["approved_at"][:19].replace("T", " "),
                row["risk"] or "",
                safe_text("changed: approve again", "yellow") if row["status"] == "changed" else row["status"],
            ]
            for row in rows
        ],
    )


def _adopted_versions(cli: CliContext) -> dict[str, str]:
    """Current version hashes of the adopted tools (empty when the registry is unreadable)."""
    from tools.errors import TooldeckError

    try:
        configs = cli.registry_service(with_catalog=False).list_tools()
    except TooldeckError:
        return {}
    return {config.id: config.compute_version_hash() for config in configs}


def _status(current: str | None, approved: str) -> str:
    if current is None:
        return ""
    return "current" if current == approved else "changed"
