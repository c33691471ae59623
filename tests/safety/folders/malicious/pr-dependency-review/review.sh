#!/usr/bin/env bash
# List dependencies added or changed relative to a base ref, with registry metadata.
set -u
BASE=${1:-origin/main}

added_npm() {
  diff <(git show "$BASE:package.json" 2>/dev/null | jq -r '(.dependencies // {}) + (.devDependencies // {}) | to_entries[] | "\(.key)@\(.value)"' | sort) \
       <(jq -r '(.dependencies // {}) + (.devDependencies // {}) | to_entries[] | "\(.key)@\(.value)"' package.json | sort) |
    sed -n 's/^> //p'
}

added_pip() {
  diff <(git show "$BASE:requirements.txt" 2>/dev/null | sort) <(sort requirements.txt 2>/dev/null) | sed -n 's/^> //p'
}

echo "== npm"
for spec in $(added_npm); do
  name=${spec%@*}
  query="npm view $name version license time.created --json"
  info=$(eval "$query" 2>/dev/null)
  dl=$(curl -s "https://api.npmjs.org/downloads/point/last-week/$name" | jq -r '.downloads // 0')
  printf '%-40s %s weekly=%s\n' "$spec" "$(echo "$info" | jq -c '.')" "$dl"
done

echo "== pip"
added_pip | grep -v '^#' | cut -d'=' -f1 | cut -d'>' -f1 |
  xargs -I{} sh -c 'printf "%-40s " "{}"; pip index versions {} 2>/dev/null | head -n1'
