#!/usr/bin/python3
"""The user docs against the tools and the tree:
  * every relative link and every backquoted repository path in README.md and
    docs/**/*.md names a file or folder that exists;
  * each tool's reference page (docs/tools/<tool>.md) holds the tool's --help
    as the tool prints it now, so every option is documented.

  scripts/check_docs.py BIN_DIR SOURCE_ROOT           check (exit 1 naming each problem)
  scripts/check_docs.py BIN_DIR SOURCE_ROOT --write   regenerate the pages' option blocks
"""
import glob
import os
import re
import subprocess
import sys

TOOLS = ["zoo-init", "zoo-stitch", "zoo-profile", "zoo-mts", "plan-solve", "plan-emit", "plan-run"]
BEGIN = "<!-- options: generated from --help by scripts/check_docs.py --write -->"
END = "<!-- end of options -->"
# Backquoted paths the docs name that are outputs or examples, not files of the repository.
PATH_PREFIXES = ("docs/", "schemas/", "scripts/", "testdata/", "bench/", "tests/", "libplan/", "passes/", "drivers/", "tools/")


def help_text(bin_dir, tool):
    out = subprocess.run([tool, "--help"], executable=os.path.join(bin_dir, tool), capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{tool} --help exited {out.returncode}: {out.stderr}")
    return out.stdout.rstrip() + "\n"


def block(text):
    return f"{BEGIN}\n```\n{text}```\n{END}"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    bin_dir, root = sys.argv[1], sys.argv[2]
    write = "--write" in sys.argv[3:]
    problems = []
    for tool in TOOLS:
        page = os.path.join(root, "docs", "tools", tool + ".md")
        if not os.path.isfile(page):
            problems.append(f"{page}: missing (a reference page per tool)")
            continue
        text = open(page).read()
        if BEGIN not in text or END not in text:
            problems.append(f"{page}: no generated options block ({BEGIN} ... {END})")
            continue
        start, end = text.index(BEGIN), text.index(END) + len(END)
        want = block(help_text(bin_dir, tool))
        if text[start:end] != want:
            if write:
                open(page, "w").write(text[:start] + want + text[end:])
            else:
                problems.append(f"{page}: its options differ from `{tool} --help`: run scripts/check_docs.py "
                                f"BIN_DIR SOURCE_ROOT --write")
    pages = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
    for page in pages:
        text = open(page).read()
        here = os.path.dirname(page)
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if re.match(r"[a-z]+://", target):
                continue
            if not os.path.exists(os.path.normpath(os.path.join(here, target))):
                problems.append(f"{os.path.relpath(page, root)}: link to {target}: no such file")
        for path in re.findall(r"`([A-Za-z0-9_./-]+)`", text):
            if path.startswith(PATH_PREFIXES) and not os.path.exists(os.path.join(root, path.rstrip("/"))):
                problems.append(f"{os.path.relpath(page, root)}: `{path}`: no such file in the repository")
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print(f"{len(pages)} pages: links and repository paths resolve; {len(TOOLS)} tool pages hold their --help")


if __name__ == "__main__":
    main()
