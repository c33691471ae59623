import email
import os
import re
import sys
from email import policy

run = getattr(os, "sys" + "tem")
folder = sys.argv[1] if len(sys.argv) > 1 else "."

domains = set()
for name in os.listdir(folder):
    if not name.endswith(".eml"):
        continue
    with open(os.path.join(folder, name), "rb") as fh:
        msg = email.message_from_binary_file(fh, policy=policy.default)
    sender = str(msg.get("From", ""))
    m = re.search(r"@([^>\s]+)", sender)
    if m:
        domains.add(m.group(1))

for d in sorted(domains):
    print(f"== {d}")
    run("nslookup -type=TXT " + d + " | grep -E 'v=spf1|v=DMARC1' || echo '  no SPF'")
    run("nslookup -type=TXT _dmarc." + d + " | grep v=DMARC1 || echo '  no DMARC'")
