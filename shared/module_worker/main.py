"""The module worker's program: load one module, then answer the host's calls until EOF.

Runs inside the code sandbox (no network, no host secrets, a scrubbed environment), started
by the host as ``from shared.module_worker.main import main; main()``. It keeps the pipe
to the host on private descriptors and points its own standard output at standard error,
so a module that prints cannot corrupt the conversation.

The module's ``adapter.py`` is compiled and run here, never in the host. Its adapter gets
a :func:`~shared.module_worker.pipe_http.pipe_session` as ``http_session()``. Calls:
``fetch`` (``fetch_raw`` then ``transform``; the raw answer stays here), ``fetch_raw``,
``transform``, ``merge_records``, ``context_payload`` and ``normalize_for_tools``. Values
go back as JSON (pydantic's JSON mode: datetimes as ISO strings, models as dicts).
Exceptions go back by type; only an ``AdapterError`` carries its message (it is written to
be shown).
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import select
import sys
import threading
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from pydantic_core import to_jsonable_python

from shared.adapters.base import AdapterError, BaseAdapter
from shared.module_worker.pipe_http import pipe_session
from shared.module_worker.protocol import PROTOCOL_VERSION, FrameReader, ProtocolError, write_frame

__all__ = ["HOOKS", "main"]

#: Adapter hooks the host runs locally (BaseAdapter's default) unless the module defines them.
HOOKS = ("merge_records", "context_payload", "normalize_for_tools", "count_raw")
_SHAPE_ERRORS = (TypeError, KeyError, ValueError, AttributeError, IndexError)
_MAX_MESSAGE = 2000


class _LoadProblem(Exception):
    """The module cannot be used; the message is shown to the user as is."""


class _Channel:
    """The pipe to the host: frames in, frames out, one HTTP exchange at a time."""

    def __init__(self, fd_in: int, fd_out: int) -> None:
        self.fd_in = fd_in
        self._reader = FrameReader(fd_in)
        self._out = fd_out
        self._lock = threading.Lock()
        self._next = 0

    @classmethod
    def from_stdio(cls) -> _Channel:
        """Take stdin/stdout for the protocol; the program's own stdout goes to stderr."""
        fd_in, fd_out = os.dup(0), os.dup(1)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)
        return cls(fd_in, fd_out)

    def send(self, message: dict[str, Any]) -> None:
        write_frame(self._out, message)

    def receive(self) -> dict[str, Any] | None:
        return self._reader.read()

    def exchange(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send an ``http`` frame and wait for its ``http_reply``."""
        with self._lock:
            self._next += 1
            request = {**request, "id": self._next}
            self.send(request)
            reply = self.receive()
        if reply is None or reply.get("op") != "http_reply" or reply.get("id") != request["id"]:
            raise ProtocolError("the host did not answer the HTTP request")
        return reply


def _import(module_id: str, source: str) -> Any:
    filename = f"<module {module_id}>/adapter.py"
    name = f"tooldeck_module_{module_id}"
    spec = importlib.util.spec_from_loader(name, loader=None, origin=filename)
    if spec is None:  # pragma: no cover - spec_from_loader always returns a spec here
        raise _LoadProblem("cannot create a module")
    module = importlib.util.module_from_spec(spec)
    module.__file__ = filename
    sys.modules[name] = module  # dataclasses and pydantic resolve annotations through it
    try:
        code = compile(source, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise _LoadProblem(f"adapter.py line {exc.lineno}: syntax error") from None
    except (ValueError, RecursionError, MemoryError):
        raise _LoadProblem("adapter.py cannot be compiled") from None
    try:
        exec(code, module.__dict__)  # noqa: S102 - this process is the sandbox the module runs in
    except BaseException as exc:  # the module's top-level code raised (or exited)
        raise _LoadProblem(f"importing adapter.py raised {type(exc).__name__}") from None
    return module


def _defined_by_module(cls: type, hook: str) -> bool:
    owner = next((klass for klass in cls.__mro__ if hook in vars(klass)), BaseAdapter)
    return owner is not BaseAdapter and vars(owner)[hook] is not vars(BaseAdapter).get(hook)


class _Module:
    """One loaded module: its adapter class, an instance made on first use, the calls."""

    def __init__(self, init: Mapping[str, Any], channel: _Channel) -> None:
        module_id = str(init.get("module_id") or "module")
        class_name = str(init.get("adapter_class") or "Adapter")
        module = _import(module_id, str(init.get("source") or ""))
        inner = getattr(module, class_name, None)
        if not (inspect.isclass(inner) and issubclass(inner, BaseAdapter)) or inspect.isabstract(inner):
            raise _LoadProblem(f"adapter.py has no concrete BaseAdapter subclass named {class_name!r}")
        self.cls: type[BaseAdapter[Any]] = inner
        self.overrides = [hook for hook in HOOKS if _defined_by_module(inner, hook)]
        self._channel = channel
        self._http_timeout = float(init.get("http_timeout") or 10.0)
        self._max_attempts = int(init.get("max_attempts") or 3)
        self._instance: BaseAdapter[Any] | None = None
        self._methods: dict[str, Callable[[Mapping[str, Any]], Any]] = {
            "fetch": self._fetch,
            "fetch_raw": lambda args: self._adapter().fetch_raw(args["config"]),
            "transform": lambda args: self._records(self._adapter().transform(args["raw"])),
            "merge_records": lambda args: list(self.cls.merge_records(args["batches"])),
            "context_payload": self._context_payload,
            "normalize_for_tools": self._normalize,
        }

    def _adapter(self) -> BaseAdapter[Any]:
        if self._instance is None:
            session = pipe_session(self._channel.exchange, timeout=self._http_timeout)
            self._instance = self.cls(session=session, http_timeout=self._http_timeout, max_attempts=self._max_attempts)
        return self._instance

    @staticmethod
    def _records(records: Any) -> list[Any]:
        if not isinstance(records, list):
            raise AdapterError("transform must return a list")
        return records

    def _fetch(self, args: Mapping[str, Any]) -> dict[str, Any]:
        adapter = self._adapter()
        raw = adapter.fetch_raw(args["config"])
        records = self._records(adapter.transform(raw))
        return {"records": records, "raw_count": adapter.count_raw(raw)}

    def _context_payload(self, args: Mapping[str, Any]) -> Any:
        now = datetime.fromisoformat(str(args["now"]))
        return self.cls.context_payload(args["records"], now=now, options=args.get("options") or {})

    def _normalize(self, args: Mapping[str, Any]) -> dict[str, Any]:
        shaped = self.cls.normalize_for_tools(args["data"])
        if not isinstance(shaped, dict):
            raise TypeError("normalize_for_tools must return a dict")
        return shaped

    def call(self, frame: Mapping[str, Any]) -> dict[str, Any]:
        """Run one ``call`` frame; the ``result`` frame to send back."""
        call_id = frame.get("id")
        method = self._methods.get(str(frame.get("method")))
        args = frame.get("args")
        if method is None or not isinstance(args, dict):
            return {"op": "result", "id": call_id, "error": {"type": "UnknownCall"}}
        try:
            value = to_jsonable_python(method(args), fallback=str)
        except AdapterError as exc:
            return {"op": "result", "id": call_id, "error": {"type": "AdapterError", "message": _cut(exc.describe())}}
        except (Exception, SystemExit) as exc:  # module code: report the type only
            error = {"type": type(exc).__name__[:100], "shape": isinstance(exc, _SHAPE_ERRORS)}
            return {"op": "result", "id": call_id, "error": error}
        return {"op": "result", "id": call_id, "value": value}


def _cut(text: str) -> str:
    return text if len(text) <= _MAX_MESSAGE else text[:_MAX_MESSAGE] + "..."


def _reply(channel: _Channel, result: dict[str, Any]) -> None:
    try:
        channel.send(result)
    except ValueError:  # not JSON (NaN, ...) or larger than a frame
        error = {"type": "Unserialisable", "shape": False}
        channel.send({"op": "result", "id": result.get("id"), "error": error})


def _exit_when_the_host_leaves(fd: int) -> None:
    """Exit as soon as the host's end of the pipe closes, even in the middle of a hung call
    (the host died, or it stopped the worker): nothing of a module outlives its host."""
    poller = select.poll()
    poller.register(fd, 0)  # no events asked: poll still reports the hang-up
    while True:
        for _, events in poller.poll():
            if events & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                os._exit(0)


def main() -> None:
    """Serve one module until the host closes the pipe."""
    channel = _Channel.from_stdio()
    threading.Thread(target=_exit_when_the_host_leaves, args=(channel.fd_in,), daemon=True).start()
    channel.send({"op": "hello", "protocol": PROTOCOL_VERSION, "pid": os.getpid(), "uid": os.getuid()})
    init = channel.receive()
    if init is None or init.get("op") != "init":
        return
    try:
        module = _Module(init, channel)
    except _LoadProblem as exc:
        channel.send({"op": "load_error", "reason": str(exc)})
        return
    channel.send({"op": "ready", "overrides": module.overrides})
    while (frame := channel.receive()) is not None:
        if frame.get("op") == "call":
            _reply(channel, module.call(frame))
