"""``RegistryService``: adopt, remove, look up and build the tools of a :class:`RegistryStore`.

Every operation reads the registry files afresh, so several processes (the CLI, an
orchestrator, a script) can share a project without stale state. The project's file counts
only while the user trusts it (``tooldeck trust``, :mod:`tools.store.trust`).

Adoption records the version adopted as the entry's ``version_hash``
(:meth:`ToolConfig.compute_version_hash`). :meth:`RegistryService.needs_reapproval` is true
when the entry now hashes differently (someone edited its settings), and
:meth:`RegistryService.is_approved` is true for an adopted entry that does not need
re-approval. A hand-written entry without a ``version_hash`` counts as adopted as it is: the
operator wrote it.

With an :class:`~tools.approvals.ApprovalsStore` (``approvals=``), approval means what the
freedom dial means by it (``tools.approvals``): a person approved the tool for its current
version hash, the same hash adoption records (``tool_version_hash(tool)`` of a built tool is
``config.compute_version_hash()``). Then :meth:`~RegistryService.is_approved` also needs a
stored approval for the current hash, and :meth:`~RegistryService.needs_reapproval` is also
true when the stored approval is for another hash.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from tools.base import BaseTool
from tools.errors import ToolDefinitionError
from tools.store.builder import ToolBuilder
from tools.store.catalog import ToolCatalog
from tools.store.config import ManualOverrides, Registry, ToolConfig
from tools.store.errors import AlreadyAdoptedError, CatalogError, StoreError, ToolNotAdoptedError
from tools.store.registry_store import RegistryStore
from tools.store.sources import CatalogEntry, normalize_capability

if TYPE_CHECKING:
    from tools.approvals import ApprovalsStore

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CapabilityMatch:
    """The answer to :meth:`RegistryService.find_by_capability`.

    Attributes:
        capability: The capability asked for (normalised).
        available: Adopted tools that have it.
        suggested: When none is adopted, catalog entries that could be (empty otherwise).
    """

    capability: str
    available: list[ToolConfig] = field(default_factory=list)
    suggested: list[CatalogEntry] = field(default_factory=list)

    @property
    def has_tool(self) -> bool:
        """True when an adopted tool has the capability."""
        return bool(self.available)


def adopt_command(entry: CatalogEntry, tool_id: str | None = None) -> str:
    """The ``tooldeck adopt`` command line that adopts ``entry`` (under ``tool_id``)."""
    words = ["tooldeck", "adopt", entry.catalog_id]
    if tool_id is not None and tool_id != entry.template.id:
        words += ["--id", tool_id]
    return shlex.join(words)


class RegistryService:
    """Adoption, removal, capability lookup and tool building over a :class:`RegistryStore`.

    Args:
        store: The registry files.
        catalog: The catalog adoption suggestions come from (optional).
        builder: Builds tools from configs (default: one with ``env``).
        env: The environment tools run with (secrets are read from it at call time); used
            only when ``builder`` is not given.
        clock: Current time, for ``adopted_at`` (injectable for tests).
        approvals: The approvals file; when given, :meth:`is_approved` and
            :meth:`needs_reapproval` also consult its per-tool approvals (module docstring).
    """

    def __init__(
        self,
        store: RegistryStore,
        *,
        catalog: ToolCatalog | None = None,
        builder: ToolBuilder | None = None,
        env: Mapping[str, str] | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
        approvals: ApprovalsStore | None = None,
    ) -> None:
        self.store = store
        self.approvals = approvals
        self.catalog = catalog
        self.builder = builder if builder is not None else ToolBuilder(env=env)
        self._clock = clock

    # ------------------------------------------------------------------ reading

    def load(self) -> Registry:
        """The merged registry (project over user), read now."""
        return self.store.load_merged()

    def list_tools(self) -> list[ToolConfig]:
        """Every adopted tool, sorted by id."""
        tools = self.load().tools
        return [tools[key] for key in sorted(tools)]

    def get(self, tool_id: str) -> ToolConfig:
        """The adopted tool ``tool_id``.

        Raises:
            ToolNotAdoptedError: not adopted; the message says how to adopt it.
        """
        config = self.load().get(tool_id)
        if config is None:
            raise self.not_adopted(tool_id)
        return config

    def not_adopted(self, tool_id: str) -> ToolNotAdoptedError:
        """The error for a tool that is not adopted, with the exact command that would adopt it
        (or, when the project registry is not trusted, how to trust it)."""
        shown = tool_id[:64]
        notice = self._untrusted_notice()
        if notice is not None:
            return ToolNotAdoptedError(tool_id, f"tool {shown!r} is not adopted in a registry in use: {notice}")
        entry = self._catalog_entry_for(tool_id)
        if entry is not None:
            command = adopt_command(entry, tool_id)
            return ToolNotAdoptedError(
                tool_id, f"tool {shown!r} is not adopted; adopt it with: {command}", adopt_command=command
            )
        return ToolNotAdoptedError(
            tool_id,
            f"tool {shown!r} is not adopted; find it with 'tooldeck catalog search {shown}' and adopt it "
            "with 'tooldeck adopt CATALOG_ID', or declare it in .tooldeck/registry.json",
        )

    def _untrusted_notice(self) -> str | None:
        """Why the project registry is not used, when it is not (None when it is, or unknown)."""
        try:
            return self.store.project_trust().notice()
        except StoreError:
            return None

    def _catalog_entry_for(self, tool_id: str) -> CatalogEntry | None:
        if self.catalog is None:
            return None
        try:
            entries = self.catalog.entries()
        except CatalogError:
            return None
        for entry in entries:
            if tool_id in (entry.template.id, entry.name, entry.catalog_id):
                return entry
        return None

    # ------------------------------------------------------------------ adoption

    def adopt(
        self,
        tool: ToolConfig | CatalogEntry | str,
        *,
        tool_id: str | None = None,
        capabilities: Sequence[str] = (),
        replace: bool = False,
        manual: ManualOverrides | None = None,
    ) -> ToolConfig:
        """Add a tool to the project registry (locked, atomic) and return what was written.

        Args:
            tool: A config, a catalog entry, or a catalog id (needs ``catalog``).
            tool_id: Adopt under this id instead of the entry's own.
            capabilities: Capability tags added to the tool's own.
            replace: Replace an adopted tool with the same id.
            manual: The operator's declarations (risk, category, mutating), over the
                config's own ``manual``; stored in the registry file.

        Raises:
            UnknownCatalogEntryError: no catalog entry with that id.
            AlreadyAdoptedError: the id is taken and ``replace`` is false.
            ToolDefinitionError: the config cannot become a working tool (e.g. a bad schema).
            RegistryFileError: the project registry is corrupt (it is not touched).
        """
        config, source = self._resolve(tool)
        update: dict[str, Any] = {
            "adopted_at": self._clock(),
            "adopted_from": source,
            "capabilities": tuple(
                dict.fromkeys([*config.capabilities, *(normalize_capability(c) for c in capabilities if c.strip())])
            ),
        }
        if tool_id is not None:
            update["id"] = tool_id
        if manual is not None and not manual.is_empty():
            update["manual"] = config.manual.model_copy(update=manual.model_dump(exclude_none=True))
        adopted = ToolConfig.model_validate({**config.model_dump(), **update}).with_version_hash()
        self.builder.check(adopted)

        def change(registry: Registry) -> Registry:
            if adopted.id in registry.tools and not replace:
                raise AlreadyAdoptedError(
                    f"a tool with id {adopted.id!r} is already adopted; pass --replace (replace=True) to "
                    f"overwrite it, or --id NAME (tool_id=...) to adopt this one under another id"
                )
            return registry.with_tool(adopted)

        self.store.update_project(change)
        logger.info("adopted tool %s from %s", adopted.id, source)
        return adopted

    def _resolve(self, tool: ToolConfig | CatalogEntry | str) -> tuple[ToolConfig, str | None]:
        if isinstance(tool, ToolConfig):
            return tool, tool.adopted_from
        if isinstance(tool, CatalogEntry):
            return tool.template, tool.catalog_id
        if self.catalog is None:
            raise StoreError(f"cannot adopt {tool[:100]!r}: no catalog is configured")
        entry = self.catalog.get(tool)
        return entry.template, entry.catalog_id

    def remove(self, tool_id: str) -> ToolConfig:
        """Remove ``tool_id`` from the project registry; returns the removed config.

        Raises:
            ToolNotAdoptedError: not in the project registry (a user-registry entry says so).
        """
        removed: list[ToolConfig] = []

        def change(registry: Registry) -> Registry:
            config = registry.get(tool_id)
            if config is None:
                if self.store.load_user().get(tool_id) is not None:
                    raise ToolNotAdoptedError(
                        tool_id,
                        f"tool {tool_id[:64]!r} is declared in the user registry {self.store.user_path}; "
                        "remove it there",
                    )
                raise ToolNotAdoptedError(tool_id, f"tool {tool_id[:64]!r} is not adopted in this project")
            removed.append(config)
            return registry.without(tool_id)

        self.store.update_project(change)
        return removed[0]

    # ------------------------------------------------------------------ lookup

    def find_by_capability(self, capability: str) -> CapabilityMatch:
        """Adopted tools with ``capability``; if none, catalog entries that could be adopted."""
        wanted = normalize_capability(capability)
        available = [c for c in self.list_tools() if wanted in (normalize_capability(x) for x in c.capabilities)]
        suggested: list[CatalogEntry] = []
        if not available and self.catalog is not None:
            try:
                suggested = self.catalog.find_by_capability(wanted)
            except CatalogError as exc:
                logger.warning("capability lookup in the catalog failed: %s", exc)
        return CapabilityMatch(wanted, available, suggested)

    def is_approved(self, tool_id: str) -> bool:
        """True when ``tool_id`` is adopted and unchanged since (see the module docstring);
        with ``approvals``, also approved for its current version hash.

        Raises:
            ApprovalsFileError: the approvals file is unusable.
        """
        config = self.load().get(tool_id)
        if config is None or _changed(config):
            return False
        return self.approvals is None or self.approvals.is_approved(tool_id, config.compute_version_hash())

    def needs_reapproval(self, tool_id: str) -> bool:
        """True when ``tool_id`` is adopted but its settings changed since it was adopted, or
        (with ``approvals``) since a person approved it.

        Raises:
            ApprovalsFileError: the approvals file is unusable.
        """
        config = self.load().get(tool_id)
        if config is None:
            return False
        if _changed(config):
            return True
        stored = self.approvals.get(tool_id) if self.approvals is not None else None
        return stored is not None and stored.version_hash != config.compute_version_hash()

    # ------------------------------------------------------------------ building

    def build_tools(self, *, skipped: dict[str, str] | None = None) -> list[BaseTool[Any, Any]]:
        """Every adopted tool as a ``BaseTool`` with its manual, sorted by id.

        Each tool carries its :class:`ToolConfig` as ``tool.config``, so approvals bind to
        ``config.compute_version_hash()`` (:func:`tools.approvals.tool_version_hash`).

        Args:
            skipped: When given, receives ``{id: reason}`` for tools that could not be built
                (they are left out and logged as a WARNING); otherwise the first such
                failure raises.

        Raises:
            RegistryFileError: a registry file is corrupt.
            ToolDefinitionError: a tool cannot be built and ``skipped`` is None.
        """
        out: list[BaseTool[Any, Any]] = []
        for config in self.list_tools():
            try:
                tool = self.builder.build(config)
                if getattr(tool, "config", None) is None:  # binaries: approvals bind to the config's hash
                    tool.config = config  # type: ignore[attr-defined]  # read by tools.approvals.tool_version_hash
                out.append(tool)
            except (ToolDefinitionError, ValueError) as exc:
                if skipped is None:
                    raise
                skipped[config.id] = str(exc)
                logger.warning("adopted tool %s not built: %s", config.id, exc)
        return out

    def close(self) -> None:
        """Close the builder's adapters (HTTP sessions, MCP servers, child processes)."""
        self.builder.close()


def _changed(config: ToolConfig) -> bool:
    return config.version_hash is not None and config.version_hash != config.compute_version_hash()
