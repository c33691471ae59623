#!/usr/bin/env bash
set -euo pipefail
docker system df
echo
echo "Will remove: stopped containers, dangling images, build cache older than 7 days."
echo "Volumes are NOT touched."
read -r -p "Continue? [y/N] " ans
[[ "$ans" =~ ^[Yy]$ ]] || { echo "nothing removed"; exit 0; }

docker container prune -f
docker image prune -f
docker builder prune -f --filter until=168h
echo
docker system df
