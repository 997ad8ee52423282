#!/usr/bin/env python3
"""Checks that the tests mirror the tree: every stage folder of ZOOPLAN_STAGES
(CMakeLists.txt) has its tests in tests/<folder without libplan/, passes/ or
drivers/> (libplan/sim/queries -> tests/sim/queries), with a CMakeLists.txt that
builds them; no test folder is named after a stage that does not exist; and the
layout page (docs/layout.md) names every stage folder (as FOLDER/, without
libplan/, passes/ or drivers/), so the map a newcomer reads matches the tree.

  scripts/check_test_layout.py [SOURCE_ROOT]
"""
import os
import re
import sys

# Stages whose tests live elsewhere, with the reason.
ELSEWHERE = {
    "libplan/plan": "the plan model is headers only; its reader and writer are tested in tests/artifacts",
    "tools": "the tools are tested end to end in tests/cli",
}
# Test folders that are not a stage's.
# onnx_conformance: ONNX's backend node tests, run through the runtime.
NOT_STAGES = {"cli", "common", "onnx_conformance", "ort", "ort_models", "structure", "sim"}


def stages_of(root):
    text = open(os.path.join(root, "CMakeLists.txt")).read()
    m = re.search(r"set\(\s*ZOOPLAN_STAGES\b(.*?)\)", text, re.S)
    if not m:
        sys.exit("CMakeLists.txt: no set(ZOOPLAN_STAGES ...)")
    return re.sub(r"#[^\n]*", "", m.group(1)).split()


def mirrored(stage):
    for prefix in ("libplan/", "passes/", "drivers/"):
        if stage.startswith(prefix):
            return stage[len(prefix):]
    return stage


def readme_layout(root):
    """The code block under '## Layout' in docs/layout.md ('' when there is none)."""
    path = os.path.join(root, "docs", "layout.md")
    if not os.path.isfile(path):
        return ""
    m = re.search(r"^## Layout\n.*?```\n(.*?)```", open(path).read(), re.S | re.M)
    return m.group(1) if m else ""


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    stages = stages_of(root)
    problems = []
    expected = set()
    for stage in stages:
        if stage in ELSEWHERE:
            continue
        folder = mirrored(stage)
        expected.add(folder)
        if not os.path.isfile(os.path.join(root, "tests", folder, "CMakeLists.txt")):
            problems.append(f"{stage}: no tests/{folder}/CMakeLists.txt")
    for entry in sorted(os.listdir(os.path.join(root, "tests"))):
        path = os.path.join(root, "tests", entry)
        if os.path.isdir(path) and entry not in NOT_STAGES and entry not in expected:
            problems.append(f"tests/{entry}: no stage folder of ZOOPLAN_STAGES mirrors it")
    layout = readme_layout(root)
    for stage in stages:
        if not re.search(r"(^|[\s(/])" + re.escape(mirrored(stage)) + "/", layout):
            problems.append(f"{stage}: docs/layout.md does not name {mirrored(stage)}/")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"{len(expected)} stage folders, each with its tests in tests/<folder>; docs/layout.md names all {len(stages)} stages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
