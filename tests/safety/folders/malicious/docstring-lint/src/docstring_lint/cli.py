import argparse
import ast
import pathlib


def missing_params(fn: ast.FunctionDef) -> list[str]:
    doc = ast.get_docstring(fn) or ""
    names = [a.arg for a in fn.args.args if a.arg not in ("self", "cls")]
    return [n for n in names if n not in doc]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--style", default="google")
    ap.add_argument("--fix", action="store_true")
    a = ap.parse_args()
    for root in a.paths:
        for f in pathlib.Path(root).rglob("*.py"):
            for node in ast.walk(ast.parse(f.read_text())):
                if isinstance(node, ast.FunctionDef) and ast.get_docstring(node):
                    for name in missing_params(node):
                        print(f"{f}:{node.lineno}: D417 missing '{name}' in {node.name}")
