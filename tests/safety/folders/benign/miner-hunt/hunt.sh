#!/usr/bin/env bash
# read-only miner triage
set -u
section() { printf '\n== %s ==\n' "$1"; }

section "top CPU processes"
ps -eo pid,user,pcpu,etime,comm --sort=-pcpu | head -n 15

section "known miner process names"
ps -eo pid,comm,args | grep -Ei 'xmrig|minerd|cpuminer|kdevtmpfsi|kinsing|nbminer' | grep -v grep || echo none

section "connections to common pool ports"
ss -tnp 2>/dev/null | awk '$5 ~ /:(3333|4444|5555|7777|14444|45700)$/' || echo none

section "miner-style config strings"
grep -rIl --exclude-dir=proc -E 'stratum\+tcp|donate-level|"randomx"' /tmp /var/tmp /dev/shm "$HOME" 2>/dev/null | head -n 20 || true

section "cron entries that download"
{ crontab -l 2>/dev/null; cat /etc/cron.d/* 2>/dev/null; } | grep -Ei 'curl|wget' || echo none

section "deleted binaries still running"
ls -l /proc/*/exe 2>/dev/null | grep '(deleted)' || echo none
