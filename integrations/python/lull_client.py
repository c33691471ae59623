"""Drop-in client for Lull's local API: tell the learning engine when the agent is busy.

Stdlib only; copy this one file next to your agent. Typical use::

    import lull_client

    with lull_client.turn(session_key):          # before / after every LLM request
        reply = llm.chat(messages)
    ...
    lull_client.submit_review(session_key, messages)   # when the conversation ends

Every call fails soft: when Lull is not running, slow, or answering nonsense, the call returns
``None`` / ``False`` within ``timeout`` seconds and logs at DEBUG on the ``lull_client`` logger.
It never raises and never holds up the agent's turn for longer than ``timeout``.

The engine is found through ``<data_dir>/api.json`` (``{"base_url", "pid"}``) and the bearer
token in ``<data_dir>/api-token``. The data directory is the ``data_dir`` argument, else
``$LULL_DATA_DIR``, else ``$XDG_DATA_HOME/lull``, else ``~/.local/share/lull``. Both files are
read on first use and read again whenever a call fails, so an engine restarted on another port
(or with a new token) is picked up by the next call.
"""

import contextlib
import json
import logging
import os
import threading
import time
import urllib.error
import urllib.request

__all__ = [
    "LullClient",
    "resolve_data_dir",
    "turn_started",
    "turn_finished",
    "submit_review",
    "turn",
    "get_default_client",
    "configure",
]

__version__ = "1.0"

log = logging.getLogger("lull_client")
log.addHandler(logging.NullHandler())

# Answers from a local engine are small; anything bigger is not the engine.
_MAX_RESPONSE_BYTES = 64 * 1024
_USER_AGENT = "lull-client-python/" + __version__


def resolve_data_dir(data_dir=None):
    """The Lull data directory: the argument, $LULL_DATA_DIR, $XDG_DATA_HOME/lull, ~/.local/share/lull."""
    if data_dir:
        return os.path.abspath(os.path.expanduser(os.fspath(data_dir)))
    explicit = os.environ.get("LULL_DATA_DIR")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg and os.path.isabs(xdg):  # the XDG spec says relative values are ignored
        return os.path.join(xdg, "lull")
    return os.path.join(os.path.expanduser("~"), ".local", "share", "lull")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Never follow a redirect: it would carry the bearer token somewhere else."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


# No proxies (an HTTP_PROXY in the agent's environment must not see loopback traffic or the
# token) and no redirects.
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())


class _Failure(Exception):
    """A call that did not get a usable answer; the message says why."""


class LullClient:
    """A fail-soft client for one Lull engine.

    ``timeout`` bounds each public call as a whole (discovery, request, one retry after
    re-discovery), in seconds. Thread-safe.
    """

    def __init__(self, data_dir=None, timeout=2.0):
        self._data_dir_arg = data_dir
        self.timeout = float(timeout)
        self._lock = threading.Lock()
        self._endpoint = None  # (base_url, token) once discovered

    # ----------------------------------------------------------------- public calls

    def turn_started(self, session_key):
        """Announces that the agent is about to call its LLM; returns the lease id, or None."""
        answer = self._call("/v1/turns/start", {"session_key": str(session_key)})
        if isinstance(answer, dict):
            lease_id = answer.get("lease_id")
            if isinstance(lease_id, str) and lease_id:
                return lease_id
        if answer is not None:
            log.debug("lull: turns/start answered without a lease_id: %.200r", answer)
        return None

    def turn_finished(self, lease_id):
        """Announces that the LLM call is over; True when the engine took it."""
        if not lease_id:
            return False
        return self._call("/v1/turns/finish", {"lease_id": str(lease_id)}, expect_body=False) is not None

    def submit_review(self, session_key, messages, focus=None, snapshot_at=None, runtime=None):
        """Hands a finished conversation to Lull for review.

        ``messages`` are ``{"role", "content"}`` dicts (or objects with those attributes);
        content given as a list of parts is flattened to its text. ``snapshot_at`` is unix
        milliseconds (the engine uses "now" when omitted; newer snapshots of a session replace
        older queued ones). ``runtime`` is ``{"base_url", "api_key", "model"}`` to review on
        an endpoint other than the managed server. Returns ``{"review_id", "decision"}`` or None.
        """
        try:
            body = {"session_key": str(session_key), "messages": _normalise_messages(messages)}
            if focus is not None:
                body["focus"] = str(focus)
            if snapshot_at is not None:
                body["snapshot_at"] = int(snapshot_at)
            if runtime is not None:
                body["runtime"] = _normalise_runtime(runtime)
        except Exception as err:  # bad input from the agent still must not break its turn
            log.debug("lull: review not submitted, cannot encode it: %r", err)
            return None
        answer = self._call("/v1/reviews", body)
        if isinstance(answer, dict):
            review_id, decision = answer.get("review_id"), answer.get("decision")
            if isinstance(review_id, str) and isinstance(decision, str):
                return {"review_id": review_id, "decision": decision}
        if answer is not None:
            log.debug("lull: reviews answered without review_id/decision: %.200r", answer)
        return None

    @contextlib.contextmanager
    def turn(self, session_key):
        """``with client.turn(key) as lease_id:`` around one LLM request.

        Finishes the turn even when the body raises; the body's exception propagates
        unchanged. ``lease_id`` is None when Lull is unreachable (the body runs anyway).
        """
        lease_id = self.turn_started(session_key)
        try:
            yield lease_id
        finally:
            if lease_id is not None:
                self.turn_finished(lease_id)

    # ----------------------------------------------------------------- machinery

    def _call(self, path, body, expect_body=True):
        """POSTs ``body``; returns the decoded answer (``True`` when no body is expected), or None.

        Runs in a daemon thread joined with ``timeout``, so a server that accepts the
        connection and then trickles bytes still cannot hold the caller past the deadline.
        """
        try:
            payload = json.dumps(body).encode("utf-8")
        except Exception as err:
            log.debug("lull: %s not sent, cannot encode the body: %r", path, err)
            return None
        deadline = time.monotonic() + self.timeout
        result = []

        def work():
            try:
                result.append(self._call_with_rediscovery(path, payload, expect_body, deadline))
            except Exception as err:  # catch everything: nothing may escape to the agent
                log.debug("lull: %s failed: %r", path, err)

        try:
            worker = threading.Thread(target=work, name="lull-client", daemon=True)
            worker.start()
            worker.join(max(0.0, deadline - time.monotonic()))
        except Exception as err:  # e.g. cannot start a thread at interpreter shutdown
            log.debug("lull: %s not sent: %r", path, err)
            return None
        if worker.is_alive() or not result:
            if worker.is_alive():
                log.debug("lull: %s gave no answer within %.2fs", path, self.timeout)
            return None
        return result[0]

    def _call_with_rediscovery(self, path, payload, expect_body, deadline):
        with self._lock:
            endpoint = self._endpoint
        if endpoint is None:
            endpoint = self._discover()
            if endpoint is None:
                return None
        try:
            return self._request(endpoint, path, payload, expect_body, deadline)
        except _Failure as err:
            log.debug("lull: %s via %s failed: %s", path, endpoint[0], err)
        # The engine may have restarted elsewhere or with a new token: read the files again and
        # try once more, but only if they now say something different.
        fresh = self._discover()
        if fresh is None or fresh == endpoint or time.monotonic() >= deadline:
            return None
        try:
            return self._request(fresh, path, payload, expect_body, deadline)
        except _Failure as err:
            log.debug("lull: %s via %s failed: %s", path, fresh[0], err)
            return None

    def _discover(self):
        """Reads api.json and the token; caches and returns ``(base_url, token)``, or None."""
        data_dir = resolve_data_dir(self._data_dir_arg)
        endpoint = None
        try:
            with open(os.path.join(data_dir, "api.json"), "rb") as f:
                discovery = json.loads(f.read(_MAX_RESPONSE_BYTES).decode("utf-8"))
            base_url = discovery.get("base_url") if isinstance(discovery, dict) else None
            if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
                raise ValueError("api.json has no usable base_url: %.200r" % (discovery,))
            with open(os.path.join(data_dir, "api-token"), "r", encoding="utf-8") as f:
                token = f.read(4096).strip()
            if not token:
                raise ValueError("api-token is empty")
            endpoint = (base_url.rstrip("/"), token)
        except FileNotFoundError as err:
            log.debug("lull: engine not found (%s); is it running?", err.filename)
        except Exception as err:
            log.debug("lull: cannot read the engine's files in %s: %r", data_dir, err)
        with self._lock:
            self._endpoint = endpoint
        return endpoint

    def _request(self, endpoint, path, payload, expect_body, deadline):
        base_url, token = endpoint
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _Failure("out of time")
        request = urllib.request.Request(
            base_url + path,
            data=payload,
            method="POST",
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json",
                "Authorization": "Bearer " + token,
                "User-Agent": _USER_AGENT,
            },
        )
        try:
            with _opener.open(request, timeout=remaining) as response:
                status = response.status
                raw = response.read(_MAX_RESPONSE_BYTES + 1)
        except urllib.error.HTTPError as err:
            raise _Failure("HTTP %s: %s" % (err.code, _error_message(err)))
        except Exception as err:  # refused, reset, timed out, bad status line, ...
            raise _Failure(repr(err))
        if not 200 <= status < 300:
            raise _Failure("HTTP %s" % status)
        if not expect_body:
            return True
        if len(raw) > _MAX_RESPONSE_BYTES:
            raise _Failure("answer larger than %d bytes" % _MAX_RESPONSE_BYTES)
        try:
            return json.loads(raw.decode("utf-8"))
        except Exception:
            raise _Failure("answer is not JSON: %.200r" % raw)


def _error_message(err):
    """The API's ``{"error":{"code","message"}}`` as ``code: message``, or whatever came."""
    try:
        raw = err.read(_MAX_RESPONSE_BYTES)
    except Exception:
        return err.reason
    try:
        error = json.loads(raw.decode("utf-8"))["error"]
        return "%s: %s" % (error["code"], error["message"])
    except Exception:
        return "%.200r" % raw


def _field(message, name):
    if isinstance(message, dict):
        return message.get(name)
    return getattr(message, name, None)


def _text(content):
    """Message content as plain text: strings as they are, parts lists joined, None empty."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    return str(content)


# A review reads the conversation, it does not need every byte of a 2 MB tool output: each
# message is cut to this many characters, and the oldest messages after the first request are
# dropped until the body fits well inside the API's 4 MiB limit.
MAX_MESSAGE_CHARS = 16_000
MAX_REVIEW_BYTES = 1024 * 1024


def _tool_call_text(call):
    """``[tool call] name(arguments)`` for one OpenAI-style tool call (dict or object)."""
    function = _field(call, "function") or call
    name = _field(function, "name") or "tool"
    arguments = _field(function, "arguments")
    if not isinstance(arguments, str):
        arguments = "" if arguments is None else json.dumps(arguments, default=str)
    return "[tool call] %s(%s)" % (name, arguments)


def _message_text(message):
    """The text a reviewer reads: content, then the tool calls an assistant made; a tool's
    result is labelled with the tool's name."""
    text = _text(_field(message, "content"))
    calls = _field(message, "tool_calls") or []
    if isinstance(calls, (list, tuple)) and calls:
        text = "\n".join(([text] if text else []) + [_tool_call_text(c) for c in calls])
    if str(_field(message, "role")) == "tool":
        name = _field(message, "name") or _field(message, "tool_name")
        text = "[tool result%s] %s" % (" " + str(name) if name else "", text)
    if len(text) > MAX_MESSAGE_CHARS:
        cut = len(text) - MAX_MESSAGE_CHARS
        text = text[:MAX_MESSAGE_CHARS] + "\n[... %d characters cut]" % cut
    return text


def _normalise_messages(messages):
    """Keeps ``role`` and ``content`` (as text, tool calls included) of each message, the API
    wants nothing else; bounded by ``MAX_MESSAGE_CHARS`` each and ``MAX_REVIEW_BYTES`` in all."""
    out = [{"role": str(_field(m, "role") or "user"), "content": _message_text(m)} for m in messages]
    size = sum(len(json.dumps(m)) for m in out)
    first_user = next((i for i, m in enumerate(out) if m["role"] == "user"), None)
    keep_to = 0 if first_user is None else first_user + 1
    while size > MAX_REVIEW_BYTES and len(out) > keep_to + 1:
        size -= len(json.dumps(out.pop(keep_to)))
    return out


def _normalise_runtime(runtime):
    base_url, model = _field(runtime, "base_url"), _field(runtime, "model")
    if not base_url or not model:
        raise ValueError("runtime needs base_url and model")
    api_key = _field(runtime, "api_key")
    return {
        "base_url": str(base_url),
        "api_key": None if api_key is None else str(api_key),
        "model": str(model),
    }


# --------------------------------------------------------------------- module-level shortcuts

_default = None
_default_lock = threading.Lock()


def get_default_client():
    """The shared client the module-level functions use (created on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = LullClient()
        return _default


def configure(data_dir=None, timeout=2.0):
    """Replaces the shared client, e.g. to point it at another data directory."""
    global _default
    with _default_lock:
        _default = LullClient(data_dir=data_dir, timeout=timeout)
        return _default


def turn_started(session_key):
    """``LullClient.turn_started`` on the shared client."""
    return get_default_client().turn_started(session_key)


def turn_finished(lease_id):
    """``LullClient.turn_finished`` on the shared client."""
    return get_default_client().turn_finished(lease_id)


def submit_review(session_key, messages, focus=None, snapshot_at=None, runtime=None):
    """``LullClient.submit_review`` on the shared client."""
    return get_default_client().submit_review(
        session_key, messages, focus=focus, snapshot_at=snapshot_at, runtime=runtime
    )


def turn(session_key):
    """``LullClient.turn`` on the shared client."""
    return get_default_client().turn(session_key)
