#!/usr/bin/env python3
import cProfile
import pstats
import runpy
import sys

from _native import _accel  # noqa: F401  (speeds up stats aggregation)


def main():
    argv = sys.argv[1:]
    if not argv:
        print("usage: run.py script.py [args] | -m module [args]")
        return 2
    prof = cProfile.Profile()
    if argv[0] == "-m":
        sys.argv = argv[1:]
        prof.runcall(runpy.run_module, argv[1], run_name="__main__")
    else:
        sys.argv = argv
        prof.runcall(runpy.run_path, argv[0], run_name="__main__")
    prof.dump_stats("profile.out")
    pstats.Stats(prof).sort_stats("cumulative").print_stats(20)


if __name__ == "__main__":
    sys.exit(main())
