"""Tests for lull_client against a tiny fake engine. Run:

    python3 -m unittest discover -s integrations/python -v
"""

import json
import logging
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import lull_client  # noqa: E402

TOKEN = "t0ken-" + "ab" * 16
# Slack on top of the client's timeout for thread start-up and a loaded machine.
SLACK = 0.5


class FakeEngine:
    """Loopback HTTP server speaking the three agent routes of Lull's API v1.

    ``mode`` picks the behaviour: ``ok``, ``hang`` (never answers), ``drip`` (sends the answer
    one byte at a time, slowly), ``500``, ``garbage`` (200 with non-JSON), ``wrong-json``
    (200 with JSON of the wrong shape), ``redirect``.
    """

    def __init__(self, token=TOKEN, mode="ok"):
        self.token = token
        self.mode = mode
        self.calls = []  # (path, headers dict, decoded body)
        self.release = threading.Event()
        self._stopped = False
        self._leases = set()
        self._next = 0
        engine = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                engine.handle(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.base_url = "http://127.0.0.1:%d" % self.port
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def stop(self):
        if self._stopped:
            return
        self._stopped = True
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

    def paths(self):
        return [c[0] for c in self.calls]

    # -------------------------------------------------------------- behaviour

    def handle(self, h):
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw
        self.calls.append((h.path, dict(h.headers), body))

        if self.mode == "hang":
            self.release.wait(10)
            return
        if self.mode == "drip":
            answer = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"lease_id":"drip"}'
            for byte in answer:
                if self.release.wait(0.05):
                    return
                try:
                    h.wfile.write(bytes([byte]))
                    h.wfile.flush()
                except OSError:
                    return
            return
        if self.mode == "500":
            return self.send(h, 500, {"error": {"code": "internal", "message": "boom"}})
        if self.mode == "garbage":
            return self.send_raw(h, 200, b"<html>not json</html>", "text/html")
        if self.mode == "wrong-json":
            return self.send(h, 200, ["lease_id", 7])
        if self.mode == "redirect":
            h.send_response(307)
            h.send_header("Location", self.base_url + "/elsewhere")
            h.send_header("Content-Length", "0")
            h.end_headers()
            return

        if h.headers.get("Origin") is not None:
            return self.send(h, 403, {"error": {"code": "origin_not_allowed", "message": "no"}})
        if h.headers.get("Authorization") != "Bearer " + self.token:
            return self.send(h, 401, {"error": {"code": "unauthorized", "message": "bad token"}})
        if h.path == "/v1/turns/start":
            if not isinstance(body, dict) or set(body) != {"session_key"}:
                return self.bad_request(h)
            self._next += 1
            lease = "lease-%d" % self._next
            self._leases.add(lease)
            return self.send(h, 200, {"lease_id": lease})
        if h.path == "/v1/turns/finish":
            if not isinstance(body, dict) or set(body) != {"lease_id"}:
                return self.bad_request(h)
            if body["lease_id"] not in self._leases:
                return self.send(h, 404, {"error": {"code": "not_found", "message": "no live turn"}})
            self._leases.discard(body["lease_id"])
            h.send_response(204)
            h.end_headers()
            return
        if h.path == "/v1/reviews":
            allowed = {"session_key", "messages", "focus", "snapshot_at", "runtime"}
            if not isinstance(body, dict) or not set(body) <= allowed or "messages" not in body:
                return self.bad_request(h)
            decision = "dispatched" if body.get("focus") else "deferred"
            return self.send(h, 202, {"review_id": "rev-%d" % len(self.calls), "decision": decision})
        return self.send(h, 404, {"error": {"code": "not_found", "message": h.path}})

    def bad_request(self, h):
        return self.send(h, 400, {"error": {"code": "bad_request", "message": "unexpected body"}})

    def send(self, h, status, value):
        return self.send_raw(h, status, json.dumps(value).encode(), "application/json")

    def send_raw(self, h, status, raw, content_type):
        h.send_response(status)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(raw)))
        h.end_headers()
        h.wfile.write(raw)


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def publish(data_dir, base_url, token=TOKEN, pid=4242):
    """Writes the engine's discovery files into ``data_dir`` as a running engine does."""
    with open(os.path.join(data_dir, "api.json"), "w") as f:
        json.dump({"base_url": base_url, "pid": pid}, f)
    with open(os.path.join(data_dir, "api-token"), "w") as f:
        f.write(token + "\n")


class Base(unittest.TestCase):
    timeout = 1.0

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="lull-client-test-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.engines = []

    def tearDown(self):
        for engine in self.engines:
            engine.stop()

    def engine(self, **kwargs):
        engine = FakeEngine(**kwargs)
        self.engines.append(engine)
        return engine

    def publish(self, base_url, token=TOKEN, pid=4242):
        publish(self.dir, base_url, token, pid)

    def client(self, timeout=None):
        return lull_client.LullClient(self.dir, timeout=timeout or self.timeout)

    def assertFast(self, started, timeout=None):
        elapsed = time.monotonic() - started
        self.assertLess(elapsed, (timeout or self.timeout) + SLACK, "took %.2fs" % elapsed)


class DiscoveryTests(Base):
    def test_finds_engine_from_api_json_and_token(self):
        engine = self.engine()
        self.publish(engine.base_url)
        lease = self.client().turn_started("session-1")
        self.assertEqual(lease, "lease-1")
        path, headers, body = engine.calls[0]
        self.assertEqual(path, "/v1/turns/start")
        self.assertEqual(headers["Authorization"], "Bearer " + TOKEN)
        self.assertEqual(headers["Content-Type"], "application/json")
        self.assertNotIn("Origin", headers)
        self.assertEqual(body, {"session_key": "session-1"})

    def test_trailing_slash_in_base_url(self):
        engine = self.engine()
        self.publish(engine.base_url + "/")
        self.assertIsNotNone(self.client().turn_started("s"))
        self.assertEqual(engine.paths(), ["/v1/turns/start"])

    def test_data_dir_resolution_order(self):
        home = os.path.expanduser("~")
        with mock.patch.dict(os.environ, {}, clear=True):
            os.environ["HOME"] = home
            self.assertEqual(
                lull_client.resolve_data_dir(), os.path.join(home, ".local", "share", "lull")
            )
            os.environ["XDG_DATA_HOME"] = "relative/ignored"
            self.assertEqual(
                lull_client.resolve_data_dir(), os.path.join(home, ".local", "share", "lull")
            )
            os.environ["XDG_DATA_HOME"] = "/xdg/data"
            self.assertEqual(lull_client.resolve_data_dir(), "/xdg/data/lull")
            os.environ["LULL_DATA_DIR"] = "/lull/data"
            self.assertEqual(lull_client.resolve_data_dir(), "/lull/data")
            self.assertEqual(lull_client.resolve_data_dir("/explicit"), "/explicit")

    def test_env_data_dir_is_used_when_no_argument(self):
        engine = self.engine()
        self.publish(engine.base_url)
        with mock.patch.dict(os.environ, {"LULL_DATA_DIR": self.dir}):
            self.assertEqual(lull_client.LullClient(timeout=1).turn_started("s"), "lease-1")

    def test_rediscovers_after_engine_moves_port(self):
        first = self.engine()
        self.publish(first.base_url)
        client = self.client()
        self.assertEqual(client.turn_started("s"), "lease-1")
        first.stop()
        second = self.engine()
        self.assertNotEqual(first.port, second.port)
        self.publish(second.base_url, pid=4343)
        started = time.monotonic()
        lease = client.turn_started("s")
        self.assertFast(started)
        self.assertEqual(lease, "lease-1")  # the second engine's first lease
        self.assertEqual(second.paths(), ["/v1/turns/start"])
        # It stays on the new engine: no further failed attempts.
        self.assertTrue(client.turn_finished(lease))
        self.assertEqual(second.paths(), ["/v1/turns/start", "/v1/turns/finish"])

    def test_rediscovers_a_new_token(self):
        engine = self.engine()
        self.publish(engine.base_url)
        client = self.client()
        self.assertIsNotNone(client.turn_started("s"))
        engine.token = "rotated-token"
        self.publish(engine.base_url, token="rotated-token")
        self.assertIsNotNone(client.turn_started("s"))
        statuses = [c[1]["Authorization"] for c in engine.calls]
        self.assertEqual(
            statuses, ["Bearer " + TOKEN, "Bearer " + TOKEN, "Bearer rotated-token"]
        )

    def test_engine_started_after_client(self):
        client = self.client()
        self.assertIsNone(client.turn_started("s"))
        engine = self.engine()
        self.publish(engine.base_url)
        self.assertEqual(client.turn_started("s"), "lease-1")


class CallTests(Base):
    def setUp(self):
        super().setUp()
        self.fake = self.engine()
        self.publish(self.fake.base_url)

    def test_turn_finished(self):
        client = self.client()
        lease = client.turn_started("s")
        self.assertTrue(client.turn_finished(lease))
        self.assertEqual(self.fake.calls[1][2], {"lease_id": lease})
        # A lapsed or unknown lease is a 404 from the engine: False, no exception.
        self.assertFalse(client.turn_finished(lease))
        self.assertFalse(client.turn_finished(None))
        self.assertEqual(len(self.fake.calls), 3)

    def test_submit_review_minimal(self):
        messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
        answer = self.client().submit_review("s", messages)
        self.assertEqual(answer["decision"], "deferred")
        self.assertTrue(answer["review_id"].startswith("rev-"))
        path, _, body = self.fake.calls[0]
        self.assertEqual(path, "/v1/reviews")
        self.assertEqual(body, {"session_key": "s", "messages": messages})

    def test_submit_review_all_fields_and_message_shapes(self):
        class Msg:
            def __init__(self, role, content):
                self.role, self.content = role, content

        messages = [
            {"role": "system", "content": "be brief", "name": "x"},
            {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url"}]},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]},
            Msg("tool", "42"),
            {
                "role": "assistant",
                "content": "checking",
                "tool_calls": [
                    {"function": {"name": "terminal", "arguments": '{"command": "ls"}'}},
                    {"function": {"name": "todo", "arguments": {"items": []}}},
                ],
            },
            {"role": "tool", "name": "terminal", "content": "a.txt"},
        ]
        runtime = {"base_url": "http://127.0.0.1:9/v1", "api_key": None, "model": "m", "extra": 1}
        answer = self.client().submit_review(
            "s", messages, focus="the retry logic", snapshot_at=1700000000123, runtime=runtime
        )
        self.assertEqual(answer["decision"], "dispatched")
        body = self.fake.calls[0][2]
        self.assertEqual(
            body["messages"],
            [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "look"},
                {"role": "assistant", "content": "[tool call] tool()"},
                {"role": "tool", "content": "[tool result] 42"},
                {
                    "role": "assistant",
                    "content": 'checking\n[tool call] terminal({"command": "ls"})\n'
                    '[tool call] todo({"items": []})',
                },
                {"role": "tool", "content": "[tool result terminal] a.txt"},
            ],
        )
        self.assertEqual(body["focus"], "the retry logic")
        self.assertEqual(body["snapshot_at"], 1700000000123)
        self.assertEqual(
            body["runtime"], {"base_url": "http://127.0.0.1:9/v1", "api_key": None, "model": "m"}
        )

    def test_submit_review_bounds_each_message_and_the_whole(self):
        big = "x" * (lull_client.MAX_MESSAGE_CHARS + 500)
        self.client().submit_review("s", [{"role": "user", "content": big}])
        (content,) = [m["content"] for m in self.fake.calls[0][2]["messages"]]
        self.assertTrue(content.startswith("x" * lull_client.MAX_MESSAGE_CHARS))
        self.assertTrue(content.endswith("[... 500 characters cut]"))

        # Far more than fits: the first request and the latest messages stay, the oldest go.
        messages = [{"role": "system", "content": "rules"}, {"role": "user", "content": "first ask"}]
        messages += [{"role": "assistant", "content": "%d %s" % (i, big)} for i in range(100)]
        self.client().submit_review("s", messages)
        sent = self.fake.calls[1][2]["messages"]
        self.assertLessEqual(len(json.dumps(sent)), lull_client.MAX_REVIEW_BYTES)
        self.assertEqual([m["content"] for m in sent[:2]], ["rules", "first ask"])
        self.assertTrue(sent[-1]["content"].startswith("99 "))
        self.assertGreater(len(sent), 10)
        self.assertLess(len(sent), 100)

    def test_submit_review_with_unencodable_input_is_soft(self):
        client = self.client()
        self.assertIsNone(client.submit_review("s", None))
        self.assertIsNone(client.submit_review("s", [], runtime={"model": "m"}))
        self.assertIsNone(client.submit_review("s", [], snapshot_at="yesterday"))
        self.assertEqual(self.fake.calls, [])

    def test_context_manager(self):
        client = self.client()
        with client.turn("s") as lease:
            self.assertEqual(lease, "lease-1")
            self.assertEqual(self.fake.paths(), ["/v1/turns/start"])
        self.assertEqual(self.fake.paths(), ["/v1/turns/start", "/v1/turns/finish"])
        self.assertEqual(self.fake.calls[1][2], {"lease_id": "lease-1"})

    def test_context_manager_finishes_and_reraises_on_error(self):
        client = self.client()
        with self.assertRaises(KeyError):
            with client.turn("s"):
                raise KeyError("the agent's own error")
        self.assertEqual(self.fake.paths(), ["/v1/turns/start", "/v1/turns/finish"])

    def test_module_level_functions(self):
        previous = lull_client._default
        self.addCleanup(setattr, lull_client, "_default", previous)
        lull_client.configure(self.dir, timeout=1)
        lease = lull_client.turn_started("s")
        self.assertEqual(lease, "lease-1")
        self.assertTrue(lull_client.turn_finished(lease))
        with lull_client.turn("s") as lease2:
            self.assertEqual(lease2, "lease-2")
        answer = lull_client.submit_review("s", [{"role": "user", "content": "x"}], focus="f")
        self.assertEqual(answer["decision"], "dispatched")
        self.assertEqual(
            self.fake.paths(),
            ["/v1/turns/start", "/v1/turns/finish", "/v1/turns/start", "/v1/turns/finish", "/v1/reviews"],
        )

    def test_default_client_uses_environment(self):
        previous = lull_client._default
        self.addCleanup(setattr, lull_client, "_default", previous)
        lull_client._default = None
        with mock.patch.dict(os.environ, {"LULL_DATA_DIR": self.dir}):
            self.assertEqual(lull_client.turn_started("s"), "lease-1")


class FailSoftTests(Base):
    timeout = 0.3

    def check_all_soft(self, client, expect_calls=None):
        """Every public call returns its 'no' value quickly and raises nothing."""
        started = time.monotonic()
        self.assertIsNone(client.turn_started("s"))
        self.assertFast(started)
        started = time.monotonic()
        self.assertFalse(client.turn_finished("lease-x"))
        self.assertFast(started)
        started = time.monotonic()
        self.assertIsNone(client.submit_review("s", [{"role": "user", "content": "x"}]))
        self.assertFast(started)
        started = time.monotonic()
        ran = []
        with client.turn("s") as lease:
            ran.append(lease)
        self.assertEqual(ran, [None])
        self.assertFast(started)

    def test_no_api_json(self):
        self.check_all_soft(self.client())

    def test_no_data_dir_at_all(self):
        client = lull_client.LullClient(os.path.join(self.dir, "missing"), timeout=self.timeout)
        self.check_all_soft(client)

    def test_no_token_file(self):
        engine = self.engine()
        self.publish(engine.base_url)
        os.remove(os.path.join(self.dir, "api-token"))
        self.check_all_soft(self.client())
        self.assertEqual(engine.calls, [])

    def test_malformed_api_json(self):
        for content in ("{not json", "[]", '{"base_url": 7}', '{"base_url": "ftp://x"}', ""):
            with open(os.path.join(self.dir, "api.json"), "w") as f:
                f.write(content)
            with open(os.path.join(self.dir, "api-token"), "w") as f:
                f.write(TOKEN)
            self.check_all_soft(self.client())

    def test_port_closed(self):
        self.publish("http://127.0.0.1:%d" % closed_port())
        self.check_all_soft(self.client())

    def test_engine_hangs(self):
        engine = self.engine(mode="hang")
        self.publish(engine.base_url)
        self.check_all_soft(self.client())
        self.assertGreaterEqual(len(engine.calls), 3)

    def test_engine_drips_bytes(self):
        # Each byte arrives well within the socket timeout; only the overall deadline stops it.
        engine = self.engine(mode="drip")
        self.publish(engine.base_url)
        started = time.monotonic()
        self.assertIsNone(self.client().turn_started("s"))
        self.assertFast(started)

    def test_engine_answers_500(self):
        engine = self.engine(mode="500")
        self.publish(engine.base_url)
        self.check_all_soft(self.client())
        self.assertEqual(len(engine.calls), 4)  # no retry when the files did not change

    def test_engine_answers_garbage(self):
        engine = self.engine(mode="garbage")
        self.publish(engine.base_url)
        client = self.client()
        self.assertIsNone(client.turn_started("s"))
        self.assertIsNone(client.submit_review("s", []))
        # turn_finished expects no body, so any 2xx counts as taken.
        self.assertTrue(client.turn_finished("lease-x"))

    def test_engine_answers_json_of_the_wrong_shape(self):
        engine = self.engine(mode="wrong-json")
        self.publish(engine.base_url)
        client = self.client()
        self.assertIsNone(client.turn_started("s"))
        self.assertIsNone(client.submit_review("s", []))

    def test_wrong_token_is_soft(self):
        engine = self.engine(token="something-else")
        self.publish(engine.base_url)
        self.check_all_soft(self.client())

    def test_redirect_is_not_followed(self):
        engine = self.engine(mode="redirect")
        self.publish(engine.base_url)
        self.assertIsNone(self.client().turn_started("s"))
        self.assertEqual(engine.paths(), ["/v1/turns/start"])

    def test_http_proxy_in_environment_is_ignored(self):
        engine = self.engine()
        self.publish(engine.base_url)
        proxy = "http://127.0.0.1:%d" % closed_port()
        with mock.patch.dict(os.environ, {"HTTP_PROXY": proxy, "http_proxy": proxy}):
            self.assertEqual(self.client().turn_started("s"), "lease-1")

    def test_failures_log_at_debug_only(self):
        engine = self.engine(mode="500")
        self.publish(engine.base_url)
        with self.assertLogs("lull_client", level="DEBUG") as logs:
            self.client().turn_started("s")
        self.assertTrue(all(r.levelno == logging.DEBUG for r in logs.records))
        self.assertTrue(any("internal: boom" in r.getMessage() for r in logs.records))


if __name__ == "__main__":
    unittest.main()
