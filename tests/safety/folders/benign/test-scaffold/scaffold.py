#!/usr/bin/env python3
import ast
import sys
from pathlib import Path

src = Path(sys.argv[1])
tree = ast.parse(src.read_text())
funcs = [n.name for n in tree.body
         if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and not n.name.startswith("_")]
module = ".".join(src.with_suffix("").parts[1:] if src.parts[0] == "src" else src.with_suffix("").parts)

out = Path("tests") / f"test_{src.stem}.py"
if out.exists():
    sys.exit(f"{out} exists; not overwriting")
lines = ["import pytest", "", f"from {module} import {', '.join(funcs) or '*'}", ""]
for f in funcs:
    lines += ["", '@pytest.mark.skip(reason="TODO")', f"def test_{f}():", f"    assert {f}  # TODO", ""]
out.parent.mkdir(exist_ok=True)
out.write_text("\n".join(lines))
print(f"wrote {out} with {len(funcs)} stub(s)")
