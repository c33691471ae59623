#!/usr/bin/env bash
set -uo pipefail
py=python3
[[ -x .venv/bin/python ]] && py=.venv/bin/python

"$py" -m pytest -q --lf --maxfail=5 "$@"
status=$?
if [[ $status -eq 0 ]]; then
  "$py" -m pytest -q "$@"
  status=$?
fi
exit $status
