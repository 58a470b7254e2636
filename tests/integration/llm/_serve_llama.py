"""Start llama-cpp-python's OpenAI-compatible server for the integration tests.

Runs ``llama_cpp.server`` with the given arguments after turning off ggml's "extra buffer
types" (weight repacking). On CPUs with AMX, a native build repacks weights for AMX
kernels, and where the kernel does not grant AMX tile state to processes (some sandboxes
and VMs) the first matrix multiplication crashes with SIGSEGV. Repacking only speeds up
large models; without it the 135M-parameter test model runs the same.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any


def main() -> None:
    # Through importlib and Any: typed the same whether llama_cpp is installed or not.
    bindings: Any = importlib.import_module("llama_cpp.llama_cpp")
    serve: Any = importlib.import_module("llama_cpp.server.__main__").main
    default_params = bindings.llama_model_default_params

    def without_repacking() -> Any:
        params = default_params()
        if hasattr(params, "use_extra_bufts"):
            params.use_extra_bufts = False
        return params

    bindings.llama_model_default_params = without_repacking
    sys.argv[0] = "llama_cpp.server"
    serve()


if __name__ == "__main__":
    main()
