"""``python -m orchestrator "question"``: ask the agent from a shell.

Exit codes: `orchestrator._exit.EXIT_CODES` (printed by ``--help``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from orchestrator import _approval_cli, _cli_options
from orchestrator._exit import (
    EXIT_AWAITING,
    EXIT_BUDGET,
    EXIT_CONFIG,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_MODEL,
    EXIT_OK,
    exit_code_lines,
)
from orchestrator.agents import add_pipeline_arguments, run_pipeline_command
from orchestrator.agents.paused import is_pipeline_state
from orchestrator.graph import AgentRun, PausedRun, ResumeError
from orchestrator.graph._content import wire_safe
from orchestrator.graph.claims import claims_beside
from orchestrator.llm import ChatModelError
from orchestrator.service import (
    OrchestratorService,
    ServiceConfigError,
    approval_policy,
    build_chat_model,
    result_budget,
)
from orchestrator.settings import Settings
from tools._procgroup import exit_if_terminated, sigterm_as_interrupt
from tools._terminal import cli_logging, dumps_for_terminal, level_for, print_safe
from tools.errors import TooldeckError

if TYPE_CHECKING:
    from orchestrator._progress import ProgressView
    from tools.approvals import ApprovalsBackend, StateSigner
    from tools.store import RegistryService

__all__ = ["EXIT_AWAITING", "EXIT_BUDGET", "EXIT_CONFIG", "EXIT_INTERNAL", "EXIT_MODEL", "EXIT_OK", "main"]

#: Every example runs as written (tests/integration/orchestrator/test_cli_help_examples.py), in
#: order, from a directory holding mytools.py; http://127.0.0.1:8080/v1 is an OpenAI-compatible
#: server (llama.cpp's, see docs/orchestrator.md). "# exit N": the example ends with code N.
EXAMPLES = """\
  python -m orchestrator "What is 12*(3+4)? Remember that my dentist is Dr. Lee."
  python -m orchestrator "Who is my dentist?"
  python -m orchestrator --json "solve x^2 = 4"
  echo "Run this python: print(2**10)" | python -m orchestrator -
  python -m orchestrator --registry mytools:build --model test "try my tools"
  python -m orchestrator --agent reviewer "Read the README and review it"
  python -m orchestrator --freedom low --approve pause --json "What is 2+3?" > paused.json   # exit 5
  python -m orchestrator --resume paused.json --approve-call call_2_0
  python -m orchestrator --base-url http://127.0.0.1:8080/v1 --model smollm2 --stream "What is 2+3?"
  python -m orchestrator --base-url http://127.0.0.1:8080/v1 --model smollm2 \\
      --pipeline "make add() handle negative numbers" --workspace . --max-cycles 1
"""

_EPILOG = f"""\
examples:
{EXAMPLES}
Without --base-url the embedded offline model answers (no key, no network): it
understands math, "remember that ...", "what is my ...", calendar/weather/commute/
spending/briefing questions, "search the web for ...", "open <url>" and
"run this python: ...". --model test (without --base-url) calls every tool once
(only your --registry tools when given) with arguments made from its schema, then
summarises the results.

Runs are recorded under the data directory (--no-record: not): tooldeck runs list,
tooldeck runs show RUN_ID; a paused run continues with --resume RUN_ID.

exit codes:
{chr(10).join(exit_code_lines())}

environment: TOOLDECK_BASE_URL, TOOLDECK_MODEL, TOOLDECK_API_KEY_ENV,
TOOLDECK_TOOL_CHOICE, TOOLDECK_DATA_DIR, TOOLDECK_CONTEXT_URL,
TOOLDECK_CONTEXT_API_KEY, TOOLDECK_MAX_ITERATIONS, TOOLDECK_MAX_PARALLEL,
TOOLDECK_CALL_TIMEOUT, TOOLDECK_MODEL_TIMEOUT, TOOLDECK_STRICT, TOOLDECK_STREAM,
TOOLDECK_FREEDOM, TOOLDECK_DATABASE_URL, TOOLDECK_EXECUTOR, TOOLDECK_RAY_ADDRESS,
BRAVE_API_KEY, SEARXNG_URL (flags win over the environment).
"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used to render ``--help``)."""
    parser = argparse.ArgumentParser(
        prog="python -m orchestrator",
        description="Ask a question; the agent plans tool calls, runs them through the "
        "tool registry and answers, printing a compact trace of every tool call.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("question", nargs="*", help="the question ('-' reads it from stdin)")
    add_pipeline_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the whole run as JSON")
    parser.add_argument("--base-url", help="OpenAI-compatible API root, e.g. http://host/v1")
    parser.add_argument(
        "--model",
        help="model name for --base-url (default gpt-4o-mini); without --base-url, 'test' calls every tool once "
        "(only your --registry tools when given), then summarises the results",
    )
    parser.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="environment variable holding the API key (default OPENAI_API_KEY)",
    )
    parser.add_argument(
        "--tool-choice",
        metavar="auto|required|none|TOOL",
        help="auto or none: sent on every turn; required or a tool name: forces a tool call on "
        "the first turn (default: the server decides; llama.cpp's server shows the model no "
        "tools unless this is set)",
    )
    parser.add_argument(
        "--agent",
        metavar="TYPE",
        help="answer as this agent type, with only the tools its profile allows, the workspace tools over "
        "--workspace included (main, plan, explore, debugger, researcher, docs-generator, readme-generator, coder, "
        "test-writer, reviewer)",
    )
    parser.add_argument("--routing-config", metavar="FILE", help="routing overrides (JSON or TOML) for --agent")
    parser.add_argument("--max-iterations", type=int, metavar="N", help="model turns (10)")
    parser.add_argument("--data-dir", help="directory of the knowledge database, run records and paused runs")
    parser.add_argument("--context-url", help="context service URL (http://127.0.0.1:8765)")
    parser.add_argument(
        "--strict",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="send OpenAI strict tool schemas (default: only to api.openai.com)",
    )
    parser.add_argument(
        "--executor",
        choices=("threads", "ray"),
        help="where the compute tools run: threads here (default) or a Ray cluster (see --ray-address)",
    )
    parser.add_argument(
        "--ray-address", metavar="ADDR", help="the Ray cluster for --executor ray (default: a local Ray)"
    )
    parser.add_argument("--no-trace", action="store_true", help="print only the answer")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (-v info, -vv debug)")
    _cli_options.add_arguments(parser)
    _approval_cli.add_arguments(parser)
    return parser


def _question(words: Sequence[str], stdin: TextIO) -> str:
    if list(words) == ["-"]:
        return stdin.read(1_000_000).strip()
    return " ".join(words).strip()


def _preview(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(wire_safe(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def format_trace(run: AgentRun, model: str) -> str:
    """The compact trace: one line per tool call (name, arguments, status, duration)."""
    lines = [
        f"trace: {model}; {run.iterations} model turn(s), {len(run.tool_results)} tool "
        f"call(s), {run.timings.get('total_ms', 0.0):.0f} ms, stop: {run.stop_reason}"
    ]
    for number, record in enumerate(run.tool_results, 1):
        status = record["status"]
        if record["error_type"]:
            status += f" ({record['error_type']})"
        if record["truncated"]:
            status += " [truncated]"
        lines.append(
            f"  {number}. {record['name']} {_preview(record['arguments'])} -> {status} {record['duration_ms']:.1f} ms"
        )
    return "\n".join(lines)


def _fail(stderr: TextIO, code: int, what: str, message: str) -> int:
    print_safe(f"error: {what}: {message}", stderr)
    return code


def main(
    argv: Sequence[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run the command; returns the exit code (see `orchestrator._exit.EXIT_CODES`).

    Args:
        argv: Arguments without the program name (default ``sys.argv[1:]``).
        env: The environment (default ``os.environ``); read only here.
        stdin: Where ``-`` reads the question from.
        stdout: Where the answer, trace or JSON goes.
        stderr: Where errors, logs and the progress display go.
    """
    env = os.environ if env is None else env
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    args = build_parser().parse_args(argv)
    cli_logging(level_for(args.verbose, args.quiet), stderr)
    if args.pipeline is not None:
        if args.resume is not None:
            return _fail(stderr, EXIT_CONFIG, "usage", "--resume continues a paused run; pass no --pipeline with it")
        return _pipeline(args, env, stdin, stdout, stderr)
    from tools.approvals import StateSigner

    signer = StateSigner.from_env(env)
    try:
        question, state, paused = _read_input(args, env, stdin, signer)
    except _InputError as exc:
        return _fail(stderr, EXIT_CONFIG, exc.what, str(exc))
    if state is not None and paused is None:  # a paused pipeline's state
        return _pipeline(args, env, stdin, stdout, stderr, resume=state)
    try:
        settings = _settings(args, env)
        service = _service(settings, env, args, stdin, stderr, signer=signer)
    except (ValueError, ServiceConfigError, TooldeckError) as exc:
        return _fail(stderr, EXIT_CONFIG, "configuration", str(exc))
    with service:
        return _answer(service, settings, args, (question, state, paused), stdout=stdout, stderr=stderr)


def _answer(
    service: OrchestratorService,
    settings: Settings,
    args: argparse.Namespace,
    given: tuple[str, dict[str, Any] | None, PausedRun | None],
    *,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """Ask the question, or resume the paused run ``given`` holds (the progress display on a
    terminal); report it."""
    from tools.approvals import ApprovalError

    question, state, paused = given
    if settings.base_url and settings.api_key is None:
        logging.getLogger(__name__).info(
            "no API key in $%s; calling %s without one", settings.api_key_env, settings.base_url
        )
    try:
        with _progress(service, stderr):
            if state is None or paused is None:
                run = service.ask(question)
            else:
                run = service.resume(state, _approval_cli.decisions(args, paused))
    except ChatModelError as exc:
        return _fail(stderr, EXIT_MODEL, "model", str(exc))
    except ResumeError as exc:
        return _fail(stderr, EXIT_CONFIG, "resume", str(exc))
    except ApprovalError as exc:  # the state key cannot be used: a paused run could not be saved safely
        return _fail(stderr, EXIT_CONFIG, "approvals", str(exc))
    return _report(run, service, settings, args, stdout)


def _settings(args: argparse.Namespace, env: Mapping[str, str]) -> Settings:
    """The settings of this invocation: flags over the environment. A resume too: its level
    and agent come from here, never from the saved state."""
    flags = {
        "base_url": args.base_url,
        "model": args.model,
        "api_key_env": args.api_key_env,
        "max_iterations": args.max_iterations,
        "tool_choice": args.tool_choice,
        "data_dir": args.data_dir,
        "context_url": args.context_url,
        "strict": args.strict,
        "stream": args.stream,
        "agent": args.agent,
        "routing_config": args.routing_config,
        "freedom": args.freedom,
        "executor": args.executor,
        "ray_address": args.ray_address,
    }
    return Settings.from_env(env, **flags)


class _InputError(Exception):
    def __init__(self, what: str, message: str) -> None:
        super().__init__(message)
        self.what = what


def _read_input(
    args: argparse.Namespace, env: Mapping[str, str], stdin: TextIO, signer: StateSigner
) -> tuple[str, dict[str, Any] | None, PausedRun | None]:
    """The question, or the state ``--resume`` names (a run id, or a state file) and the paused
    run it holds (its signature verified: a refused state stops here; a paused pipeline's
    state has no run: the pipeline checks it)."""
    if args.resume is not None:
        if args.question:
            raise _InputError("usage", "--resume continues a paused run; pass no question with it")
        try:
            source = _cli_options.resolve_resume(args.resume, _cli_options.data_dir_of(args, env))
            state = _approval_cli.read_state(source, stdin)
            if is_pipeline_state(state):
                return "", state, None  # checked by the pipeline's resume
            return "", state, PausedRun.from_dict(state, signer=signer)
        except ValueError as exc:  # a ResumeError, or a run id that names no saved state
            raise _InputError("resume", str(exc)) from None
    if args.approve_call or args.deny_call:
        raise _InputError("usage", "--approve-call and --deny-call need --resume FILE|RUN_ID")
    question = _question(args.question, stdin)
    if not question:
        raise _InputError("question", "it is empty; pass the question text")
    return question, None, None


def _pipeline(
    args: argparse.Namespace,
    env: Mapping[str, str],
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
    *,
    resume: dict[str, Any] | None = None,
) -> int:
    """``--pipeline TASK --workspace DIR``: coder -> test-writer -> reviewer, then the checks;
    or ``--resume`` of a paused pipeline (``resume``, its state). Recorded like agent runs."""
    from orchestrator.agents import PipelineState
    from orchestrator.runlog import RunLog
    from tools.approvals import StateSigner

    if args.question:
        return _fail(stderr, EXIT_CONFIG, "usage", "--pipeline takes its task as its value; pass no question with it")
    try:
        settings = Settings.from_env(
            env,
            base_url=args.base_url,
            model=args.model,
            api_key_env=args.api_key_env,
            strict=args.strict,
            stream=args.stream,
            data_dir=args.data_dir,
            freedom=args.freedom,
            max_subagent_iterations=args.max_subagent_iterations,
        )
        if settings.base_url is None:
            what = "--pipeline" if resume is None else "--resume of a paused pipeline"
            raise ValueError(
                f"{what} needs a real model, and without a base URL there is only the embedded offline model (or "
                "--model test), which cannot write code: pass --base-url URL and --model NAME (any OpenAI-compatible "
                "server, e.g. llama.cpp's), or set TOOLDECK_BASE_URL and TOOLDECK_MODEL"
            )
        model = build_chat_model(settings)
        policy = approval_policy(settings, _approvals(env, settings))  # a resume too: never the state's
    except (ValueError, ServiceConfigError) as exc:
        return _fail(stderr, EXIT_CONFIG, "configuration", str(exc))
    args.max_subagent_iterations = settings.max_subagent_iterations
    build = None if settings.base_url is None else (lambda name: build_chat_model(settings, name))
    saved = PipelineState(
        StateSigner.from_env(env),
        claims=claims_beside(policy.store),
        directory=settings.data_dir / _approval_cli.PAUSED_DIR,
    )
    store = _cli_options.run_store(args, env, settings.data_dir)
    secrets = [s.get_secret_value() for s in (settings.api_key,) if s is not None]
    log = None if store is None else RunLog(store, agent="pipeline", model=settings.model, secrets=secrets)
    view = _cli_options.progress_view(args, stderr, settings.model)
    with view if view is not None else contextlib.nullcontext():
        return run_pipeline_command(
            args, env=env, model=model, build_model=build, stdout=stdout, stderr=stderr, policy=policy,
            approver=_approval_cli.pipeline_approver(args.approve, stdin, stderr), saved=saved, resume=resume,
            decide=lambda paused: _approval_cli.decisions(args, paused), hooks=view, run_log=log,
        )  # fmt: skip


def _service(
    settings: Settings,
    env: Mapping[str, str],
    args: argparse.Namespace,
    stdin: TextIO,
    stderr: TextIO,
    *,
    signer: StateSigner,
) -> OrchestratorService:
    """The service of this invocation: your --registry tools (the ones ``--model test`` calls),
    the approvals (a file, or the database of ``TOOLDECK_DATABASE_URL``; the resume claims
    live beside them), the terminal approver (``--approve ask`` on a terminal), the run
    records, the user's state key, the result budget, the progress display on a terminal."""
    own = _cli_options.own_registries(args.registry, args.app_dir)
    return OrchestratorService(
        settings,
        model=_cli_options.test_model(settings, own),
        tools=own,
        builtins=not args.no_builtins,
        workspace=args.workspace,
        adopted_tools=None if args.no_builtins else _adopted_tools(env, stderr),
        approvals=_approvals(env, settings),
        budget=result_budget(settings),
        mcp_roots=[Path.cwd()],
        approver=_approval_cli.approver(args.approve, stdin, stderr),
        hold_for_approval=args.approve != "deny",
        state_signer=signer,
        hooks=_cli_options.progress_view(args, stderr, "the model"),
        runs=_cli_options.run_store(args, env, settings.data_dir),
    )


@contextlib.contextmanager
def _progress(service: OrchestratorService, stderr: TextIO) -> Iterator[ProgressView | None]:
    """The live progress display around the run (when the service has one), logs above it."""
    from orchestrator._progress import ProgressView

    view = service.graph.hooks
    if not isinstance(view, ProgressView):
        yield None
        return
    view.model = service.model_description
    handler = cli_logging(logging.getLogger().level, stderr, console=view.console)
    try:
        with view:
            yield view
    finally:
        logging.getLogger().removeHandler(handler)
        cli_logging(logging.getLogger().level, stderr)


def _approvals(env: Mapping[str, str], settings: Settings) -> ApprovalsBackend:
    """The user's approvals file, or the approvals in ``TOOLDECK_DATABASE_URL``'s database."""
    from tools.approvals import open_approvals_store

    url = settings.database_url
    return open_approvals_store(env, database_url=url.get_secret_value() if url is not None else None)


def _report(
    run: AgentRun, service: OrchestratorService, settings: Settings, args: argparse.Namespace, stdout: TextIO
) -> int:
    """Print the run (answer and trace, or JSON); a paused run's state is saved first."""
    paused = run.status == "awaiting_approval"
    state_file = _approval_cli.keep_state(run, settings.data_dir)
    if state_file is not None and service.run_log is not None:
        service.run_log.note_state_file(run.run_id, state_file)
    if args.json:
        out = run.to_dict()
        out["model"] = service.model_description
        out["settings"] = settings.public_dict()
        if state_file is not None:
            out["state_file"] = str(state_file)
        print_safe(wire_safe(dumps_for_terminal(out)), stdout)
    elif paused:
        print_safe(_approval_cli.format_pending(run, state_file), stdout)
    else:
        print_safe(wire_safe(run.answer) or "(the model gave an empty answer)", stdout)
    if not args.json and not args.no_trace:
        trace = format_trace(run, service.model_description)
        if service.run_log is not None:
            trace += f"\nrun {run.run_id} recorded: tooldeck runs show {run.run_id}"
        print_safe("\n" + trace, stdout)
    if paused:
        return EXIT_AWAITING
    return EXIT_OK if run.stop_reason == "final_answer" else EXIT_BUDGET


def _adopted_tools(env: Mapping[str, str], stderr: TextIO) -> RegistryService:
    """The tools adopted in the user's registry file and, once trusted (``tooldeck trust``),
    the current directory's; says on ``stderr`` why the latter is not used when it is not."""
    from tools.store import RegistryService, RegistryStore, StoreError

    store = RegistryStore.from_env(env)
    try:
        notice = store.project_trust().notice()
    except StoreError:
        notice = None  # reading the registry reports it
    if notice is not None:
        print_safe(f"warning: {notice}", stderr)
    return RegistryService(store, env=env)


def run_main() -> None:
    """Console entry: `main` with interrupts and internal errors mapped to exit codes."""
    try:
        with sigterm_as_interrupt() as terminated:  # SIGTERM stops tool children as Ctrl-C does
            code = main()
    except KeyboardInterrupt:
        print_safe("interrupted", sys.stderr)
        exit_if_terminated(terminated)
        code = EXIT_INTERRUPTED
    except Exception:
        logging.getLogger(__name__).exception("internal error (a bug; please report it)")
        code = EXIT_INTERNAL
    sys.exit(code)
