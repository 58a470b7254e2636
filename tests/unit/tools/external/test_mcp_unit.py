"""Unit tests of the MCP client helpers: names, result rendering, error mapping, params."""

from __future__ import annotations

import sys
from typing import Any

import pytest

pytest.importorskip("mcp")

import mcp_types
from mcp import MCPError
from pydantic import ValidationError

from tools._names import sanitize_tool_name as sanitize
from tools.errors import InvalidArgumentsError, ToolError, ToolTimeoutError, UpstreamError
from tools.external import AuthConfig, ToolConfig
from tools.external.mcp import MCPAdapter, MCPConfigError, MCPServerParams, MCPTool, MCPToolset
from tools.external.mcp._errors import translate
from tools.external.mcp._names import check_prefix, local_names
from tools.external.mcp._results import MAX_RESULT_CHARS, result_data

pytestmark = pytest.mark.mcp


# ----------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("remote", "prefix", "local"),
    [
        ("get_time", None, "get_time"),
        ("weird.name/with spaces", None, "weird_name_with_spaces"),
        ("résumé!", None, "r_sum"),
        ("...", None, "tool"),
        ("x" * 100, None, "x" * 64),
        ("status", "git", "git_status"),
        ("a" * 70, "p", "p_" + "a" * 62),
    ],
)
def test_sanitize(remote: str, prefix: str | None, local: str) -> None:
    assert sanitize(remote, prefix) == local


def test_local_names_are_unique_and_stable() -> None:
    names = local_names(["a.b", "a/b", "a b", "ok", "a.b"], None)

    assert names == {"a.b": "a_b", "a/b": "a_b_2", "a b": "a_b_3", "ok": "ok"}


def test_local_names_stay_within_64_characters_on_clashes() -> None:
    long = "y" * 80
    names = local_names([long, long + ".", long + "/"], None)

    assert sorted(len(name) for name in names.values()) == [64, 64, 64]
    assert len(set(names.values())) == 3


@pytest.mark.parametrize("prefix", ["has space", "x" * 33, "dots.not.ok"])
def test_bad_prefix_is_a_config_error(prefix: str) -> None:
    with pytest.raises(MCPConfigError, match="prefix"):
        check_prefix(prefix)


# ----------------------------------------------------------------------------- results


def _result(*content: Any, structured: Any = None, is_error: bool = False) -> Any:
    return mcp_types.CallToolResult(content=list(content), structured_content=structured, is_error=is_error)


def test_structured_content_is_preferred() -> None:
    result = _result(mcp_types.TextContent(text='{"a": 1}'), structured={"a": 1})

    assert result_data(result, tool="t") == {"a": 1}


def test_text_blocks_are_joined_and_binaries_summarised() -> None:
    result = _result(
        mcp_types.TextContent(text="one"),
        mcp_types.ImageContent(data="AAAA" * 10, mime_type="image/png"),
        mcp_types.AudioContent(data="AAAA", mime_type="audio/wav"),
        mcp_types.ResourceLink(uri="file:///x.txt", name="x.txt"),
        mcp_types.EmbeddedResource(resource=mcp_types.TextResourceContents(uri="mem://note", text="note body")),
        mcp_types.EmbeddedResource(resource=mcp_types.BlobResourceContents(uri="mem://bin", blob="AAAAAA==")),
    )

    assert result_data(result, tool="t") == (
        "one\n[image: image/png, 30 bytes]\n[audio: audio/wav, 3 bytes]\n"
        "[resource link: file:///x.txt (x.txt)]\n[resource mem://note]\nnote body\n"
        "[resource mem://bin: application/octet-stream, 4 bytes]"
    )


def test_is_error_raises_the_server_text_for_the_model() -> None:
    with pytest.raises(ToolError) as caught:
        result_data(_result(mcp_types.TextContent(text="no such city"), is_error=True), tool="t")

    assert caught.value.message == "no such city"
    assert caught.value.error_type == "execution_error"


def test_is_error_without_text_still_explains() -> None:
    with pytest.raises(ToolError, match="failed without saying why"):
        result_data(_result(is_error=True), tool="t")


def test_oversized_text_is_cut_with_a_note() -> None:
    huge = "z" * (MAX_RESULT_CHARS + 10)

    data = result_data(_result(mcp_types.TextContent(text=huge)), tool="t")

    assert data.startswith("z" * 1000)
    assert data.endswith("[cut: 10 more characters]")


def test_oversized_error_text_is_cut() -> None:
    with pytest.raises(ToolError) as caught:
        result_data(_result(mcp_types.TextContent(text="e" * 50_000), is_error=True), tool="t")

    assert len(caught.value.message) < 4_100


# ----------------------------------------------------------------------------- errors


def _mcp(code: int, message: str) -> MCPError:
    return MCPError(code, message)


@pytest.mark.parametrize(
    ("exc", "kind", "retryable", "text"),
    [
        (
            MCPError(mcp_types.INVALID_PARAMS, "Unknown tool: x"),
            InvalidArgumentsError,
            False,
            "Unknown tool: x",
        ),
        (
            MCPError(mcp_types.CONNECTION_CLOSED, "Connection closed"),
            UpstreamError,
            True,
            "closed the connection",
        ),
        (
            MCPError(mcp_types.REQUEST_TIMEOUT, "timed out"),
            ToolTimeoutError,
            True,
            "did not answer within 5",
        ),
        (
            MCPError(mcp_types.METHOD_NOT_FOUND, "tools/call"),
            UpstreamError,
            False,
            "does not support",
        ),
        (
            MCPError(mcp_types.INTERNAL_ERROR, "boom"),
            UpstreamError,
            True,
            "reported an error: boom",
        ),
        (TimeoutError(), ToolTimeoutError, True, "did not answer within 5"),
        (
            FileNotFoundError(2, "No such file or directory"),
            UpstreamError,
            False,
            "could not be started",
        ),
        (
            RuntimeError("Invalid structured content"),
            UpstreamError,
            False,
            "Invalid structured content",
        ),
    ],
)
def test_translate(exc: BaseException, kind: type[ToolError], retryable: bool, text: str) -> None:
    error = translate(exc, label="srv", timeout=5)

    assert type(error) is kind
    assert error.retryable is retryable
    assert text in error.message


class _Group(Exception):
    """Shaped like (Base)ExceptionGroup, which Python 3.10 only has as a backport."""

    def __init__(self, *exceptions: BaseException) -> None:
        super().__init__("group")
        self.exceptions = exceptions


def test_translate_unwraps_exception_groups() -> None:
    group = _Group(_Group(TimeoutError()))

    assert isinstance(translate(group, label="srv", timeout=1), ToolTimeoutError)


def test_translate_hides_unexpected_exception_text(caplog: pytest.LogCaptureFixture) -> None:
    error = translate(KeyError("password=hunter2"), label="srv", timeout=1)

    assert "hunter2" not in error.message
    assert "failed unexpectedly" in error.message


def test_translate_invalid_reply() -> None:
    try:
        mcp_types.CallToolResult.model_validate({"content": 5})
    except ValidationError as exc:
        error = translate(exc, label="srv", timeout=1)
    assert "not valid MCP" in error.message


# ----------------------------------------------------------------------------- params


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "exactly one of"),
        ({"command": ("x",), "url": "http://h/mcp"}, "exactly one of"),
        ({"command": ()}, "non-empty argv"),
        ({"command": "python -m server"}, "not a shell string"),
        ({"command": ("a\x00b",)}, "without NUL"),
        ({"url": "file:///etc/passwd"}, "http(s) URL"),
        ({"url": "http://"}, "http(s) URL"),
    ],
)
def test_server_params_reject_bad_input(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(MCPConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        MCPServerParams(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "label"),
    [
        ({"command": ("python3", "-m", "mcp_server_time")}, "mcp_server_time"),
        ({"command": ("/usr/bin/python3", "/srv/my_server.py", "--x")}, "my_server.py"),
        ({"command": ("/opt/bin/server", "--port", "1")}, "server"),
        ({"command": ("python", "-c", "...")}, "python"),
        ({"url": "https://user:pw@mcp.example.com/mcp"}, "mcp.example.com"),
        ({"url": "http://h/mcp", "label": "mine"}, "mine"),
    ],
)
def test_server_params_labels_hide_credentials(kwargs: dict[str, Any], label: str) -> None:
    assert MCPServerParams(**kwargs).label == label


def test_headers_are_not_in_repr() -> None:
    params = MCPServerParams(url="http://h/mcp", headers={"Authorization": "Bearer s3cret"})

    assert "s3cret" not in repr(params)


def test_toolset_rejects_shell_strings_and_bad_timeouts() -> None:
    with pytest.raises(MCPConfigError, match="argv list"):
        MCPToolset("python -m mcp_server_time")
    with pytest.raises(MCPConfigError, match="positive"):
        MCPToolset([sys.executable], call_timeout=0)


# ----------------------------------------------------------------------------- tool


class _Caller:
    def __init__(self, result: Any) -> None:
        self.result = result
        self.calls: list[tuple[str, dict[str, Any], float]] = []

    def call_remote(self, remote_name: str, arguments: dict[str, Any], *, timeout: float) -> Any:
        self.calls.append((remote_name, arguments, timeout))
        return self.result

    async def acall_remote(self, remote_name: str, arguments: dict[str, Any], *, timeout: float) -> Any:
        return self.call_remote(remote_name, arguments, timeout=timeout)

    def serves_from(self, loop: Any) -> bool:
        return False


def test_mcp_tool_validates_then_calls_with_the_remote_name() -> None:
    caller = _Caller(_result(mcp_types.TextContent(text="ok")))
    remote = mcp_types.Tool(
        name="do.it",
        description="Does it.",
        input_schema={
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
        output_schema={"type": "object"},
    )
    tool = MCPTool(caller=caller, remote=remote, name="do_it", call_timeout=7)

    good = tool.execute(n=3)
    bad = tool.execute(n="three")

    assert good.data == "ok"
    assert bad.error is not None
    assert bad.error.type == "validation_error"
    assert caller.calls == [("do.it", {"n": 3}, 7)]
    assert tool.output_schema() == {"type": "object"}
    assert tool.with_timeout(1).call_timeout == 1
    assert tool.call_timeout == 7


def test_mcp_tool_with_an_invalid_server_schema_falls_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    remote = mcp_types.Tool(name="odd", input_schema={"type": "object", "properties": 5})
    tool = MCPTool(caller=_Caller(None), remote=remote, name="odd", call_timeout=1)

    assert tool.parameters == {"type": "object"}
    assert "odd" in caplog.text


# ----------------------------------------------------------------------------- adapter


def _config(auth: AuthConfig | None = None, **mcp: Any) -> ToolConfig:
    return ToolConfig(id="s", name="s", adapter_type="mcp", config=mcp, auth=auth)


def test_adapter_is_available_checks_command_url_and_secret() -> None:
    adapter = MCPAdapter(env={"PATH": "/usr/bin:/bin"})
    token = AuthConfig(env_var="TOKEN")
    url = "http://127.0.0.1:1/mcp"

    assert adapter.is_available(_config(command=[sys.executable, "-m", "x"]))
    assert not adapter.is_available(_config(command=["no-such-program-here"]))
    assert adapter.is_available(_config(url=url))
    assert not adapter.is_available(_config(token, url=url))
    assert MCPAdapter(env={"TOKEN": "t"}).is_available(_config(token, url=url))


def test_adapter_refuses_non_mcp_configs() -> None:
    cli = ToolConfig(id="c", name="c", adapter_type="cli", config={"command": ["ls"], "actions": {"a": {}}})

    assert not MCPAdapter().is_available(cli)
    with pytest.raises(Exception, match="MCPAdapter needs adapter_type 'mcp'"):
        MCPAdapter([cli])


def test_adapter_missing_secret_is_an_error_envelope() -> None:
    with MCPAdapter([_config(AuthConfig(env_var="TOKEN"), url="http://127.0.0.1:1/mcp")]) as adapter:
        result = adapter.execute("s", "x", {})

    assert result.error is not None
    assert "credential" in result.error.message


def test_public_names_are_pinned() -> None:
    import tools.external.mcp as package

    assert package.__all__ == [
        "ElicitationRequest",
        "ElicitationResult",
        "MCPAdapter",
        "MCPClientHandlers",
        "MCPConfigError",
        "MCPProgress",
        "MCPRequestDeclined",
        "MCPServerParams",
        "MCPTool",
        "MCPToolset",
        "ProgressCallback",
        "SamplingRequest",
        "SamplingResult",
        "ServableRegistry",
        "build_mcp_server",
        "serve_http",
        "serve_stdio",
        "serve_stdio_async",
    ]
    assert all(hasattr(package, name) for name in package.__all__)


def test_mcp_tool_description_is_bounded() -> None:
    remote = mcp_types.Tool(name="chatty", description="d" * 10_000, input_schema={"type": "object"})
    tool = MCPTool(caller=_Caller(None), remote=remote, name="chatty", call_timeout=1)

    assert len(tool.description) < 4_100
    assert tool.description.endswith("[cut: 6000 more characters]")
