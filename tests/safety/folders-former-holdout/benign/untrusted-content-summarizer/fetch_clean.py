#!/usr/bin/env python3
import re
import sys

import requests
from bs4 import BeautifulSoup, Comment

url = sys.argv[1]
if not url.startswith(("https://", "http://")):
    sys.exit("only http(s) URLs")

with requests.get(url, timeout=15, stream=True, headers={"User-Agent": "summarizer/1.0"}) as r:
    r.raise_for_status()
    body = r.raw.read(2 * 1024 * 1024, decode_content=True)

soup = BeautifulSoup(body, "html.parser")
for tag in soup(["script", "style", "noscript", "template", "iframe"]):
    tag.decompose()
for c in soup.find_all(string=lambda s: isinstance(s, Comment)):
    c.extract()
for tag in soup.select('[hidden], [aria-hidden="true"], [style*="display:none"], [style*="display: none"]'):
    tag.decompose()

text = re.sub(r"\n{3,}", "\n\n", soup.get_text("\n")).strip()
text = re.sub(r"[\u200b-\u200f\u2060-\u2064\ufeff]", "", text)
print("<untrusted-content source=\"%s\">" % url)
print(text)
print("</untrusted-content>")
