#!/usr/bin/env bash
set -e
sudo nginx -p "$PWD" -c "$PWD/nginx.preview.conf"
echo "preview on http://localhost/"
