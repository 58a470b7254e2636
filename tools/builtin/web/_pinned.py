"""A requests transport adapter that connects only to addresses vetted beforehand.

The fetcher resolves and vets a host (:class:`~tools.builtin.web.address.AddressPolicy`),
then *pins* the host to the vetted address on this adapter. The adapter opens its socket to
that address while the request keeps the original host name in the ``Host`` header and, for
HTTPS, in SNI and certificate verification. A host that was never pinned is refused (fail
closed), so no request can reach an address that did not pass the policy, even if DNS
answers differently a moment later.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from requests import PreparedRequest
from requests.adapters import HTTPAdapter


class UnpinnedHostError(RuntimeError):
    """A request was sent to a host the fetcher did not vet first."""


class PinnedAddressAdapter(HTTPAdapter):
    """An :class:`~requests.adapters.HTTPAdapter` that connects to pinned addresses only.

    Not shared between concurrent loads: the fetcher makes one per load.
    """

    def __init__(self) -> None:
        super().__init__(max_retries=0, pool_connections=4, pool_maxsize=4)
        self._pins: dict[tuple[str, str, int], str] = {}

    def pin(self, scheme: str, host: str, port: int, address: str) -> None:
        """Connect to ``address`` for requests to ``scheme://host:port``."""
        self._pins[(scheme, host.lower(), port)] = address

    def build_connection_pool_key_attributes(
        self, request: PreparedRequest, verify: Any, cert: Any = None
    ) -> tuple[Any, Any]:
        """Swap the host for its pinned address; keep the name for SNI and verification.

        Raises:
            UnpinnedHostError: When the request's host was not pinned.
        """
        base_host, base_pool = super().build_connection_pool_key_attributes(request, verify, cert)
        host_params: dict[str, Any] = dict(base_host)
        pool_kwargs: dict[str, Any] = dict(base_pool)
        parts = urlsplit(request.url or "")
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").rstrip(".").lower()
        port = parts.port or (443 if scheme == "https" else 80)
        address = self._pins.get((scheme, host, port))
        if address is None:
            raise UnpinnedHostError(f"refusing to connect to unvetted host {host!r}")
        host_params.update(host=address, port=port)
        if scheme == "https":
            pool_kwargs.update(server_hostname=host, assert_hostname=host)
        return host_params, pool_kwargs
