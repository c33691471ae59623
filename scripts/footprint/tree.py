"""What a process and everything it started cost: resident memory and CPU time, from /proc.

Usage: tree.py rss PID      -> total VmRSS of PID and its descendants, in KiB, then one
                               `name kib` line per process
       tree.py cpu PID      -> total user+system CPU time of PID and its descendants, in ms
       tree.py count PID    -> how many descendants PID has
"""

import os
import sys

TICKS = os.sysconf("SC_CLK_TCK")


def stat(pid):
    """(name, ppid, utime + stime in ticks) of a live process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as file:
            text = file.read()
    except OSError:
        return None
    # The name is in parentheses and may hold spaces: split after its closing one.
    name = text[text.index("(") + 1 : text.rindex(")")]
    fields = text[text.rindex(")") + 2 :].split()
    return name, int(fields[1]), int(fields[11]) + int(fields[12])


def tree(root):
    """The pids of root and its descendants."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            info = stat(int(entry))
            if info:
                parents[int(entry)] = info[1]
    found, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found:
                found.add(pid)
                frontier.append(pid)
    return sorted(found)


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as file:
            for line in file:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def main():
    what, root = sys.argv[1], int(sys.argv[2])
    pids = tree(root)
    if what == "rss":
        rows = [(stat(pid), rss_kib(pid)) for pid in pids]
        print(sum(kib for _, kib in rows))
        for info, kib in rows:
            if info:
                print(info[0], kib)
    elif what == "cpu":
        print(sum((stat(pid) or ("", 0, 0))[2] for pid in pids) * 1000 // TICKS)
    elif what == "count":
        print(len(pids) - 1)
    else:
        sys.exit(f"tree.py: unknown measure {what!r} (rss, cpu or count)")


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        # `rss … | head -n1` takes the total and closes the pipe: the rest is not wanted, and
        # the flush at exit must not fail on it either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
