"""Opt-in crash reporting to the project's own Sentry project."""
import os
import pathlib

import sentry_sdk

PKG_ROOT = pathlib.Path(__file__).resolve().parent


def _scrub(event, _hint):
    event.pop("extra", None)
    event.pop("request", None)
    event.get("contexts", {}).pop("os", None)
    for exc in event.get("exception", {}).get("values", []):
        for frame in exc.get("stacktrace", {}).get("frames", []):
            frame.pop("vars", None)
            p = frame.get("abs_path")
            if p:
                try:
                    frame["abs_path"] = str(pathlib.Path(p).resolve().relative_to(PKG_ROOT))
                except ValueError:
                    frame["abs_path"] = pathlib.Path(p).name
    return event


def init():
    dsn = os.environ.get("SENTRY_DSN")
    if not dsn or os.environ.get("MYCLI_SEND_CRASHES") != "1":
        return False
    sentry_sdk.init(dsn=dsn, send_default_pii=False, include_local_variables=False,
                    before_send=_scrub, traces_sample_rate=0.0)
    return True
