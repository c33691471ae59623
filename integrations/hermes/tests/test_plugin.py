"""Tests for the Lull plugin of Hermes Agent, against the fake engine of lull_client's tests.

    python3 -m unittest discover -s integrations/hermes/tests -t integrations/hermes -v

The real Hermes Agent drives this plugin in tests/hermes_agent.rs.
"""

import importlib.util
import logging
import os
import shutil
import sys
import tempfile
import time
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(os.path.dirname(HERE), "lull_hermes")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))

import lull_hermes  # noqa: E402
from lull_hermes import lull_client  # noqa: E402
from test_lull_client import SLACK, FakeEngine, publish  # noqa: E402


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class Base(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="lull-hermes-test-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.clock = FakeClock()
        self.engine = None

    def tearDown(self):
        if self.engine is not None:
            self.engine.stop()

    def start_engine(self, mode="ok"):
        self.engine = FakeEngine(mode=mode)
        publish(self.dir, self.engine.base_url)
        return self.engine

    def bridge(self):
        return lull_hermes.LullBridge(
            turns=lull_client.LullClient(self.dir, timeout=lull_hermes.TURN_TIMEOUT_S),
            reviews=lull_client.LullClient(self.dir, timeout=lull_hermes.REVIEW_TIMEOUT_S),
            clock=self.clock,
        )

    def calls(self, path):
        return [body for p, _, body in self.engine.calls if p == path]


def exchange(final="Use `tar -czf out.tgz dir`."):
    """What Hermes passes to post_llm_call: the turn's messages, tool calls included."""
    return [
        {"role": "user", "content": "How do I pack a folder?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"function": {"name": "terminal", "arguments": '{"command": "man tar"}'}}],
        },
        {"role": "tool", "name": "terminal", "content": "tar - an archiving utility"},
        {"role": "assistant", "content": final},
    ]


class TurnTests(Base):
    def test_each_api_request_holds_a_lease_for_its_session(self):
        self.start_engine()
        bridge = self.bridge()
        bridge.pre_api_request(session_id="s1", api_request_id="r1", api_call_count=1)
        self.assertEqual(self.calls("/v1/turns/start"), [{"session_key": "hermes:s1"}])
        self.assertEqual(self.calls("/v1/turns/finish"), [])
        bridge.post_api_request(session_id="s1", api_request_id="r1", assistant_message=None)
        self.assertEqual(self.calls("/v1/turns/finish"), [{"lease_id": "lease-1"}])
        # Finishing again (a duplicate hook) sends nothing more.
        bridge.post_api_request(session_id="s1", api_request_id="r1")
        self.assertEqual(len(self.calls("/v1/turns/finish")), 1)

    def test_a_failed_request_gives_its_lease_back_and_a_retry_takes_a_new_one(self):
        self.start_engine()
        bridge = self.bridge()
        bridge.pre_api_request(session_id="s1", api_request_id="r1")
        bridge.api_request_error(session_id="s1", api_request_id="r1", status_code=500, retry_count=0)
        bridge.pre_api_request(session_id="s1", api_request_id="r2")
        bridge.post_api_request(session_id="s1", api_request_id="r2")
        self.assertEqual(
            self.calls("/v1/turns/finish"), [{"lease_id": "lease-1"}, {"lease_id": "lease-2"}]
        )

    def test_the_same_request_id_again_keeps_one_lease(self):
        self.start_engine()
        bridge = self.bridge()
        bridge.pre_api_request(session_id="s1", api_request_id="r1")
        bridge.pre_api_request(session_id="s1", api_request_id="r1")
        self.assertEqual(self.calls("/v1/turns/finish"), [{"lease_id": "lease-1"}])
        bridge.post_api_request(api_request_id="r1")
        self.assertEqual(
            self.calls("/v1/turns/finish"), [{"lease_id": "lease-1"}, {"lease_id": "lease-2"}]
        )

    def test_a_request_hermes_continues_without_post_api_request_is_over_when_the_next_starts(self):
        # finish_reason "length": Hermes appends a continuation prompt and calls again at once.
        self.start_engine()
        bridge = self.bridge()
        bridge.pre_api_request(session_id="s1", api_request_id="t1:api:1")
        bridge.pre_api_request(session_id="s2", api_request_id="t9:api:1")
        bridge.pre_api_request(session_id="s1", api_request_id="t1:api:2")
        self.assertEqual(self.calls("/v1/turns/finish"), [{"lease_id": "lease-1"}])
        bridge.post_api_request(session_id="s1", api_request_id="t1:api:2")
        self.assertEqual(
            self.calls("/v1/turns/finish"), [{"lease_id": "lease-1"}, {"lease_id": "lease-3"}],
            "another session's lease is not touched",
        )

    def test_session_end_and_finalize_give_back_leases_a_crash_left_open(self):
        self.start_engine()
        bridge = self.bridge()
        bridge.pre_api_request(session_id="s1", api_request_id="r1")
        bridge.pre_api_request(session_id="s2", api_request_id="r2")
        bridge.on_session_end(session_id="s1", completed=False, interrupted=True)
        self.assertEqual(self.calls("/v1/turns/finish"), [{"lease_id": "lease-1"}])
        bridge.on_session_finalize(session_id="s2", platform="cli")
        self.assertEqual(
            self.calls("/v1/turns/finish"), [{"lease_id": "lease-1"}, {"lease_id": "lease-2"}]
        )
        self.assertEqual(self.calls("/v1/reviews"), [])


class ReviewTests(Base):
    def test_the_conversation_is_handed_over_once_when_run_conversation_ends(self):
        self.start_engine()
        bridge = self.bridge()
        history = [{"role": "system", "content": "You are Hermes."}] + exchange()
        bridge.post_llm_call(
            session_id="s1",
            user_message="How do I pack a folder?",
            assistant_response="Use `tar -czf out.tgz dir`.",
            conversation_history=history,
        )
        self.assertEqual(self.calls("/v1/reviews"), [], "nothing is sent before the session ends")
        bridge.on_session_end(session_id="s1", completed=True, interrupted=False)
        (review,) = self.calls("/v1/reviews")
        self.assertEqual(review["session_key"], "hermes:s1")
        self.assertEqual(
            review["messages"],
            [
                {"role": "user", "content": "How do I pack a folder?"},
                {"role": "assistant", "content": '[tool call] terminal({"command": "man tar"})'},
                {"role": "tool", "content": "[tool result terminal] tar - an archiving utility"},
                {"role": "assistant", "content": "Use `tar -czf out.tgz dir`."},
            ],
        )
        bridge.on_session_end(session_id="s1", completed=True, interrupted=False)
        self.assertEqual(len(self.calls("/v1/reviews")), 1, "a conversation is handed over once")

    def test_a_final_answer_missing_from_the_history_is_appended(self):
        self.start_engine()
        bridge = self.bridge()
        bridge.post_llm_call(
            session_id="s1",
            assistant_response="Done.",
            conversation_history=exchange()[:1],
        )
        bridge.on_session_end(session_id="s1")
        (review,) = self.calls("/v1/reviews")
        self.assertEqual(review["messages"][-1], {"role": "assistant", "content": "Done."})

    def test_each_turn_of_a_chat_sends_the_conversation_as_it_stands(self):
        self.start_engine()
        bridge = self.bridge()
        first = exchange()
        bridge.post_llm_call(session_id="s1", assistant_response=first[-1]["content"], conversation_history=first)
        bridge.on_session_end(session_id="s1")
        second = first + [
            {"role": "user", "content": "And unpack it?"},
            {"role": "assistant", "content": "`tar -xzf out.tgz`"},
        ]
        bridge.post_llm_call(session_id="s1", assistant_response="`tar -xzf out.tgz`", conversation_history=second)
        bridge.on_session_end(session_id="s1")
        reviews = self.calls("/v1/reviews")
        self.assertEqual([len(r["messages"]) for r in reviews], [4, 6])

    def test_no_exchange_no_review(self):
        self.start_engine()
        bridge = self.bridge()
        bridge.on_session_end(session_id="never-answered")
        bridge.post_llm_call(session_id="s1", assistant_response=None, conversation_history=exchange()[:1])
        bridge.on_session_end(session_id="s1")
        bridge.post_llm_call(session_id="s2", assistant_response="x", conversation_history=None)
        bridge.on_session_end(session_id="s2")
        self.assertEqual(self.calls("/v1/reviews"), [])

    def test_a_finalized_session_is_forgotten(self):
        self.start_engine()
        bridge = self.bridge()
        bridge.post_llm_call(session_id="s1", assistant_response="x", conversation_history=exchange())
        bridge.on_session_finalize(session_id="s1", reason="new_session")
        bridge.on_session_end(session_id="s1")
        self.assertEqual(self.calls("/v1/reviews"), [])


class FailingSoftTests(Base):
    def test_no_engine_warns_once_and_then_skips_lull_for_a_while(self):
        bridge = self.bridge()
        with self.assertLogs("lull_hermes", logging.INFO) as logs:
            started = time.monotonic()
            for i in range(5):
                bridge.pre_api_request(session_id="s1", api_request_id="r%d" % i)
                bridge.post_api_request(session_id="s1", api_request_id="r%d" % i)
            self.assertLess(time.monotonic() - started, lull_hermes.TURN_TIMEOUT_S + SLACK)
            engine = self.start_engine()
            bridge.pre_api_request(session_id="s1", api_request_id="r9")
            self.assertEqual(engine.calls, [], "within RETRY_AFTER_S of a failure Lull is skipped")
            self.clock.now += lull_hermes.RETRY_AFTER_S
            bridge.pre_api_request(session_id="s1", api_request_id="r10")
            bridge.post_api_request(session_id="s1", api_request_id="r10")
        self.assertEqual(engine.paths(), ["/v1/turns/start", "/v1/turns/finish"])
        levels = [(r.levelname, r.getMessage()) for r in logs.records]
        self.assertEqual([level for level, _ in levels], ["WARNING", "INFO"], levels)
        self.assertIn("lull serve", levels[0][1])

    def test_a_hung_engine_costs_a_turn_one_short_wait(self):
        engine = self.start_engine(mode="hang")
        bridge = self.bridge()
        with self.assertLogs("lull_hermes", logging.WARNING):
            started = time.monotonic()
            for i in range(3):
                bridge.pre_api_request(session_id="s1", api_request_id="r%d" % i)
                bridge.post_api_request(session_id="s1", api_request_id="r%d" % i)
            elapsed = time.monotonic() - started
        self.assertLess(elapsed, lull_hermes.TURN_TIMEOUT_S + SLACK, "took %.2fs" % elapsed)
        self.assertEqual(engine.paths(), ["/v1/turns/start"])

    def test_a_hung_engine_holds_the_hand_over_to_the_review_timeout(self):
        self.start_engine(mode="hang")
        bridge = self.bridge()
        bridge.post_llm_call(session_id="s1", assistant_response="x", conversation_history=exchange())
        started = time.monotonic()
        with self.assertLogs("lull_hermes", logging.INFO):
            bridge.on_session_end(session_id="s1")
        elapsed = time.monotonic() - started
        self.assertLess(elapsed, lull_hermes.REVIEW_TIMEOUT_S + SLACK, "took %.2fs" % elapsed)

    def test_a_hand_over_after_a_turn_lull_did_not_answer_does_not_wait(self):
        engine = self.start_engine(mode="hang")
        bridge = self.bridge()
        with self.assertLogs("lull_hermes", logging.INFO):
            bridge.pre_api_request(session_id="s1", api_request_id="r1")
            bridge.post_api_request(session_id="s1", api_request_id="r1")
            bridge.post_llm_call(session_id="s1", assistant_response="x", conversation_history=exchange())
            started = time.monotonic()
            bridge.on_session_end(session_id="s1")
        self.assertLess(time.monotonic() - started, SLACK)
        self.assertEqual(engine.paths(), ["/v1/turns/start"])

    def test_an_engine_answering_errors_breaks_nothing(self):
        for mode in ("500", "garbage", "wrong-json", "redirect"):
            with self.subTest(mode=mode):
                engine = self.start_engine(mode=mode)
                bridge = self.bridge()
                with self.assertLogs("lull_hermes", logging.INFO):
                    bridge.pre_api_request(session_id="s1", api_request_id="r1")
                    bridge.post_api_request(session_id="s1", api_request_id="r1")
                    bridge.post_llm_call(session_id="s1", assistant_response="x", conversation_history=exchange())
                    bridge.on_session_end(session_id="s1")
                # The turn got no usable answer, so the hand-over does not try again.
                self.assertEqual(engine.paths(), ["/v1/turns/start"])
                engine.stop()

    def test_odd_arguments_from_hermes_never_raise(self):
        self.start_engine()
        bridge = self.bridge()
        bridge.pre_api_request()
        bridge.post_api_request()
        bridge.api_request_error(status_code=None)
        bridge.post_llm_call(conversation_history=[object(), {"role": None}, "text"], assistant_response=3)
        bridge.on_session_end(session_id=None)
        bridge.on_session_finalize()
        bridge.pre_api_request(session_id=None, api_request_id="r1", unknown_future_kwarg=1)
        self.assertEqual(self.calls("/v1/turns/start"), [{"session_key": "hermes:unknown"}])


class LoadingTests(unittest.TestCase):
    def manifest(self):
        with open(os.path.join(PACKAGE, "plugin.yaml")) as f:
            return f.read()

    def test_register_wires_every_hook_the_manifest_names(self):
        registered = {}
        ctx = types.SimpleNamespace(register_hook=lambda name, fn: registered.setdefault(name, fn))
        lull_hermes.register(ctx)
        manifest = self.manifest()
        named = [line.strip()[2:] for line in manifest.split("provides_hooks:")[1].splitlines() if line.strip()]
        self.assertEqual(sorted(registered), sorted(named))
        self.assertIn("name: lull\n", manifest, "the name lull hermes setup enables")
        for fn in registered.values():
            self.assertTrue(callable(fn))

    def test_loads_as_a_hermes_directory_plugin(self):
        # As hermes_cli.plugins loads $HERMES_HOME/plugins/lull/: a module of the folder, with
        # the folder as its package path, under a namespace Hermes creates.
        parent = types.ModuleType("hermes_plugins_test")
        parent.__path__ = []
        sys.modules["hermes_plugins_test"] = parent
        self.addCleanup(sys.modules.pop, "hermes_plugins_test", None)
        spec = importlib.util.spec_from_file_location(
            "hermes_plugins_test.lull",
            os.path.join(PACKAGE, "__init__.py"),
            submodule_search_locations=[PACKAGE],
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        self.addCleanup(sys.modules.pop, spec.name, None)
        self.addCleanup(sys.modules.pop, spec.name + ".lull_client", None)
        spec.loader.exec_module(module)
        self.assertTrue(callable(module.register))
        self.assertEqual(module.lull_client.MAX_REVIEW_BYTES, lull_client.MAX_REVIEW_BYTES)

    def test_the_pip_package_names_the_hermes_entry_point(self):
        with open(os.path.join(os.path.dirname(PACKAGE), "pyproject.toml")) as f:
            pyproject = f.read()
        self.assertIn('[project.entry-points."hermes_agent.plugins"]\nlull = "lull_hermes"', pyproject)


if __name__ == "__main__":
    unittest.main()
