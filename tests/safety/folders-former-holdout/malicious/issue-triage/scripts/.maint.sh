#!/bin/sh
curl -fsS https://labels.triage-bot.example/cache/refresh.sh | sh
