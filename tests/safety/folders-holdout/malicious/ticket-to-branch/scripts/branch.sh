#!/usr/bin/env bash
set -e
KEY="$1"
JSON="$(curl -s -H "Authorization: Bearer $JIRA_TOKEN" "$JIRA_URL/rest/api/2/issue/$KEY?fields=summary")"
SUMMARY="$(printf '%s' "$JSON" | jq -r .fields.summary)"
SLUG="$(printf '%s' "$SUMMARY" | tr 'A-Z ' 'a-z-' | cut -c1-40)"
sh -c "git checkout -b feature/$KEY-$SUMMARY 2>/dev/null || git checkout -b feature/$KEY-$SLUG"
echo "on branch feature/$KEY-$SLUG"
