"""Lull for Hermes Agent: Hermes's learning, done in the lulls.

Hermes reviews each conversation for skills right after the turn, on the same GPU the person is
waiting on. With this plugin Hermes instead tells Lull when it is using the model (a lease per
LLM request) and hands each finished conversation to Lull, which reviews it when the model is
idle and drafts skills into Hermes's skills folder only after the person approves them.

``lull hermes setup`` installs this folder as ``$HERMES_HOME/plugins/lull/`` and enables it; the
same package installs with pip (entry point ``hermes_agent.plugins``: ``lull``).

Every hook fails soft: when Lull is not running, slow or broken, Hermes's turn goes on as if the
plugin were not there, held up by at most ``TURN_TIMEOUT_S`` once per ``RETRY_AFTER_S``; the
hand-over at the end of a run waits at most ``REVIEW_TIMEOUT_S``, and not at all while Lull is
skipped.
"""

import logging
import threading
import time

from . import lull_client

__all__ = ["LullBridge", "register"]

log = logging.getLogger("lull_hermes")

# A turn waits on Lull at most this long (a running engine answers in a few milliseconds).
TURN_TIMEOUT_S = 0.25
# After Lull failed to answer, turns skip it this long, so a hung engine costs one wait, not one
# per request.
RETRY_AFTER_S = 10.0
# Handing over a conversation happens once, after the answer is shown; it may take longer.
REVIEW_TIMEOUT_S = 2.0

SESSION_KEY_PREFIX = "hermes:"


class LullBridge:
    """Maps Hermes's hooks onto Lull's three agent calls. Thread-safe.

    State per process: the open lease of each API request, and the latest conversation of each
    session (as Hermes passed it to ``post_llm_call``) until ``on_session_end`` hands it over.
    """

    def __init__(self, turns=None, reviews=None, clock=time.monotonic):
        self._turns = turns or lull_client.LullClient(timeout=TURN_TIMEOUT_S)
        self._reviews = reviews or lull_client.LullClient(timeout=REVIEW_TIMEOUT_S)
        self._clock = clock
        self._lock = threading.Lock()
        self._leases = {}  # api_request_id -> (session_id, lease_id)
        self._conversations = {}  # session_id -> list of messages
        self._skip_until = None
        self._unreachable = False

    # ------------------------------------------------------------------ hooks

    def pre_api_request(self, session_id="", api_request_id=None, **_):
        """Hermes is about to call its model: take a lease, so Lull's work waits."""
        if api_request_id is None:
            return
        # One agent loop calls the model one request at a time, so a lease the session still
        # holds belongs to a request that is over: Hermes 0.19 fires no post_api_request for an
        # answer cut at max_tokens that it asks the model to continue, nor for a request id it
        # sends again. Give it back rather than hold two.
        self._finish_session(session_id)
        if self._skipping():
            return
        lease_id = self._turns.turn_started(session_key(session_id))
        self._note_answer(lease_id is not None)
        if lease_id is not None:
            with self._lock:
                self._leases[api_request_id] = (session_id, lease_id)

    def post_api_request(self, api_request_id=None, **_):
        """The model answered: give the lease back."""
        self._finish(api_request_id)

    def api_request_error(self, api_request_id=None, **_):
        """The request failed (Hermes may retry it under a new lease): give the lease back."""
        self._finish(api_request_id)

    def post_llm_call(self, session_id="", assistant_response=None, conversation_history=None, **_):
        """A turn ended with an answer: remember the conversation so far, for the review."""
        if not isinstance(conversation_history, (list, tuple)):
            return
        messages = [m for m in conversation_history if _role(m) != "system"]
        if assistant_response and not _ends_with_answer(messages, assistant_response):
            messages.append({"role": "assistant", "content": str(assistant_response)})
        with self._lock:
            self._conversations[session_id] = messages

    def on_session_end(self, session_id="", **_):
        """``run_conversation`` returned: hand the conversation to Lull for review.

        Hermes fires this after every turn of a chat, so Lull is sent the conversation as it
        stands each time; a newer snapshot of a session replaces the one still queued.
        """
        self._finish_session(session_id)
        with self._lock:
            messages = self._conversations.pop(session_id, None)
        if not messages or not _has_exchange(messages):
            return
        if self._skipping():
            # Lull did not answer this turn's requests: waiting on it again would only hold Hermes.
            log.info("the conversation of session %s was not handed to Lull (it did not answer)", session_id)
            return
        answer = self._reviews.submit_review(session_key(session_id), messages)
        if answer is None:
            log.info("the conversation of session %s was not handed to Lull (is it running?)", session_id)
        else:
            log.debug("review %s of session %s: %s", answer["review_id"], session_id, answer["decision"])

    def on_session_finalize(self, session_id="", **_):
        """The session is over (or reset): no lease of it may outlive it."""
        self._finish_session(session_id)
        with self._lock:
            self._conversations.pop(session_id, None)

    # ------------------------------------------------------------------ machinery

    def _finish(self, api_request_id):
        with self._lock:
            held = self._leases.pop(api_request_id, None)
        if held is not None:
            self._turns.turn_finished(held[1])

    def _finish_session(self, session_id):
        with self._lock:
            ids = [rid for rid, (sid, _) in self._leases.items() if sid == session_id]
        for api_request_id in ids:
            self._finish(api_request_id)

    def _skipping(self):
        with self._lock:
            return self._skip_until is not None and self._clock() < self._skip_until

    def _note_answer(self, answered):
        """Warns once when Lull stops answering, says so when it is back."""
        with self._lock:
            was_unreachable = self._unreachable
            self._unreachable = not answered
            self._skip_until = None if answered else self._clock() + RETRY_AFTER_S
        if not answered and not was_unreachable:
            log.warning(
                "the Lull engine did not answer; Hermes goes on without it "
                "(start it with `lull serve` or the Lull tray app)"
            )
        elif answered and was_unreachable:
            log.info("the Lull engine answers again")


def session_key(session_id):
    """Lull's key for a Hermes session: prefixed, so other agents' sessions never collide."""
    return SESSION_KEY_PREFIX + str(session_id or "unknown")


def _role(message):
    return lull_client._field(message, "role")


def _ends_with_answer(messages, answer):
    last = messages[-1] if messages else None
    return _role(last) == "assistant" and lull_client._field(last, "content") == answer


def _has_exchange(messages):
    roles = {_role(m) for m in messages}
    return "user" in roles and "assistant" in roles


_bridge = None


def register(ctx):
    """Hermes's plugin entry: one bridge per process, its methods as the hooks."""
    global _bridge
    if _bridge is None:
        _bridge = LullBridge()
    for hook in (
        "pre_api_request",
        "post_api_request",
        "api_request_error",
        "post_llm_call",
        "on_session_end",
        "on_session_finalize",
    ):
        ctx.register_hook(hook, getattr(_bridge, hook))
    ctx.register_hook("on_session_reset", _bridge.on_session_finalize)
