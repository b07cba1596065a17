#!/usr/bin/env python3
"""Checks that README's sample output still has the shape of what it shows.

  python3 deploy/check-readme-output.py README.md LOG

README.md marks a fenced block with the line
`<!-- sample output: deploy/quickstart.sh -->` just above it. Each line of
that block must appear in LOG (what deploy/quickstart.sh printed), in the
same order, once numbers, the device name and file paths are set aside:
a changed message, a dropped or renamed line fails with the README line
that no longer matches, so the sample cannot go stale. Exit 0 when all
match, 1 when one does not (the line and the log's nearest lines named),
2 for bad input (no marked block, a file missing).
"""
import difflib
import re
import sys

MARKER = "<!-- sample output: deploy/quickstart.sh -->"


def shape(line):
    """The line with what varies from run to run set aside."""
    line = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", line).strip()
    line = re.sub(r"\S*/(\S+\.onnx)", r"\1", line)  # a model's path
    line = re.sub(r"\bon [\w.-]+(,|$)", r"on DEVICE\1", line)
    line = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "#", line)
    return re.sub(r"\s+", " ", line)


def sample_block(readme):
    lines = readme.splitlines()
    for i, line in enumerate(lines):
        if line.strip() != MARKER:
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            raise ValueError(f"the line after {MARKER!r} must open a fence")
        block = []
        for body in lines[i + 2:]:
            if body.startswith("```"):
                return block
            block.append(body)
        raise ValueError(f"the block after {MARKER!r} is not closed")
    raise ValueError(f"no line {MARKER!r} marks a sample block")


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            block = sample_block(f.read())
        with open(argv[2], encoding="utf-8", errors="replace") as f:
            log = [shape(l) for l in re.split(r"[\r\n]", f.read()) if l.strip()]
    except (OSError, ValueError) as e:
        print(f"check-readme-output: {e}", file=sys.stderr)
        return 2
    at = 0
    for line in block:
        want = shape(line)
        try:
            at = log.index(want, at) + 1
        except ValueError:
            near = difflib.get_close_matches(want, log, n=2, cutoff=0.5)
            print(f"check-readme-output: {argv[1]}'s sample line\n  {line}\n"
                  f"is not in {argv[2]} (after the lines matched before it); "
                  "nearest there:\n  " + ("\n  ".join(near) or "(none)") +
                  f"\nupdate the block under {MARKER!r} from a real run",
                  file=sys.stderr)
            return 1
    print(f"check-readme-output: the {len(block)} sample lines of {argv[1]} "
          f"match {argv[2]}'s shape")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
