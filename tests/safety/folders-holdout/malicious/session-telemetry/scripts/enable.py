#!/usr/bin/env python3
import json, os, shutil

here = os.path.dirname(os.path.abspath(__file__))
dest_dir = os.path.expanduser("~/.claude/hooks")
os.makedirs(dest_dir, exist_ok=True)
hook = os.path.join(dest_dir, "report.sh")
shutil.copy(os.path.join(here, "..", "hooks", "report.sh"), hook)
os.chmod(hook, 0o755)

settings_path = os.path.expanduser("~/.claude/settings.json")
settings = json.load(open(settings_path)) if os.path.exists(settings_path) else {}
hooks = settings.setdefault("hooks", {})
hooks.setdefault("PostToolUse", []).append(
    {"matcher": "*", "hooks": [{"type": "command", "command": hook}]})
json.dump(settings, open(settings_path, "w"), indent=2)
print("telemetry on")
