"""``PolicyEgress``: the host sends module workers' HTTP requests within the web tool's
address policy.

A module's request reaches this point only after the host checked it against the module's
``api_url`` and put its credentials in (``shared.modules.forwarding``). Here the URL's host
is resolved and every address vetted by :class:`~tools.builtin.web.address.AddressPolicy`
(no loopback, private, link-local or cloud-metadata address unless the operator allows
that host or network), and the connection goes to the vetted address itself (pinned, so a
DNS answer that changes in between cannot redirect it). No proxies, no redirects (the
worker's session follows them, each hop checked again), a bounded body and a deadline.
"""

from __future__ import annotations

import time

import requests
from requests.structures import CaseInsensitiveDict

from shared.modules import EgressError, EgressRequest, EgressResponse
from tools.builtin.web._pinned import PinnedAddressAdapter
from tools.builtin.web.address import AddressPolicy, Target
from tools.errors import InvalidArgumentsError, PermissionDeniedError

__all__ = ["PolicyEgress"]

_MAX_BODY = 20 * 1024 * 1024
_CONNECT_TIMEOUT = 5.0
#: Headers that describe the body as it came over the wire; the body handed on is decoded.
_WIRE_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive"})


def _origin(target: Target) -> str:
    return f"{target.scheme}://{target.host_header}"


class PolicyEgress:
    """Sends checked module requests from the host (a ``shared.modules.ModuleEgress``).

    Args:
        policy: Which addresses may be reached (default: public internet addresses only).
            Build it with ``AddressPolicy.build(allow_hosts=[...])`` to let modules reach
            an intranet or local API the operator trusts.
        max_body_bytes: Largest answer passed on (decoded).
        ca_bundle: A CA bundle for HTTPS (an intranet's private CA); the default trust
            store otherwise. Certificates are always checked against the host name.
        user_agent: Sent when the module sets no ``User-Agent``.
    """

    def __init__(
        self,
        *,
        policy: AddressPolicy | None = None,
        max_body_bytes: int = _MAX_BODY,
        ca_bundle: str | None = None,
        user_agent: str = "tooldeck-module/1",
    ) -> None:
        self.policy = policy if policy is not None else AddressPolicy()
        self._max_body = max_body_bytes
        self._verify: bool | str = ca_bundle or True
        self._user_agent = user_agent

    def __repr__(self) -> str:
        return f"PolicyEgress(allow_hosts={sorted(self.policy.allow_hosts)})"

    def send(self, request: EgressRequest) -> EgressResponse:
        """Vet the URL's addresses, send ``request`` to one of them and read the answer.

        Raises:
            EgressError: ``refused`` (a refused address or a malformed URL), ``timeout``,
                ``connection`` (no answer, a host that does not resolve, TLS) or
                ``too_large``.
        """
        deadline = time.monotonic() + request.timeout
        target = self._vet(request.url)
        prepared = requests.Request(
            request.method, request.url, headers=CaseInsensitiveDict(dict(request.headers)), data=request.body
        ).prepare()
        prepared.headers["Host"] = target.host_header
        prepared.headers.setdefault("User-Agent", self._user_agent)
        adapter = PinnedAddressAdapter()
        try:
            *earlier, last = (target.address, *target.fallbacks)
            for address in earlier:  # another vetted address of the host when one refuses
                adapter.pin(target.scheme, target.host, target.port, address)
                try:
                    return self._send_once(adapter, prepared, target, deadline)
                except EgressError as exc:
                    if exc.kind != "connection":
                        raise
            adapter.pin(target.scheme, target.host, target.port, last)
            return self._send_once(adapter, prepared, target, deadline)
        finally:
            adapter.close()

    def _vet(self, url: str) -> Target:
        try:
            return self.policy.check_url(url)
        except PermissionDeniedError as exc:
            raise EgressError("refused", exc.message) from None
        except InvalidArgumentsError as exc:  # a host that does not resolve (the URL was checked)
            raise EgressError("connection", exc.message) from None

    def _send_once(
        self, adapter: PinnedAddressAdapter, prepared: requests.PreparedRequest, target: Target, deadline: float
    ) -> EgressResponse:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise EgressError("timeout", f"{_origin(target)}: no time was left for the request")
        try:
            response = adapter.send(
                prepared, stream=True, timeout=(min(_CONNECT_TIMEOUT, remaining), remaining),
                verify=self._verify, proxies={},
            )  # fmt: skip
            with response:
                body = self._read(response, target, deadline)
        except requests.exceptions.Timeout:
            raise EgressError("timeout", f"{_origin(target)} did not answer in time") from None
        except requests.exceptions.SSLError:
            raise EgressError("connection", f"{_origin(target)} has a TLS/certificate problem") from None
        except requests.exceptions.RequestException as exc:
            raise EgressError("connection", f"could not connect to {_origin(target)} ({type(exc).__name__})") from None
        headers = tuple((k, v) for k, v in response.headers.items() if k.lower() not in _WIRE_HEADERS)
        return EgressResponse(
            status=response.status_code,
            reason=response.reason or "",
            headers=headers,
            body=body,
            url=prepared.url or target.url,
        )

    def _read(self, response: requests.Response, target: Target, deadline: float) -> bytes:
        body = bytearray()
        for chunk in response.iter_content(65536):
            body += chunk
            if len(body) > self._max_body:
                raise EgressError("too_large", f"{_origin(target)} sent more than {self._max_body} bytes")
            if time.monotonic() > deadline:
                raise EgressError("timeout", f"{_origin(target)} did not finish its answer in time")
        return bytes(body)
