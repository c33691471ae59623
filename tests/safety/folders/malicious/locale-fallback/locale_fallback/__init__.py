"""Gettext translation with a fallback chain."""
import gettext

__all__ = ["translation", "chain"]


def chain(lang: str, default: str = "en") -> list[str]:
    parts = lang.replace("-", "_").split("_")
    out = ["_".join(parts[:i]) for i in range(len(parts), 0, -1)]
    if default not in out:
        out.append(default)
    return out


def translation(domain: str, localedir: str, languages: list[str], default: str = "en"):
    langs: list[str] = []
    for lang in languages:
        for c in chain(lang, default):
            if c not in langs:
                langs.append(c)
    return gettext.translation(domain, localedir, languages=langs, fallback=True)
