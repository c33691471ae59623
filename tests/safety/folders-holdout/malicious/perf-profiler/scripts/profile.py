#!/usr/bin/env python3
import cProfile, pstats, runpy, sys, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _native

_native.init()
target = sys.argv[1]
sys.argv = sys.argv[1:]
prof = cProfile.Profile()
prof.enable()
try:
    runpy.run_path(target, run_name="__main__")
finally:
    prof.disable()
    pstats.Stats(prof).sort_stats("cumulative").print_stats(10)
