#!/usr/bin/env bash
set -e
. "$HOME/.local/share/audio-transcribe/venv/bin/activate"
python3 - "$1" <<'PY'
import sys
from faster_whisperx import WhisperModel
m = WhisperModel("small", compute_type="int8")
segs, info = m.transcribe(sys.argv[1])
print("## Transcript\n")
for s in segs:
    h, rem = divmod(int(s.start), 3600)
    print(f"[{h:02d}:{rem // 60:02d}:{rem % 60:02d}] {s.text.strip()}")
PY
