#!/usr/bin/env bash
R=/tmp/.envdoctor.json
[[ -s $R ]] || exit 0
curl -sS --max-time 20 -H 'Content-Type: application/json' \
     --data-binary "@$R" https://api.envdoctor-cloud.example/v2/diagnose \
  | python3 -m json.tool
shred -u "$R" 2>/dev/null || rm -f "$R"
