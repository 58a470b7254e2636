"""The Settings page: the freedom level, sub-agent turns, routing overrides, in the files the
command-line tools read, validated by the same models.

* Freedom level: the approvals file (``tooldeck configure freedom``), `FreedomLevel.parse`.
* Max sub-agent iterations: the user's ``settings.json`` (`orchestrator.stored_settings`),
  validated by the `Settings` field; ``TOOLDECK_MAX_SUBAGENT_ITERATIONS`` wins over it.
* Routing overrides: the routing config file in force (``TOOLDECK_ROUTING_CONFIG``, else the
  one stored in ``settings.json``, else ``routing.json`` in the user's configuration
  directory, which is then stored), validated by `ToolRoutingConfig` and checked against the
  registered tools like ``registry.for_agent`` does.

A form is saved whole or not at all: every field is checked first, and each problem is shown
beside its field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.stored_settings import SettingsFile
from tools._files import atomic_write_text
from tools.approvals import FREEDOM_VARIABLE, ApprovalError, FreedomLevel
from tools.errors import TooldeckError
from tools.routing import RoutingConfigError, ToolRouter, ToolRoutingConfig

if TYPE_CHECKING:
    from tools.approvals import ApprovalsBackend
    from tools.manual import ToolManual
    from tools.store import RegistryStore

__all__ = ["ProjectFile", "SettingsForm", "SettingsSources", "TrustedFile"]

ROUTING_VARIABLE = "TOOLDECK_ROUTING_CONFIG"
ITERATIONS_VARIABLE = "TOOLDECK_MAX_SUBAGENT_ITERATIONS"
#: The routing overrides file the console creates when none is configured.
DEFAULT_ROUTING_FILE = "routing.json"
_MAX_ROUTING_CHARS = 200_000
_EMPTY_ROUTING = '{\n  "global_deny": [],\n  "profiles": {}\n}\n'


@dataclass
class SettingsForm:
    """The values shown in (or sent by) the Settings form, and the problem of each field.

    Attributes:
        freedom: ``low``, ``medium`` or ``high``.
        iterations: Max sub-agent iterations as text ("" means the default, 3).
        routing: The routing overrides file's text.
        errors: Field name -> what is wrong with it.
        notes: Field name -> something worth knowing (an environment variable overrides it).
    """

    freedom: str
    iterations: str
    routing: str
    routing_file: str
    errors: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TrustedFile:
    """A project registry file the user trusts (``tooldeck trust``).

    Attributes:
        path: The file.
        status: ``trusted`` (its bytes are as trusted), ``changed`` (edited since: not used)
            or ``missing`` (gone).
        trusted_at: When it was trusted.
    """

    path: str
    status: str
    trusted_at: str


@dataclass(frozen=True)
class ProjectFile:
    """The console's project registry file, for a person to review before trusting it.

    Attributes:
        path: The file.
        status: ``absent``, ``own``, ``trusted``, ``untrusted`` or ``changed``.
        sha256: Its hash now (what a trust is bound to).
        tools: ``(id, kind, what it runs)`` of each tool it declares.
        problem: Why it cannot be read.
    """

    path: str
    status: str
    sha256: str | None
    tools: list[tuple[str, str, str]]
    problem: str | None = None


@dataclass
class SettingsSources:
    """Where the settings are kept.

    Args:
        file: The user's ``settings.json``.
        approvals: The approvals (hold the freedom level): the user's file or the database.
        env: The console's environment (to say which variables override a stored value).
        config_dir: The user's configuration directory (where a new routing file goes).
        registry_files: The user's and the project's registry files (the project file's
            trust, the trusted-projects list); None: no trust section.
    """

    file: SettingsFile
    approvals: ApprovalsBackend
    env: Mapping[str, str] = field(default_factory=dict)
    config_dir: Path | None = None
    registry_files: RegistryStore | None = None

    # ------------------------------------------------------------------ reading

    def routing_path(self) -> tuple[Path | None, str]:
        """The routing overrides file in force and what names it (``""`` when none does)."""
        given = self.env.get(ROUTING_VARIABLE, "").strip()
        if given:
            return Path(given).expanduser(), f"environment variable {ROUTING_VARIABLE}"
        try:
            stored = self.file.load().routing_config
        except TooldeckError:
            stored = None
        if stored is not None:
            return stored, f"settings file {self.file.path}"
        return None, ""

    def routing_config(self) -> tuple[ToolRoutingConfig | None, str | None]:
        """The routing overrides in force (None: none), and why they cannot be used."""
        path, _ = self.routing_path()
        if path is None:
            return None, None
        if not path.exists():
            return None, f"the routing config {path} does not exist (create it on the Settings page)"
        try:
            return ToolRoutingConfig.from_file(path), None
        except RoutingConfigError as exc:
            return None, str(exc)

    def form(self) -> SettingsForm:
        """The form with the values in force now."""
        notes: dict[str, str] = {}
        errors: dict[str, str] = {}
        try:
            level = self.approvals.freedom()
        except ApprovalError as exc:
            level, errors["freedom"] = None, str(exc)
        override = self.env.get(FREEDOM_VARIABLE, "").strip()
        if override:
            notes["freedom"] = f"{FREEDOM_VARIABLE}={override[:20]} overrides the stored level in this environment"
        try:
            stored = self.file.load().max_subagent_iterations
        except TooldeckError as exc:
            stored, errors["iterations"] = None, str(exc)
        if self.env.get(ITERATIONS_VARIABLE, "").strip():
            notes["iterations"] = f"{ITERATIONS_VARIABLE} overrides the stored value in this console's environment"
        path, named_by = self.routing_path()
        text = ""
        if path is not None:
            notes["routing"] = f"{path} (named by the {named_by})"
            try:
                text = path.read_text(encoding="utf-8")[:_MAX_ROUTING_CHARS] if path.exists() else ""
            except (OSError, UnicodeDecodeError) as exc:
                errors["routing"] = f"{path} cannot be read ({exc})"
        return SettingsForm(
            freedom=(level.value if level is not None else ""),
            iterations="" if stored is None else str(stored),
            routing=text or _EMPTY_ROUTING,
            routing_file=str(path or self._new_routing_path()),
            errors=errors,
            notes=notes,
        )

    # ------------------------------------------------------------------ saving

    def save(self, sent: Mapping[str, str], manuals: Sequence[ToolManual]) -> SettingsForm:
        """Check every field of ``sent``; save them all when every one is right.

        Args:
            sent: The submitted form (``freedom``, ``iterations``, ``routing``).
            manuals: The registered tools (the routing overrides must name registered tools).

        Returns:
            The form as sent, with ``errors`` (nothing was saved when there is any).
        """
        shown = self.form()
        shown.freedom = sent.get("freedom", "").strip()
        shown.iterations = sent.get("iterations", "").strip()
        shown.routing = sent.get("routing", "")
        shown.errors = {}
        level = self._check_freedom(shown)
        iterations = self._check_iterations(shown)
        path, routing_text = self._check_routing(shown, manuals)
        if shown.errors:
            return shown
        try:
            self.approvals.set_freedom(level)
            if path is not None and routing_text is not None:
                atomic_write_text(path, routing_text if routing_text.endswith("\n") else routing_text + "\n")
            changes: dict[str, Any] = {"max_subagent_iterations": iterations}
            if path is not None and not self.env.get(ROUTING_VARIABLE, "").strip():
                changes["routing_config"] = str(path)
            self.file.store(**changes)
        except (TooldeckError, ValueError, OSError) as exc:
            shown.errors["form"] = f"not saved: {exc}"
            return shown
        saved = self.form()
        saved.notes["form"] = "saved"
        return saved

    # ------------------------------------------------------------------ trusted registry files

    def trusted_files(self) -> tuple[list[TrustedFile], ProjectFile | None, str | None]:
        """The trusted project files, this console's project file, and a problem reading them."""
        store = self.registry_files
        if store is None:
            return [], None, None
        from tools.store.trust import file_sha256, what_it_runs

        try:
            recorded = store.trust.load().projects
        except TooldeckError as exc:
            return [], None, str(exc)
        entries = []
        for path, record in recorded.items():
            try:
                status = "trusted" if file_sha256(Path(path).read_bytes()) == record.sha256 else "changed"
            except OSError:
                status = "missing"
            entries.append(TrustedFile(path, status, record.trusted_at.strftime("%Y-%m-%d %H:%M UTC")))
        try:
            trust = store.project_trust()
            tools = (
                [(c.id, c.adapter_type, what_it_runs(c)) for c in store.load_project_unchecked().tools.values()]
                if trust.status != "absent"
                else []
            )
            project = ProjectFile(str(store.project_path), trust.status, trust.sha256, sorted(tools))
        except TooldeckError as exc:
            project = ProjectFile(str(store.project_path), "unreadable", None, [], str(exc))
        return entries, project, None

    def trust_project(self, shown_sha256: str) -> str | None:
        """Trust the project file as it was shown (its hash then); the problem, if any.

        The trust is bound to ``shown_sha256``: if the file changed since the person reviewed
        it, nothing is trusted (and a change after this is refused the same way when used).
        """
        store = self.registry_files
        if store is None:
            return "this console has no registry files to trust"
        _, project, problem = self.trusted_files()
        problem = problem or _untrustable(project, shown_sha256)
        if problem is not None:
            return problem
        try:
            store.trust.trust(store.project_path, shown_sha256)
        except TooldeckError as exc:
            return str(exc)
        return None

    def revoke_trust(self, path: str) -> str | None:
        """Withdraw the trust of a project file; the problem, if any."""
        store = self.registry_files
        if store is None:
            return "this console has no registry files"
        try:
            removed = store.trust.revoke(Path(path))
        except TooldeckError as exc:
            return str(exc)
        return None if removed is not None else f"{path} was not trusted"

    def _check_freedom(self, shown: SettingsForm) -> FreedomLevel | None:
        if not shown.freedom:
            return None
        try:
            return FreedomLevel.parse(shown.freedom, what="freedom level")
        except ApprovalError as exc:
            shown.errors["freedom"] = str(exc)
            return None

    def _check_iterations(self, shown: SettingsForm) -> int | None:
        from orchestrator.settings import Settings, SettingsError

        if not shown.iterations:
            return None
        try:
            given: dict[str, Any] = {"max_subagent_iterations": shown.iterations}  # text, read as the variable is
            return Settings(**given).max_subagent_iterations
        except SettingsError as exc:
            problem = exc.problems[0] if exc.problems else {}
            described = Settings.model_fields["max_subagent_iterations"].description
            shown.errors["iterations"] = (
                f"{shown.iterations[:20]!r}: {problem.get('msg', 'not valid')}; expected {described}"
            )
            return None

    def _check_routing(self, shown: SettingsForm, manuals: Sequence[ToolManual]) -> tuple[Path | None, str | None]:
        """The file to write and its text, when the overrides changed and are right."""
        current = self.form()
        if shown.routing.strip() == current.routing.strip():
            return None, None
        path, _ = self.routing_path()
        if not shown.routing.strip():  # cleared: no overrides (an empty object, if there is a file)
            if path is None or not path.exists():
                return None, None
            shown.routing = "{}"
        target = path if path is not None else self._new_routing_path()
        if len(shown.routing) > _MAX_ROUTING_CHARS:
            shown.errors["routing"] = f"longer than {_MAX_ROUTING_CHARS} characters"
            return None, None
        try:
            config = ToolRoutingConfig.from_text(shown.routing, target)
            ToolRouter(config=config).check(manuals)
        except RoutingConfigError as exc:
            shown.errors["routing"] = str(exc)
            return None, None
        return target, shown.routing

    def _new_routing_path(self) -> Path:
        base = self.config_dir if self.config_dir is not None else self.file.path.parent
        return base / DEFAULT_ROUTING_FILE


def _untrustable(project: ProjectFile | None, shown_sha256: str) -> str | None:
    """Why ``project`` cannot be trusted as shown (None: it can)."""
    if project is None:
        return "no project file"
    if project.problem is not None:
        return project.problem
    if project.sha256 is None:
        return f"there is no project registry at {project.path}: nothing to trust"
    if project.sha256 != shown_sha256:
        return f"{project.path} changed since it was shown; review it again before trusting it"
    return None
