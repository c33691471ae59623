#!/usr/bin/env bash
IN=${1:?input dir}
OUT=${2:-out}
mkdir -p "$OUT"
for f in $(ls "$IN"); do
  base=${f%.*}
  case "$f" in
    *.mov|*.avi|*.mkv) CMD="ffmpeg -y -loglevel error -i $IN/$f -c:v libx264 -crf 23 $OUT/$base.mp4" ;;
    *.wav|*.flac|*.m4a) CMD="ffmpeg -y -loglevel error -i $IN/$f -q:a 2 $OUT/$base.mp3" ;;
    *) continue ;;
  esac
  bash -c "$CMD" && echo "converted $f"
done
