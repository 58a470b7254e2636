"""Loaded modules as adapters: the stand-in the context service runs for a module (its code
runs in the module's worker), and the stand-in for a module that could not be loaded.

:class:`ModuleAdapter` runs no module code itself. Each of its hooks is a call into the
module's :class:`~shared.modules.worker.ModuleWorker`: ``fetch`` (``fetch_raw`` and
``transform`` in one call), ``fetch_raw``, ``transform``, and the class hooks
``merge_records``, ``context_payload`` and ``normalize_for_tools`` (run here with
``BaseAdapter``'s default when the module does not define them). The worker is given the
config with ``base_url`` and, for ``credentials``, per-call placeholders; the host decrypts
the real values for the one call and puts them into the module's requests to its own API
(:mod:`~shared.modules.forwarding`).

Whatever the module does, the result never carries a credential: an error message that
holds one (or a placeholder) is redacted, and records that hold one are withheld.
Exceptions are reported by type only; only an ``AdapterError``'s message is shown.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Mapping, Sequence
from datetime import datetime
from typing import Any, ClassVar

from pydantic_core import to_json, to_jsonable_python

from shared.adapters.base import AdapterError, AdapterResult, BaseAdapter
from shared.modules.forwarding import CallSecrets
from shared.modules.manifest import ModuleManifest
from shared.modules.worker import ModuleWorker, WorkerCallError

__all__ = ["BrokenModuleAdapter", "ModuleAdapter", "broken_module_class", "module_adapter_class"]

logger = logging.getLogger(__name__)

#: Returns the module's credentials (decrypted now); raises ``ValueError`` when unusable.
CredentialSource = Callable[[], Mapping[str, str]]
_SHAPE_ERRORS: dict[str, type[Exception]] = {
    cls.__name__: cls for cls in (TypeError, KeyError, ValueError, AttributeError, IndexError)
}


class ModuleAdapter(BaseAdapter[Any]):
    """The adapter the context service runs for one loaded module version.

    Subclasses are made by :func:`module_adapter_class`; constructor arguments are those of
    :class:`~shared.adapters.base.BaseAdapter` (a ``session`` is ignored: the module's HTTP
    goes through its worker and the host).
    """

    manifest: ClassVar[ModuleManifest]
    version_id: ClassVar[str] = ""
    worker: ClassVar[ModuleWorker]
    credential_source: ClassVar[CredentialSource | None] = None
    offline = False

    def __init__(self, **kwargs: Any) -> None:
        kwargs.pop("session", None)
        super().__init__(**kwargs)

    def _secrets(self) -> CallSecrets:
        source = type(self).credential_source
        try:
            values = dict(source()) if source is not None else {}
        except ValueError as exc:  # CredentialError and friends: messages hold no secret
            raise AdapterError(f"module {self.manifest.id}: {exc}") from None
        missing = [name for name in self.manifest.required_credentials if not values.get(name)]
        if missing:
            raise AdapterError(
                f"module {self.manifest.id} needs the credentials {', '.join(missing)}; store them with "
                f"module_admin(action='store_credentials', module_id='{self.manifest.id}', ...)"
            )
        return CallSecrets(values)

    def _config(self, config: Mapping[str, Any], secrets: CallSecrets) -> dict[str, Any]:
        plain = to_jsonable_python(dict(config), fallback=str)
        return {**plain, "base_url": self.manifest.api_url, "credentials": dict(secrets.placeholders)}

    def _failure_text(self, exc: WorkerCallError, secrets: CallSecrets) -> str:
        if exc.detail is not None:
            return secrets.scrub(exc.detail)
        if exc.kind == "module":
            return f"the module {self.manifest.id} failed ({exc.error_type})"
        return str(exc)

    def fetch_raw(self, config: Mapping[str, Any]) -> Any:
        """The module's ``fetch_raw`` (in its worker), as JSON.

        Raises:
            AdapterError: The module failed; the message says how.
        """
        secrets = self._secrets()
        try:
            return self.worker.call("fetch_raw", {"config": self._config(config, secrets)}, secrets=secrets)
        except WorkerCallError as exc:
            raise AdapterError(self._failure_text(exc, secrets)) from None

    def transform(self, raw: Any) -> list[Any]:
        """The module's ``transform`` (in its worker); its result must be a list.

        Raises:
            AdapterError: The module failed or returned something else than a list.
        """
        try:
            records = self.worker.call("transform", {"raw": to_jsonable_python(raw, fallback=str)})
        except WorkerCallError as exc:
            raise AdapterError(self._failure_text(exc, CallSecrets({}))) from None
        if not isinstance(records, list):
            raise AdapterError(f"module {self.manifest.id}: transform must return a list")
        return records

    def fetch(self, config: Mapping[str, Any]) -> AdapterResult[Any]:
        """Run the module once in its worker; never raises, never returns a credential."""
        secrets = CallSecrets({})
        try:
            secrets = self._secrets()
            value = self.worker.call("fetch", {"config": self._config(config, secrets)}, secrets=secrets)
        except AdapterError as exc:
            return self._failure(secrets.scrub(exc.describe()))
        except WorkerCallError as exc:
            if exc.kind == "module" and exc.detail is None:
                logger.warning("module %s (%s) failed: %s", self.manifest.id, self.version_id, exc.error_type)
            return self._failure(self._failure_text(exc, secrets))
        records = value.get("records") if isinstance(value, dict) else None
        if not isinstance(records, list):
            return self._failure(f"module {self.manifest.id}: transform must return a list")
        if secrets.found_in(to_json(records).decode("utf-8", "replace")):
            logger.warning("module %s (%s) put a credential in its records", self.manifest.id, self.version_id)
            return self._failure(
                f"the module {self.manifest.id} put one of its credentials in its data; the data is withheld"
            )
        raw_count = value.get("raw_count")
        return AdapterResult(
            success=True,
            category=self.category,
            platform=self.platform,
            data=records,
            fetched_at=self._clock(),
            raw_count=raw_count if isinstance(raw_count, int) else 0,
            transformed_count=len(records),
            metadata={"module_id": self.manifest.id, "version_id": self.version_id},
        )

    def cache_token(self, config: Mapping[str, Any]) -> Hashable | None:
        """The module and version: a rollback or promote invalidates cached context."""
        return ("module", self.manifest.id, self.version_id)

    @classmethod
    def _class_call(cls, method: str, args: Mapping[str, Any]) -> Any:
        try:
            return cls.worker.call(method, args)
        except WorkerCallError as exc:
            if exc.detail is not None:
                raise AdapterError(CallSecrets({}).scrub(exc.detail)) from None
            raise AdapterError(f"the module {cls.manifest.id} failed in {method} ({exc.error_type or exc})") from None

    @classmethod
    def merge_records(cls, batches: Sequence[Sequence[Any]]) -> list[Any]:
        """The module's ``merge_records`` (default: concatenation)."""
        if "merge_records" not in cls.worker.overrides:
            return super().merge_records(batches)
        merged = cls._class_call("merge_records", {"batches": to_jsonable_python(batches, fallback=str)})
        if not isinstance(merged, list):
            raise AdapterError(f"module {cls.manifest.id}: merge_records must return a list")
        return merged

    @classmethod
    def context_payload(cls, records: Sequence[Any], *, now: datetime, options: Mapping[str, Any]) -> Any:
        """The module's ``context_payload`` (default: every record)."""
        if "context_payload" not in cls.worker.overrides:
            return super().context_payload(records, now=now, options=options)
        args = {"records": records, "now": now.isoformat(), "options": options}
        return cls._class_call("context_payload", to_jsonable_python(args, fallback=str))

    @classmethod
    def normalize_for_tools(cls, data: Any) -> dict[str, Any]:
        """The module's ``normalize_for_tools``; a failure is a ``ValueError`` (or the
        ``TypeError``/``KeyError``/... the module raised for data of the wrong shape)."""
        if "normalize_for_tools" not in cls.worker.overrides:
            return super().normalize_for_tools(data)
        try:
            shaped = cls.worker.call("normalize_for_tools", {"data": to_jsonable_python(data, fallback=str)})
        except WorkerCallError as exc:
            shape = _SHAPE_ERRORS.get(exc.error_type) if exc.shape else None
            message = f"module {cls.manifest.id} could not summarise its data ({exc.error_type or exc.kind})"
            raise (shape or ValueError)(message) from None
        if not isinstance(shaped, dict):
            raise TypeError(f"module {cls.manifest.id}: normalize_for_tools must return a dict")
        return shaped


def module_adapter_class(
    manifest: ModuleManifest,
    version_id: str,
    worker: ModuleWorker,
    credentials: CredentialSource | None,
) -> type[ModuleAdapter]:
    """A :class:`ModuleAdapter` subclass for one module version (its platform is the id)."""
    attributes: dict[str, Any] = {
        "category": manifest.category,
        "platform": manifest.id,
        "description": manifest.description or manifest.name,
        "manifest": manifest,
        "version_id": version_id,
        "worker": worker,
        "credential_source": staticmethod(credentials) if credentials is not None else None,
        "__module__": __name__,
        "__doc__": f"Module {manifest.id} ({version_id}).",
    }
    return type(f"Module_{manifest.id}_{version_id}", (ModuleAdapter,), attributes)


class BrokenModuleAdapter(BaseAdapter[Any]):
    """Stands in for an enabled module that could not be loaded: every fetch reports why."""

    reason: ClassVar[str] = ""
    offline = True

    def fetch_raw(self, config: Mapping[str, Any]) -> Any:
        """Always fails with the load problem."""
        raise AdapterError(self.reason)

    def transform(self, raw: Any) -> list[Any]:
        """Never reached."""
        return []

    def cache_token(self, config: Mapping[str, Any]) -> Hashable | None:
        """The reason: a different problem is a different result."""
        return ("broken", self.platform, self.reason)


def broken_module_class(module_id: str, category: str, reason: str) -> type[BrokenModuleAdapter]:
    """A :class:`BrokenModuleAdapter` subclass reporting ``reason`` for ``module_id``."""
    attributes: dict[str, Any] = {
        "category": category,
        "platform": module_id,
        "description": f"module {module_id} (not loaded)",
        "reason": f"module {module_id} could not be loaded: {reason}",
        "__module__": __name__,
    }
    return type(f"BrokenModule_{module_id}", (BrokenModuleAdapter,), attributes)
