"""How the host sends a module's HTTP requests: the :class:`ModuleEgress` contract.

A module worker has no network; each request it makes comes to the host, which checks it
against the module's ``api_url`` and puts the credentials in (:mod:`.forwarding`), then
hands it to a :class:`ModuleEgress` to send. The egress applies the address policy (which
hosts and addresses may be reached at all): the tool layer provides one built on the web
tool's policy (``tools.builtin.modules.PolicyEgress``); :class:`NoEgress` refuses
everything, for processes that never fetch module data (the orchestrator only shapes
data the context service already fetched).

An egress never follows redirects (the worker's session does, each hop checked again) and
never uses proxies from the environment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

__all__ = ["EgressError", "EgressRequest", "EgressResponse", "ModuleEgress", "NoEgress"]

#: Why a request was not answered: refused by policy, timed out, no connection, too large.
EgressErrorKind = Literal["refused", "timeout", "connection", "too_large"]


@dataclass(frozen=True, slots=True)
class EgressRequest:
    """One HTTP request, checked and with its credentials in, ready to send.

    Attributes:
        method: ``GET``, ``POST``, ...
        url: The absolute URL (under the module's ``api_url``).
        headers: ``(name, value)`` pairs (no ``Host``, ``Content-Length`` or hop-by-hop
            headers: the egress sets those).
        body: The request body, if any.
        timeout: Seconds the whole exchange may take.
    """

    method: str
    url: str
    headers: tuple[tuple[str, str], ...]
    body: bytes | None
    timeout: float


@dataclass(frozen=True, slots=True)
class EgressResponse:
    """The answer to an :class:`EgressRequest` (any status; redirects are not followed).

    Attributes:
        status: The HTTP status code.
        reason: The reason phrase.
        headers: ``(name, value)`` pairs as received.
        body: The whole body (bounded by the egress).
        url: The URL that answered.
    """

    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    url: str


class EgressError(Exception):
    """The request was not answered; the message names the origin, never a path or secret.

    Args:
        kind: ``refused`` (the policy forbids it), ``timeout``, ``connection`` or
            ``too_large``.
        message: What happened, for the module (and its user).
    """

    def __init__(self, kind: EgressErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: EgressErrorKind = kind
        self.message = message


class ModuleEgress(Protocol):
    """Sends a module's request from the host, within an address policy."""

    def send(self, request: EgressRequest) -> EgressResponse:
        """Send ``request`` and return the answer.

        Raises:
            EgressError: Refused, timed out, unreachable or too large.
        """
        ...


class NoEgress:
    """Refuses every request: for a process whose modules must not reach the network.

    Args:
        reason: The refusal the module sees.
    """

    def __init__(self, reason: str = "this process does not send modules' HTTP requests") -> None:
        self._reason = reason

    def send(self, request: EgressRequest) -> EgressResponse:
        """Always refuses."""
        raise EgressError("refused", self._reason)
