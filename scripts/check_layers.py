#!/usr/bin/env python3
"""Checks that every #include in the stage folders points to the same or an
earlier stage of the flow.

The stage order is the one list ZOOPLAN_STAGES in the root CMakeLists.txt
(`set(ZOOPLAN_STAGES ...)`); a file belongs to the stage whose folder is the
longest prefix of its path. An include of a project file (a path under one of
the stage folders, or a generated header named in ZOOPLAN_GENERATED) that sits
in a later stage, or in no stage at all, is reported as
  FILE:LINE: includes PATH (stage B, after A)
and the exit status is 1.

usage: check_layers.py [SOURCE_ROOT]   (default: the parent of this script's folder)
"""
import os
import re
import sys


def cmake_list(text, name):
    m = re.search(r"set\(\s*" + name + r"\b(.*?)\)", text, re.S)
    if not m:
        return None
    body = re.sub(r"#[^\n]*", "", m.group(1))
    return body.split()


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cmake = os.path.join(root, "CMakeLists.txt")
    text = open(cmake).read()
    stages = cmake_list(text, "ZOOPLAN_STAGES")
    if not stages:
        print(f"{cmake}: no set(ZOOPLAN_STAGES ...)")
        return 2
    order = {s: i for i, s in enumerate(stages)}
    # Generated headers: "PREFIX=STAGE" pairs (e.g. schemas/=libplan/artifacts).
    generated = {}
    for pair in cmake_list(text, "ZOOPLAN_GENERATED") or []:
        prefix, stage = pair.split("=", 1)
        generated[prefix] = stage

    def stage_of(path):
        best = None
        for s in stages:
            if (path == s or path.startswith(s + "/")) and (best is None or len(s) > len(best)):
                best = s
        if best is None:
            for prefix, s in generated.items():
                if path.startswith(prefix):
                    return s
        return best

    tops = {s.split("/")[0] for s in stages} | {p.split("/")[0] for p in generated}
    include = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
    problems = []
    files = 0
    for stage in stages:
        base = os.path.join(root, stage)
        if not os.path.isdir(base):
            problems.append(f"{stage}: stage folder named in CMakeLists.txt does not exist")
            continue
        for dirpath, _, names in os.walk(base):
            for name in sorted(names):
                if not name.endswith((".h", ".cpp", ".def", ".inc")):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                own = stage_of(path)
                if own != stage:
                    continue  # a nested stage checks it
                files += 1
                for lineno, line in enumerate(open(os.path.join(root, path), errors="replace"), 1):
                    m = include.match(line)
                    if not m:
                        continue
                    target = m.group(1)
                    if target.split("/")[0] not in tops:
                        continue  # same-folder or third-party include
                    ts = stage_of(target)
                    if ts is None:
                        problems.append(f"{path}:{lineno}: includes {target}, which is in no stage of ZOOPLAN_STAGES")
                    elif order[ts] > order[own]:
                        problems.append(f"{path}:{lineno}: includes {target} (stage {ts}, after {own})")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) against the stage order in {cmake}")
        return 1
    print(f"{files} files in {len(stages)} stages: every include points to the same or an earlier stage")
    return 0


if __name__ == "__main__":
    sys.exit(main())
