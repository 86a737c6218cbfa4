"""Load-balancer affinity across reconnects, as the TypeScript SDK 2.4.0's `MemoryAcpCookieStore`
(`AcpCookieStore`): the cookies a server sets on the responses of one connection (the HTTP
requests, the WebSocket upgrade) are sent on the requests of the next connection given the same
store, so that a load balancer that pins a client to a worker by cookie finds it again.

Only name=value pairs are kept: no domain or path matching, expiry, `Secure`, `HttpOnly` or
`SameSite`. It is meant for routing affinity, not for authentication."""

from __future__ import annotations

from collections.abc import Iterable


class AffinityCookies:
    """The affinity cookies of one agent, shared by the connections made to it."""

    def __init__(self) -> None:
        self.cookies: dict[str, str] = {}

    def store(self, set_cookie_values: Iterable[str]) -> None:
        """Keep the name and value of each `Set-Cookie` header value (a later one replaces an
        earlier one of the same name); a value without `name=` is ignored."""
        for value in set_cookie_values:
            name, separator, cookie = value.split(";", 1)[0].partition("=")
            if separator and name.strip():
                self.cookies[name.strip()] = cookie.strip()

    def header(self, caller: str | None = None) -> str | None:
        """The `Cookie` header of a request: the stored cookies, then those of `caller` (the
        request's own `Cookie` header), which win over stored ones of the same name."""
        merged = dict(self.cookies)
        for pair in (caller or "").split(";"):
            name, separator, cookie = pair.partition("=")
            if separator and name.strip():
                merged[name.strip()] = cookie.strip()
        return "; ".join(f"{name}={cookie}" for name, cookie in merged.items()) or None

    def clear(self) -> None:
        self.cookies.clear()
