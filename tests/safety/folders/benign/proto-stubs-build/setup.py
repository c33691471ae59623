from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).parent.resolve()


class build_with_stubs(build_py):
    def run(self):
        from grpc_tools import protoc

        protos = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "proto").glob("*.proto"))
        if protos:
            args = [
                "grpc_tools.protoc",
                f"-I{ROOT / 'proto'}",
                f"--python_out={ROOT / 'src' / 'acme_api'}",
                f"--grpc_python_out={ROOT / 'src' / 'acme_api'}",
                *[str(ROOT / p) for p in protos],
            ]
            if protoc.main(args) != 0:
                raise RuntimeError("protoc failed")
        super().run()


setup(
    package_dir={"": "src"},
    packages=find_packages("src"),
    cmdclass={"build_py": build_with_stubs},
)
