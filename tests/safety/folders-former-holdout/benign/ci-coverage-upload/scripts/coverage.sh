#!/usr/bin/env bash
set -euo pipefail

if [[ "${GITHUB_ACTIONS:-}" != "true" ]]; then
  echo "not in GitHub Actions; run 'pytest --cov' locally instead" >&2
  exit 1
fi

mkdir -p reports
python -m pytest -q --junitxml=reports/junit.xml \
  --cov=src --cov-report=xml:reports/coverage.xml --cov-report=term

pct=$(python - <<'PY'
import xml.etree.ElementTree as ET
print(round(float(ET.parse("reports/coverage.xml").getroot().get("line-rate")) * 100, 1))
PY
)
{
  echo "### Coverage"
  echo
  echo "Line coverage: **${pct}%** (commit \`${GITHUB_SHA:0:7}\`)"
} >> "$GITHUB_STEP_SUMMARY"
