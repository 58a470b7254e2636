"""``python -m orchestrator "question"``: ask the agent from a shell.

Exit codes:
    0  the model gave a final answer
    1  unexpected internal error (a bug: the traceback is printed)
    2  usage or configuration error (bad flag, bad environment variable, unusable data dir)
    3  the model endpoint failed (unreachable, HTTP error, malformed answer)
    4  the iteration budget ran out before a final answer (the partial answer is printed)
    5  tool calls wait for a person's approval (the state is saved; continue with --resume)
    6  --pipeline: the reviewer rejected the change after every cycle
    7  --pipeline: approved, but a check (pytest, ruff, ...) failed
    130  interrupted (Ctrl-C)
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from orchestrator import _approval_cli
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

if TYPE_CHECKING:
    from tools.approvals import ApprovalsBackend, StateSigner
    from tools.store import RegistryService

__all__ = ["EXIT_AWAITING", "EXIT_BUDGET", "EXIT_CONFIG", "EXIT_INTERNAL", "EXIT_MODEL", "EXIT_OK", "main"]

EXIT_OK, EXIT_INTERNAL, EXIT_CONFIG, EXIT_MODEL, EXIT_BUDGET, EXIT_AWAITING = 0, 1, 2, 3, 4, 5

_EPILOG = """\
examples:
  python -m orchestrator "What is 12*(3+4)? Remember that my dentist is Dr. Lee."
  python -m orchestrator "Who is my dentist?"
  python -m orchestrator --json "solve x^2 = 4"
  echo "Run this python: print(2**10)" | python -m orchestrator -
  python -m orchestrator --base-url http://127.0.0.1:8080/v1 --model smollm2 \\
      --tool-choice required "What is 2+3?"
  OPENAI_API_KEY=... python -m orchestrator --base-url https://api.openai.com/v1 \\
      --model gpt-4o-mini "What's on my calendar today?"
  python -m orchestrator --freedom medium --json "Remember that my dentist is Dr. Lee." \\
      < /dev/null > paused.json      # exit 5: store_knowledge waits for approval
  python -m orchestrator --resume paused.json --approve-call call_1
  python -m orchestrator --agent reviewer "Which tools can you use?"
  python -m orchestrator --pipeline "make add() handle negative numbers" --workspace ./proj

Without --base-url the embedded offline model answers (no key, no network): it
understands math, "remember that ...", "what is my ...", calendar/weather/commute/
spending/briefing questions, "search the web for ...", "open <url>" and
"run this python: ...".

exit codes: 0 answered, 1 internal error, 2 usage/configuration error (or a
refused --resume), 3 model endpoint error, 4 iteration budget exhausted, 5 waiting
for approval, 130 interrupted.

environment: TOOLDECK_BASE_URL, TOOLDECK_MODEL, TOOLDECK_API_KEY_ENV,
TOOLDECK_TOOL_CHOICE, TOOLDECK_DATA_DIR, TOOLDECK_CONTEXT_URL,
TOOLDECK_CONTEXT_API_KEY, TOOLDECK_MAX_ITERATIONS, TOOLDECK_MAX_PARALLEL,
TOOLDECK_CALL_TIMEOUT, TOOLDECK_MODEL_TIMEOUT, TOOLDECK_STRICT, TOOLDECK_FREEDOM,
TOOLDECK_DATABASE_URL, TOOLDECK_EXECUTOR, TOOLDECK_RAY_ADDRESS, BRAVE_API_KEY,
SEARXNG_URL (flags win over the environment).
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
    parser.add_argument("--model", help="model name for --base-url (default gpt-4o-mini)")
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
        help="answer as this agent type, with only its tools (main, plan, explore, debugger, researcher, "
        "docs-generator, readme-generator, coder, test-writer, reviewer)",
    )
    parser.add_argument("--routing-config", metavar="FILE", help="routing overrides (JSON or TOML) for --agent")
    parser.add_argument("--max-iterations", type=int, metavar="N", help="model turns (10)")
    parser.add_argument("--data-dir", help="directory of the knowledge database")
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
    print(f"error: {what}: {message}", file=stderr)
    return code


def main(
    argv: Sequence[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run the command; returns the exit code (see the module docstring).

    Args:
        argv: Arguments without the program name (default ``sys.argv[1:]``).
        env: The environment (default ``os.environ``); read only here.
        stdin: Where ``-`` reads the question from.
        stdout: Where the answer, trace or JSON goes.
        stderr: Where errors go.
    """
    env = os.environ if env is None else env
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    args = build_parser().parse_args(argv)
    level = [logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)]
    logging.basicConfig(level=level, stream=stderr, format="%(levelname)s %(name)s: %(message)s")
    if args.pipeline is not None:
        if args.resume is not None:
            return _fail(stderr, EXIT_CONFIG, "usage", "--resume continues a paused run; pass no --pipeline with it")
        return _pipeline(args, env, stdin, stdout, stderr)
    from tools.approvals import StateSigner

    signer = StateSigner.from_env(env)
    try:
        question, state, paused = _read_input(args, stdin, signer)
    except _InputError as exc:
        return _fail(stderr, EXIT_CONFIG, exc.what, str(exc))
    if state is not None and paused is None:  # a paused pipeline's state
        return _pipeline(args, env, stdin, stdout, stderr, resume=state)
    try:
        flags = {
            "base_url": args.base_url,
            "model": args.model,
            "api_key_env": args.api_key_env,
            "max_iterations": args.max_iterations,
            "tool_choice": args.tool_choice,
            "data_dir": args.data_dir,
            "context_url": args.context_url,
            "strict": args.strict,
            "agent": args.agent,
            "routing_config": args.routing_config,
            "freedom": args.freedom,
            "executor": args.executor,
            "ray_address": args.ray_address,
        }
        settings = Settings.from_env(env, **flags)  # a resume too: nothing in a state decides a level
        service = _service(settings, env, args, stdin, stderr, signer=signer)
    except (ValueError, ServiceConfigError) as exc:
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
    """Ask the question, or resume the paused run ``given`` holds; report it."""
    from tools.approvals import ApprovalError

    question, state, paused = given
    if settings.base_url and settings.api_key is None:
        logging.getLogger(__name__).info(
            "no API key in $%s; calling %s without one", settings.api_key_env, settings.base_url
        )
    try:
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


class _InputError(Exception):
    def __init__(self, what: str, message: str) -> None:
        super().__init__(message)
        self.what = what


def _read_input(
    args: argparse.Namespace, stdin: TextIO, signer: StateSigner
) -> tuple[str, dict[str, Any] | None, PausedRun | None]:
    """The question, or the state ``--resume`` names and the paused run it holds (its
    signature verified: a refused state stops here; a paused pipeline's state has no run:
    the pipeline checks it)."""
    if args.resume is not None:
        if args.question:
            raise _InputError("usage", "--resume continues a paused run; pass no question with it")
        try:
            state = _approval_cli.read_state(args.resume, stdin)
            if is_pipeline_state(state):
                return "", state, None  # checked by the pipeline's resume
            return "", state, PausedRun.from_dict(state, signer=signer)
        except ResumeError as exc:
            raise _InputError("resume", str(exc)) from None
    if args.approve_call or args.deny_call:
        raise _InputError("usage", "--approve-call and --deny-call need --resume FILE")
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
    or ``--resume`` of a paused pipeline (``resume``, its state)."""
    from orchestrator.agents import PipelineState
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
            freedom=args.freedom,
            data_dir=args.data_dir,
            max_subagent_iterations=args.max_subagent_iterations,
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
    return run_pipeline_command(
        args,
        env=env,
        model=model,
        build_model=build,
        stdout=stdout,
        stderr=stderr,
        policy=policy,
        approver=_approval_cli.pipeline_approver(args.approve, stdin, stderr),
        saved=saved,
        resume=resume,
        decide=lambda paused: _approval_cli.decisions(args, paused),
    )


def _service(
    settings: Settings,
    env: Mapping[str, str],
    args: argparse.Namespace,
    stdin: TextIO,
    stderr: TextIO,
    *,
    signer: StateSigner,
) -> OrchestratorService:
    """The service of this invocation, with the approvals (a file, or the database of
    ``TOOLDECK_DATABASE_URL``; the resume claims live beside them), the terminal approver
    (``--approve ask`` on a terminal) and the user's state key."""
    adopted = _adopted_tools(env, stderr)
    return OrchestratorService(
        settings,
        budget=result_budget(settings),
        mcp_roots=[Path.cwd()],
        adopted_tools=adopted,
        approvals=_approvals(env, settings),
        approver=_approval_cli.approver(args.approve, stdin, stderr),
        hold_for_approval=args.approve != "deny",
        state_signer=signer,
    )


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
    if args.json:
        out = run.to_dict()
        out["model"] = service.model_description
        out["settings"] = settings.public_dict()
        if state_file is not None:
            out["state_file"] = str(state_file)
        print(wire_safe(json.dumps(out, ensure_ascii=False, indent=2, default=str)), file=stdout)
    elif paused:
        print(_approval_cli.format_pending(run, state_file), file=stdout)
    else:
        print(wire_safe(run.answer) or "(the model gave an empty answer)", file=stdout)
    if not args.json and not args.no_trace:
        print("", file=stdout)
        print(format_trace(run, service.model_description), file=stdout)
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
        print(f"warning: {notice}", file=stderr)
    return RegistryService(store, env=env)


def run_main() -> None:
    """Console entry: `main` with interrupts and internal errors mapped to exit codes."""
    try:
        code = main()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        code = 130
    except Exception:
        logging.getLogger(__name__).exception("internal error (a bug; please report it)")
        code = EXIT_INTERNAL
    sys.exit(code)
