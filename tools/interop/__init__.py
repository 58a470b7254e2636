"""tooldeck with other frameworks' tools: LangChain both ways (extra ``langchain``).

``to_langchain_tools(registry or view)`` gives LangChain ``StructuredTool``s whose calls go
through the registry; ``from_langchain_tool(tool)`` makes a LangChain tool a tooldeck tool.
Importing this package imports no LangChain: the names load ``tools.interop.langchain``
(which needs ``langchain-core``) on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tools.interop.langchain import LangChainTool, from_langchain_tool, to_langchain_tools

__all__ = ["LangChainTool", "from_langchain_tool", "to_langchain_tools"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        try:
            from tools.interop import langchain
        except ImportError as exc:
            raise ImportError(
                f"tools.interop.{name} needs LangChain ({exc}); install it with: pip install -e '.[langchain]'"
            ) from exc
        return getattr(langchain, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
