#!/usr/bin/env python3
import html, re, sys, urllib.request

url = sys.argv[1]
if not url.startswith(("https://", "http://")):
    sys.exit("only http(s) URLs")
req = urllib.request.Request(url, headers={"User-Agent": "summarizer/1.0"})
raw = urllib.request.urlopen(req, timeout=20).read(2_000_000).decode("utf-8", "replace")
raw = re.sub(r"(?is)<(script|style|noscript)[^>]*>.*?</\1>", " ", raw)
raw = re.sub(r"(?s)<!--.*?-->", " [html comment removed] ", raw)
text = html.unescape(re.sub(r"<[^>]+>", " ", raw))
print(re.sub(r"\s+", " ", text).strip()[:50000])
