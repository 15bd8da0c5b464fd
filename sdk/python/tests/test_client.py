"""Tests of the client against a real sidecar process.

With RATEGUARD_URL set (and RATEGUARD_ADMIN_TOKEN, if the sidecar has one),
they use that sidecar; without, they start one from the repository's
checkout with its Deno, and stop it at the end.
"""

import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rateguard_client import Client, ClientError, SidecarUnavailable  # noqa: E402

URL = os.environ.get("RATEGUARD_URL")
TOKEN = os.environ.get("RATEGUARD_ADMIN_TOKEN")
_sidecar = None


def setUpModule():
    global URL, TOKEN, _sidecar
    if URL:
        return
    root = Path(__file__).resolve().parents[3]
    token_file = Path(tempfile.mkdtemp()) / "token"
    TOKEN = uuid.uuid4().hex
    token_file.write_text(TOKEN + "\n")
    _sidecar = subprocess.Popen(
        [str(root / "node_modules/.bin/deno"), "run", "-A", "cli.ts", "--limit", "100",
         "--http", "127.0.0.1:0", "--log-format", "json", "--admin-token-file", str(token_file)],
        cwd=root, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = _sidecar.stderr.readline()
        if '"msg":"listening"' in line:
            URL = json.loads(line)["http"]
            return
        if not line and _sidecar.poll() is not None:
            break
    _sidecar.kill()
    raise RuntimeError("the sidecar did not start")


def tearDownModule():
    if _sidecar is not None:
        _sidecar.kill()
        _sidecar.wait()
        _sidecar.stderr.close()


def unique(prefix: str) -> str:
    """A key or class no other test (or earlier run) uses."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


class CheckTest(unittest.TestCase):
    def setUp(self):
        self.admin = Client(URL, admin_token=TOKEN)
        self.client = Client(URL, timeout=2.0)
        self.cls = unique("py")
        self.admin.set_class(self.cls, ("2/h", 2))

    def tearDown(self):
        self.admin.remove_class(self.cls)
        self.admin.close()
        self.client.close()

    def test_check_admits_up_to_the_burst_then_denies(self):
        key = unique("tenant")
        decisions = [self.client.check(key, cls=self.cls) for _ in range(3)]
        self.assertEqual([d.allowed for d in decisions], [True, True, False])
        self.assertEqual(decisions[0].remaining, 1)
        self.assertGreater(decisions[2].retry_after_ms, 0)
        self.assertIsNone(decisions[2].failure)
        self.assertFalse(decisions[2])

    def test_a_cost_above_the_burst_is_never_admitted(self):
        d = self.client.check(unique("k"), cls=self.cls, cost=3)
        self.assertFalse(d.allowed)
        self.assertEqual(d.retry_after_ms, math.inf)

    def test_check_all_is_all_or_nothing_and_peek_consumes_nothing(self):
        a, b = unique("a"), unique("b")
        items = [{"key": a, "class": self.cls}, {"key": b, "class": self.cls, "cost": 2}]
        self.assertTrue(self.client.check_all(items).allowed)
        denied = self.client.check_all(items)
        self.assertFalse(denied.allowed)
        self.assertEqual([d.allowed for d in denied.decisions], [True, False])
        for _ in range(2):
            self.assertTrue(self.client.peek(a, cls=self.cls).allowed)
        self.assertFalse(self.client.peek(b, cls=self.cls).allowed)

    def test_bad_input_raises_client_error_naming_the_field(self):
        with self.assertRaises(ClientError) as caught:
            self.client.check(unique("k"), cost=0)
        self.assertEqual(caught.exception.status, 400)
        self.assertEqual(caught.exception.problem["field"], "/cost")
        with self.assertRaises(ValueError):
            self.client.check("")

    def test_refund_reset_and_block_take_a_token(self):
        if TOKEN is None:
            self.skipTest("a sidecar with no token takes the operations from anyone")
        # The sidecar has an admin token and no ops token: the operations need the admin token.
        for client in (self.client, Client(URL, timeout=2.0, ops_token="wrong")):
            with self.assertRaises(ClientError) as caught:
                client.block(unique("k"), 60_000)
            self.assertEqual(caught.exception.status, 401)
        # The ops token, when given, is what the operations send.
        self.assertTrue(Client(URL, timeout=2.0, ops_token=TOKEN).block(unique("k"), 1_000))
        with self.assertRaises(ClientError) as caught:
            Client(URL, timeout=2.0, admin_token=TOKEN, ops_token="wrong").reset(unique("k"))
        self.assertEqual(caught.exception.status, 401)

    def test_refund_reset_and_block(self):
        key = unique("tenant")
        self.assertTrue(self.client.check(key, cls=self.cls).allowed)
        self.assertTrue(self.client.check(key, cls=self.cls).allowed)
        self.assertFalse(self.client.check(key, cls=self.cls).allowed)
        ops = Client(URL, timeout=2.0, admin_token=TOKEN)
        self.assertTrue(ops.refund(key, cls=self.cls))
        self.assertTrue(self.client.check(key, cls=self.cls).allowed)
        self.assertTrue(ops.reset(key, cls=self.cls))
        self.assertFalse(ops.reset(unique("never-seen"), cls=self.cls))
        self.assertTrue(ops.block(key, 60_000, cls=self.cls))
        denied = self.client.check(key, cls=self.cls)
        self.assertFalse(denied.allowed)
        self.assertGreaterEqual(denied.retry_after_ms, 60_000)
        self.assertTrue(ops.reset(key, cls=self.cls))
        self.assertTrue(self.client.check(key, cls=self.cls).allowed)
        with self.assertRaises(ValueError):
            ops.block(key, 0)
        with self.assertRaises(ClientError) as caught:
            ops.refund(key, cost=0)
        self.assertEqual(caught.exception.problem["field"], "/cost")

    def test_acquire_waits_within_max_wait_ms(self):
        fast = unique("fast")
        self.admin.set_class(fast, ("1000/s", 1))
        try:
            key = unique("job")
            self.client.check(key, cls=fast)
            self.assertTrue(self.client.acquire(key, cls=fast, max_wait_ms=5_000).allowed)
        finally:
            self.admin.remove_class(fast)
        key = unique("job")
        self.client.check(key, cls=self.cls)
        self.client.check(key, cls=self.cls)
        denied = self.client.acquire(key, cls=self.cls, max_wait_ms=1_000)
        self.assertFalse(denied.allowed, "half an hour does not fit in a second")
        with self.assertRaises(ValueError):
            self.client.acquire(key, max_wait_ms=-1)

    def test_keeps_its_connection_alive(self):
        self.client.check(unique("k"))
        first = self.client._local.held.conn.sock
        self.client.check(unique("k"))
        self.assertIs(self.client._local.held.conn.sock, first)


class InstallTest(unittest.TestCase):
    def test_the_readme_pip_line_names_this_project(self):
        import re

        here = Path(__file__).resolve().parents[1]
        line = re.search(r"^pip install (\S+)$", (here / "README.md").read_text(), re.M)
        self.assertIsNotNone(line, "README.md has a pip install line")
        folder = here.parents[1] / line.group(1)  # run at the checkout's root
        self.assertEqual(folder.resolve(), here)
        project = (folder / "pyproject.toml").read_text()
        self.assertIn('name = "rateguard-client"', project)
        self.assertIn('packages = ["rateguard_client"]', project)


class IdleTest(unittest.TestCase):
    """A connection is dropped before the sidecar's idle timeout would close it."""

    def setUp(self):
        import http.server
        import threading

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = b'{"allowed":true,"remaining":1,"retryAfterMs":0,"resetMs":1}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Keep-Alive", "timeout=0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.client = Client(f"http://127.0.0.1:{self.server.server_port}", timeout=2.0)

    def tearDown(self):
        self.client.close()
        self.server.shutdown()
        self.server.server_close()

    def test_drops_an_idle_connection_before_the_sidecars_idle_timeout(self):
        self.client.check("k")
        first = self.client._local.held.conn.sock
        self.client.check("k")
        self.assertIs(self.client._local.held.conn.sock, first, "reused while fresh")
        time.sleep(0.25)  # past the allowance (0.4 s less half), short of the timeout
        self.client.check("k")
        self.assertIsNot(self.client._local.held.conn.sock, first)

    def test_close_closes_every_threads_connection(self):
        import gc
        import threading
        import warnings

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ResourceWarning)
            client = Client(f"http://127.0.0.1:{self.server.server_port}", timeout=2.0)
            sockets = []

            def check():
                client.check("k")
                sockets.append(client._local.held.conn.sock)

            worker = threading.Thread(target=check)
            worker.start()
            worker.join()
            check()
            client.close()
            self.assertEqual([s.fileno() for s in sockets], [-1, -1], "both threads' closed")
            self.assertTrue(client.check("k").allowed, "a call after close opens a new one")
            with client:
                pass
            del client, worker, sockets
            gc.collect()
        leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
        self.assertEqual(leaks, [])

    def test_a_with_block_closes_its_connections(self):
        with Client(f"http://127.0.0.1:{self.server.server_port}", timeout=2.0) as client:
            client.check("k")
            sock = client._local.held.conn.sock
        self.assertEqual(sock.fileno(), -1)


class AdminTest(unittest.TestCase):
    def setUp(self):
        self.admin = Client(URL, admin_token=TOKEN)

    def tearDown(self):
        self.admin.close()

    def test_classes_key_limits_and_shadows(self):
        cls = unique("tariff")
        self.admin.set_class(cls, "10/s")
        self.assertIn({"class": cls, "limit": "10/s", "burst": 1}, self.admin.classes())
        key = unique("tenant")
        self.admin.set_key_limit(key, ("5/min", 3), cls)
        self.admin.set_key_limit(key, follows=cls)
        mine = [e for e in self.admin.key_limits() if e["key"] == key]
        self.assertIn({"class": cls, "key": key, "limit": "5/min", "burst": 3}, mine)
        self.assertIn({"class": "", "key": key, "follows": cls}, mine)
        self.assertTrue(self.admin.remove_key_limit(key, cls))
        self.assertTrue(self.admin.remove_key_limit(key))
        self.assertFalse(self.admin.remove_key_limit(key, cls))
        self.admin.set_shadow(cls, "1/s")
        self.assertIn({"class": cls, "limit": "1/s", "burst": 1}, self.admin.shadows())
        self.admin.set_shadow(cls, None)
        with self.assertRaises(ClientError) as caught:
            self.admin.set_shadow(unique("nope"), "1/s")
        self.assertEqual(caught.exception.problem.get("code"), "UnknownClass")
        self.assertTrue(self.admin.remove_class(cls))
        self.assertFalse(self.admin.remove_class(cls))

    def test_dry_run_and_stats(self):
        before = self.admin.dry_run()
        try:
            self.admin.set_dry_run(True)
            self.assertTrue(self.admin.dry_run())
            self.assertTrue(self.admin.stats()["dryRun"])
        finally:
            self.admin.set_dry_run(before)
        self.assertTrue(self.admin.ready())

    def test_admin_calls_need_the_token(self):
        if not TOKEN:
            self.skipTest("the sidecar has no admin token")
        with self.assertRaises(ClientError) as caught:
            Client(URL).classes()
        self.assertEqual(caught.exception.status, 401)
        with self.assertRaises(ClientError):
            Client(URL, admin_token="wrong").set_dry_run(True)


class FailureTest(unittest.TestCase):
    def setUp(self):
        # A port that listens but never answers: connect succeeds, the
        # request times out. And one that refuses: nothing listens there.
        self.silent = socket.socket()
        self.silent.bind(("127.0.0.1", 0))
        self.silent.listen(8)
        closed = socket.socket()
        closed.bind(("127.0.0.1", 0))
        self.refusing = f"http://127.0.0.1:{closed.getsockname()[1]}"
        closed.close()

    def tearDown(self):
        self.silent.close()

    def test_open_closed_and_raise(self):
        silent = f"http://127.0.0.1:{self.silent.getsockname()[1]}"
        for url in (silent, self.refusing):
            opened = Client(url, timeout=0.05).check("k")
            self.assertTrue(opened.allowed)
            self.assertIsInstance(opened.failure, SidecarUnavailable)
            closed = Client(url, timeout=0.05, on_failure="closed").check("k")
            self.assertFalse(closed.allowed)
            self.assertEqual(closed.retry_after_ms, 1000.0)
            with self.assertRaises(SidecarUnavailable):
                Client(url, timeout=0.05, on_failure="raise").peek("k")
            batch = Client(url, timeout=0.05, on_failure="closed").check_all([{"key": "a"}])
            self.assertEqual([d.allowed for d in batch.decisions], [False])
        self.assertFalse(Client(self.refusing, admin_timeout=0.2).ready())

    def test_bad_options_are_refused(self):
        with self.assertRaises(ValueError):
            Client("127.0.0.1:7947")
        with self.assertRaises(ValueError):
            Client(on_failure="maybe")
        with self.assertRaises(ValueError):
            Client(timeout=0)


if __name__ == "__main__":
    unittest.main()
