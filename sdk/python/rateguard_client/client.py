"""The client: checks with a short timeout and a failure policy, admin calls
with a longer one, over kept-alive HTTP/1.1 connections (one per thread)."""

from __future__ import annotations

import http.client
import json
import math
import re
import socket
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Literal, Mapping, Optional, Tuple, Union
from urllib.parse import urlencode, urlsplit

FailurePolicy = Literal["open", "closed", "raise"]


@dataclass(frozen=True)
class Decision:
    """What the sidecar decided for one check."""

    allowed: bool
    """Whether the request is admitted."""
    remaining: int
    """Requests of cost 1 admitted back to back now."""
    retry_after_ms: float
    """Milliseconds before a retry may be admitted; math.inf if never."""
    reset_ms: float
    """Milliseconds until the full burst is back."""
    failure: Optional[Exception] = None
    """Set when the sidecar could not be asked: the decision is the failure policy's."""

    def __bool__(self) -> bool:
        return self.allowed


@dataclass(frozen=True)
class BatchDecision(Decision):
    """A batch's decision, and one per item in order: all admitted, or nothing consumed."""

    decisions: Tuple[Decision, ...] = field(default_factory=tuple)


class ClientError(Exception):
    """The sidecar refused the request (4xx); `problem` is its problem details."""

    def __init__(self, status: int, problem: Mapping[str, Any]):
        super().__init__(f"rateguard sidecar: {status} {problem.get('detail', '')}")
        self.status = status
        self.problem = dict(problem)


class SidecarUnavailable(Exception):
    """The sidecar could not be asked: refused, timed out, or answered 5xx."""


# Errors after which a reused keep-alive connection is known to have been
# closed by the server before it read the request: resending cannot count a
# check twice.
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)

def _idle_allowance(res: http.client.HTTPResponse) -> float:
    """How long the connection may sit idle: a margin inside the `timeout=`
    of the sidecar's Keep-Alive header (a second, or half of a shorter one),
    for ever when it names none."""
    match = re.search(r"timeout=(\d+(?:\.\d+)?)", res.getheader("Keep-Alive") or "")
    if match is None:
        return math.inf
    timeout = float(match.group(1))
    return timeout - min(1.0, timeout / 2)


class _Held:
    """One thread's connection. Closed by the client's close(), or when its
    thread ends and takes the thread's storage with it: never left open for
    the collector to find."""

    __slots__ = ("conn", "idle_until", "__weakref__")

    def __init__(self, conn: http.client.HTTPConnection):
        self.conn: Optional[http.client.HTTPConnection] = conn
        self.idle_until = math.inf

    def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()

    def __del__(self) -> None:
        self.close()


LimitSpec = Union[str, Tuple[str, int]]
"""A limit: its text, such as "10/s", "1000/min" or "100/15min", or (text, burst)."""


class Client:
    """A client of the sidecar at `url` (default http://127.0.0.1:7947).

    `timeout` bounds a check (seconds, default 0.05: the sidecar is on
    loopback); `admin_timeout` an admin call. `on_failure` decides what a
    check answers when the sidecar cannot: "open" admits, "closed" denies,
    "raise" raises SidecarUnavailable. `admin_token` goes on the admin
    calls (a sidecar with --admin-token-file); `ops_token` on refund, reset
    and block (--ops-token-file), which without it take the admin token.

    Each thread keeps one connection open; `close()` (or leaving a `with
    Client(...) as client:` block) closes every one of them.
    """

    def __init__(
        self,
        url: str = "http://127.0.0.1:7947",
        *,
        timeout: float = 0.05,
        admin_timeout: float = 5.0,
        on_failure: FailurePolicy = "open",
        admin_token: Optional[str] = None,
        ops_token: Optional[str] = None,
    ):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"url must be http(s)://host:port, got {url!r}")
        if on_failure not in ("open", "closed", "raise"):
            raise ValueError(f'on_failure must be "open", "closed" or "raise", got {on_failure!r}')
        for name, value in (("timeout", timeout), ("admin_timeout", admin_timeout)):
            if not (isinstance(value, (int, float)) and 0 < value < math.inf):
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._timeout = float(timeout)
        self._admin_timeout = float(admin_timeout)
        self._on_failure = on_failure
        self._auth = _bearer(admin_token)
        # Without an ops token, refund, reset and block go with the admin token:
        # an operator's client makes the operator's blocks.
        self._ops_auth = _bearer(admin_token if ops_token is None else ops_token)
        self._local = threading.local()
        self._held: "weakref.WeakSet[_Held]" = weakref.WeakSet()
        self._held_lock = threading.Lock()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    # The request path ---------------------------------------------------

    def check(self, key: str, cls: str = "", cost: int = 1) -> Decision:
        """Checks a request for `key` in class `cls`, consuming it if admitted."""
        body = {"key": _key(key), "class": cls, "cost": cost}
        try:
            return _decision(self._call("POST", "/v1/check", body))
        except SidecarUnavailable as e:
            return self._failed(e)

    def check_all(self, items: Iterable[Mapping[str, Any]]) -> BatchDecision:
        """Checks several {"key", "class"?, "cost"?} at once, all or nothing."""
        checks = [
            {"key": _key(i["key"]), "class": i.get("class", ""), "cost": i.get("cost", 1)}
            for i in items
        ]
        try:
            wire = self._call("POST", "/v1/check-all", {"items": checks})
        except SidecarUnavailable as e:
            failed = self._failed(e)
            return BatchDecision(**vars(failed), decisions=tuple(failed for _ in checks))
        first = _decision(wire)
        return BatchDecision(**vars(first), decisions=tuple(_decision(d) for d in wire["decisions"]))

    def peek(self, key: str, cls: str = "") -> Decision:
        """What the next check of `key` would say; consumes nothing."""
        query = urlencode({"class": cls, "key": _key(key)})
        try:
            return _decision(self._call("GET", f"/v1/peek?{query}"))
        except SidecarUnavailable as e:
            return self._failed(e)

    def acquire(self, key: str, cls: str = "", cost: int = 1, max_wait_ms: float = 10_000) -> Decision:
        """Waits until a check of `key` is admitted, then takes it.

        Each denial's retry_after_ms is slept, at most `max_wait_ms` in all: a
        wait that cannot fit is answered at once with its denial, as is a
        decision the failure policy made.
        """
        if isinstance(max_wait_ms, bool) or not isinstance(max_wait_ms, (int, float)) \
                or not 0 <= max_wait_ms <= 2_147_483_647:
            raise ValueError(f"max_wait_ms must be from 0 to 2147483647, got {max_wait_ms!r}")
        deadline = time.monotonic() + max_wait_ms / 1000
        decision = self.check(key, cls=cls, cost=cost)
        while not decision.allowed and decision.failure is None:
            if decision.retry_after_ms > (deadline - time.monotonic()) * 1000:
                return decision
            time.sleep(decision.retry_after_ms / 1000)
            decision = self.check(key, cls=cls, cost=cost)
        return decision

    def refund(self, key: str, cls: str = "", cost: int = 1) -> bool:
        """Gives back what a check of `key` took, never more than it still owes.

        True if the key's state changed on the sidecar. No failure policy
        applies, as nothing is decided: raises SidecarUnavailable.
        """
        body = {"key": _key(key), "class": cls, "cost": cost}
        return self._call("POST", "/v1/refund", body, ops=True)["refunded"]

    def reset(self, key: str, cls: str = "") -> bool:
        """Forgets what `key` owes on the sidecar, a block included.

        True if the sidecar had state for the key. The operator's block (made
        with the admin token) is lifted only by a client sending the admin
        token: else a ClientError 409 with code OperatorBlock.
        """
        body = {"key": _key(key), "class": cls}
        return self._call("POST", "/v1/reset", body, ops=True)["reset"]

    def block(self, key: str, ms: float, cls: str = "") -> bool:
        """Denies every check of `key` on the sidecar for `ms` milliseconds.

        True from a current sidecar, whose blocks live in a set of their own
        (--max-blocks); False only from an older one whose key table had no
        place for the key.
        """
        if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not 0 < ms < math.inf:
            raise ValueError(f"ms must be a positive number of milliseconds, got {ms!r}")
        body = {"key": _key(key), "class": cls, "ms": ms}
        return self._call("POST", "/v1/block", body, ops=True)["blocked"]

    def ready(self) -> bool:
        """Whether the sidecar runs and has joined its fleet (or is standalone)."""
        try:
            self._call("GET", "/readyz", admin=True, raw=True)
            return True
        except (SidecarUnavailable, ClientError):
            return False

    # Admin ----------------------------------------------------------------

    def stats(self) -> Dict[str, Any]:
        """What the sidecar decided so far, and how it sees the fleet."""
        return self._call("GET", "/v1/stats", admin=True)

    def classes(self) -> List[Dict[str, Any]]:
        """Every class with its limit, the default class ("") first."""
        return self._call("GET", "/v1/classes", admin=True)["classes"]

    def set_class(self, name: str, limit: LimitSpec) -> None:
        """Adds or changes a class; "" is the default class."""
        self._call("PUT", f"/v1/classes?{urlencode({'class': name})}", _limit(limit), admin=True)

    def remove_class(self, name: str) -> bool:
        """Removes a class; False if there was none of that name."""
        return self._remove(f"/v1/classes?{urlencode({'class': name})}")

    def key_limits(self) -> List[Dict[str, Any]]:
        """Every key limit: {"class", "key", "limit", "burst"} or {"class", "key", "follows"}."""
        return self._call("GET", "/v1/key-limits", admin=True)["keyLimits"]

    def set_key_limit(
        self,
        key: str,
        limit: Optional[LimitSpec] = None,
        cls: str = "",
        *,
        follows: Optional[str] = None,
    ) -> None:
        """Gives a key of class `cls` its own limit, or that of the class `follows`."""
        if (limit is None) == (follows is None):
            raise ValueError("give a limit or follows=, one of the two")
        body = {"follows": follows} if follows is not None else _limit(limit)  # type: ignore[arg-type]
        query = urlencode({"class": cls, "key": _key(key)})
        self._call("PUT", f"/v1/key-limits?{query}", body, admin=True)

    def remove_key_limit(self, key: str, cls: str = "") -> bool:
        """Removes the own limit of a key of class `cls`; False if it had none."""
        return self._remove(f"/v1/key-limits?{urlencode({'class': cls, 'key': key})}")

    def shadows(self) -> List[Dict[str, Any]]:
        """Every shadow limit."""
        return self._call("GET", "/v1/shadows", admin=True)["shadows"]

    def set_shadow(self, cls: str, limit: Optional[LimitSpec]) -> None:
        """Gives a class a shadow limit, or removes it with None."""
        path = f"/v1/shadows?{urlencode({'class': cls})}"
        if limit is None:
            self._remove(path)
        else:
            self._call("PUT", path, _limit(limit), admin=True)

    def dry_run(self) -> bool:
        """Whether the sidecar admits everything, counting would-be denials."""
        return self._call("GET", "/v1/dry-run", admin=True)["dryRun"]

    def set_dry_run(self, on: bool) -> None:
        """Turns the dry run on or off."""
        self._call("PUT", "/v1/dry-run", {"dryRun": bool(on)}, admin=True)

    def close(self) -> None:
        """Closes the client's connections, every thread's; a later call opens a new one.

        Call it once no call is under way (a call in flight on another
        thread would fail as SidecarUnavailable).
        """
        with self._held_lock:
            held = list(self._held)
            self._held.clear()
        for h in held:
            h.close()

    # Plumbing ---------------------------------------------------------------

    def _remove(self, path: str) -> bool:
        try:
            self._call("DELETE", path, admin=True)
            return True
        except ClientError as e:
            if e.status == 404:
                return False
            raise

    def _failed(self, error: SidecarUnavailable) -> Decision:
        if self._on_failure == "raise":
            raise error
        if self._on_failure == "open":
            return Decision(True, 0, 0.0, 0.0, failure=error)
        return Decision(False, 0, 1000.0, 1000.0, failure=error)

    def _connection(self) -> Tuple[_Held, http.client.HTTPConnection, bool]:
        """This thread's connection, and whether it was used before."""
        held: Optional[_Held] = getattr(self._local, "held", None)
        if held is not None and held.conn is not None:
            # Dropped before the sidecar's idle timeout ends it, so that no
            # request goes out on a connection the sidecar is closing.
            if time.monotonic() < held.idle_until:
                return held, held.conn, True
            held.close()
        kind = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
        conn = kind(self._host, self._port, timeout=self._timeout)
        held = _Held(conn)
        self._local.held = held
        with self._held_lock:
            self._held.add(held)
        return held, conn, False

    def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        admin: bool = False,
        ops: bool = False,
        raw: bool = False,
    ) -> Any:
        payload = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if payload is not None else {}
        if admin:
            headers.update(self._auth)
        elif ops:
            headers.update(self._ops_auth)
        timeout = self._admin_timeout if admin else self._timeout
        for attempt in (0, 1):
            held, conn, reused = self._connection()
            try:
                conn.timeout = timeout
                if conn.sock is not None:
                    conn.sock.settimeout(timeout)
                conn.request(method, path, body=payload, headers=headers)
                res = conn.getresponse()
                data = res.read()
                held.idle_until = time.monotonic() + _idle_allowance(res)
                break
            except _STALE as e:
                held.close()
                if reused and attempt == 0:
                    continue
                raise SidecarUnavailable(f"rateguard sidecar: {e!r}") from e
            except (OSError, socket.timeout, http.client.HTTPException) as e:
                held.close()
                raise SidecarUnavailable(f"rateguard sidecar: {e!r}") from e
        if res.status >= 500:
            raise SidecarUnavailable(f"rateguard sidecar: {res.status} {data[:200]!r}")
        if raw and res.status < 400:
            return data
        try:
            parsed = json.loads(data) if data else {}
        except ValueError:
            parsed = {"detail": data[:200].decode(errors="replace")}
        if res.status >= 400:
            raise ClientError(res.status, parsed)
        return parsed


def _bearer(token: Optional[str]) -> Dict[str, str]:
    return {} if token is None else {"Authorization": f"Bearer {token}"}


def _decision(w: Mapping[str, Any]) -> Decision:
    retry = w["retryAfterMs"]
    return Decision(
        allowed=bool(w["allowed"]),
        remaining=int(w["remaining"]),
        retry_after_ms=math.inf if retry is None else float(retry),
        reset_ms=float(w["resetMs"]),
    )


def _limit(limit: LimitSpec) -> Dict[str, Any]:
    if isinstance(limit, str):
        return {"limit": limit}
    text, burst = limit
    return {"limit": text, "burst": burst}


def _key(key: str) -> str:
    if not isinstance(key, str) or key == "":
        raise ValueError(f"a key must be a non-empty string, got {key!r}")
    return key
