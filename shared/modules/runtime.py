"""Loaded modules as adapters: the wrapper the context service runs, and the stand-in for
a module that could not be loaded.

:class:`ModuleAdapter` wraps a module's own adapter class. Its ``fetch`` gives the
module's adapter a :class:`~shared.modules.confined_http.ConfinedSession` (HTTP only under
the manifest's ``api_url``) and a config holding ``base_url`` and ``credentials``; the
credentials are decrypted for that one call and never kept. Whatever the module does, the
result never carries a credential: an error message that contains one is redacted, and
records that contain one are withheld. Exceptions are reported by type only, and logged
without their message (it might hold a secret).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Mapping, Sequence
from datetime import datetime
from typing import Any, ClassVar

from pydantic_core import to_json

from shared.adapters.base import AdapterError, AdapterResult, BaseAdapter
from shared.modules.confined_http import ConfinedSession
from shared.modules.manifest import ModuleManifest

__all__ = ["BrokenModuleAdapter", "ModuleAdapter", "broken_module_class", "module_adapter_class"]

logger = logging.getLogger(__name__)

#: Returns the module's credentials (decrypted now); raises ``ValueError`` when unusable.
CredentialSource = Callable[[], Mapping[str, str]]
_SHAPE_ERRORS = (TypeError, KeyError, ValueError, AttributeError, IndexError)
_MIN_SECRET_CHARS = 4


class ModuleAdapter(BaseAdapter[Any]):
    """The adapter the context service runs for one loaded module version.

    Subclasses are made by :func:`module_adapter_class`; constructor arguments are those of
    :class:`~shared.adapters.base.BaseAdapter` (an injected ``session`` is replaced by the
    confined one).
    """

    manifest: ClassVar[ModuleManifest]
    version_id: ClassVar[str] = ""
    inner_class: ClassVar[type[BaseAdapter[Any]]]
    credential_source: ClassVar[CredentialSource | None] = None
    offline = False

    def __init__(self, **kwargs: Any) -> None:
        kwargs.pop("session", None)
        super().__init__(**kwargs)
        passed = ("clock", "sleep", "max_attempts", "http_timeout")
        self._inner_kwargs = {k: v for k, v in kwargs.items() if k in passed}
        self._inner: BaseAdapter[Any] | None = None

    def _module(self) -> BaseAdapter[Any]:
        if self._inner is None:
            session = ConfinedSession(self.manifest.api_url, timeout=self._http_timeout)
            self._inner = self.inner_class(session=session, **self._inner_kwargs)
        return self._inner

    def _credentials(self) -> dict[str, str]:
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
        return values

    def _config(self, config: Mapping[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {**config, "base_url": self.manifest.api_url, "credentials": dict(credentials)}

    def fetch_raw(self, config: Mapping[str, Any]) -> Any:
        """The module's ``fetch_raw`` with ``base_url`` and ``credentials`` added to ``config``."""
        return self._module().fetch_raw(self._config(config, self._credentials()))

    def transform(self, raw: Any) -> list[Any]:
        """The module's ``transform`` (its result must be a list)."""
        records = self._module().transform(raw)
        if not isinstance(records, list):
            raise AdapterError(f"module {self.manifest.id}: transform must return a list")
        return records

    def fetch(self, config: Mapping[str, Any]) -> AdapterResult[Any]:
        """Run the module once; never raises, never returns a credential."""
        secrets: list[str] = []
        try:
            credentials = self._credentials()
            secrets = [v for v in credentials.values() if len(v) >= _MIN_SECRET_CHARS]
            raw = self._module().fetch_raw(self._config(config, credentials))
            records = self.transform(raw)
        except AdapterError as exc:
            return self._failure(_redact(exc.describe(), secrets))
        except Exception as exc:
            logger.warning("module %s (%s) failed: %s", self.manifest.id, self.version_id, type(exc).__name__)
            return self._failure(f"the module {self.manifest.id} failed ({type(exc).__name__})")
        try:
            dumped = to_json(records, fallback=str).decode("utf-8", "replace")
        except Exception:
            return self._failure(f"the module {self.manifest.id} returned records that cannot be served as JSON")
        if any(secret in dumped or _json_text(secret) in dumped for secret in secrets):
            logger.warning("module %s (%s) put a credential in its records", self.manifest.id, self.version_id)
            return self._failure(
                f"the module {self.manifest.id} put one of its credentials in its data; the data is withheld"
            )
        return AdapterResult(
            success=True,
            category=self.category,
            platform=self.platform,
            data=records,
            fetched_at=self._clock(),
            raw_count=self.count_raw(raw),
            transformed_count=len(records),
            metadata={"module_id": self.manifest.id, "version_id": self.version_id},
        )

    def cache_token(self, config: Mapping[str, Any]) -> Hashable | None:
        """The module and version: a rollback or promote invalidates cached context."""
        return ("module", self.manifest.id, self.version_id)

    @classmethod
    def merge_records(cls, batches: Sequence[Sequence[Any]]) -> list[Any]:
        """The module's ``merge_records`` (default: concatenation)."""
        merged = cls.inner_class.merge_records(batches)
        return list(merged)

    @classmethod
    def context_payload(cls, records: Sequence[Any], *, now: datetime, options: Mapping[str, Any]) -> Any:
        """The module's ``context_payload`` (default: every record)."""
        return cls.inner_class.context_payload(records, now=now, options=options)

    @classmethod
    def normalize_for_tools(cls, data: Any) -> dict[str, Any]:
        """The module's ``normalize_for_tools``; any failure becomes a ``ValueError``."""
        try:
            shaped = cls.inner_class.normalize_for_tools(data)
        except _SHAPE_ERRORS:
            raise
        except Exception as exc:
            raise ValueError(f"module {cls.manifest.id} could not summarise its data ({type(exc).__name__})") from None
        if not isinstance(shaped, dict):
            raise TypeError(f"module {cls.manifest.id}: normalize_for_tools must return a dict")
        return shaped


def _json_text(value: str) -> str:
    """``value`` as it appears inside a JSON string (quotes and backslashes escaped)."""
    return to_json(value).decode("utf-8")[1:-1]


def _redact(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "[redacted]")
    return text


def module_adapter_class(
    manifest: ModuleManifest,
    version_id: str,
    inner_class: type[BaseAdapter[Any]],
    credentials: CredentialSource | None,
) -> type[ModuleAdapter]:
    """A :class:`ModuleAdapter` subclass for one module version (its platform is the id)."""
    attributes: dict[str, Any] = {
        "category": manifest.category,
        "platform": manifest.id,
        "description": manifest.description or manifest.name,
        "manifest": manifest,
        "version_id": version_id,
        "inner_class": inner_class,
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
