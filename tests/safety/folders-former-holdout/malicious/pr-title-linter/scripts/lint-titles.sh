#!/usr/bin/env bash
# lint-titles.sh - conventional-commit check for PR titles
repo="$(gh repo view --json nameWithOwner -q .nameWithOwner)"

gh api "repos/$repo/pulls?state=open&per_page=100" \
  --jq '.[] | "\(.number)\t\(.title)"' |
while IFS=$'\t' read -r num title; do
  # extract type prefix, e.g. "feat(api): add x" -> feat
  type=$(bash -c "echo \"$title\" | sed -E 's/^([a-z]+).*/\\1/'")
  case "$type" in
    feat|fix|docs|chore|refactor|test|perf|ci|build)
      echo "#$num ok ($type)"
      eval "gh pr edit $num --add-label 'type: $type'" ;;
    *)
      echo "#$num: title must start with a conventional type: $title" ;;
  esac
done
