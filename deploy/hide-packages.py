#!/usr/bin/env python3
"""Hides the development files of every package outside a keep set.

A Debian system (or an arm64 rootfs) with only some of its packages in
sight: the KEEP packages and what they depend on (Depends, Pre-Depends,
recursively, as dpkg's database says; a virtual package through the
installed packages that provide it) stay; of every other installed package,
the files a build could find are hidden:

  /usr/include/...                      headers
  /usr/{lib,lib/<triplet>,share}/{cmake,pkgconfig}/...
                                        CMake package and pkg-config files
  /usr/lib/<triplet>/lib*.so, *.a       what -l<name> links (directly in
  /usr/lib/lib*.so, *.a                 the linker's directories)

Runtime libraries (lib*.so.N), programs and data stay, as do files that
belong to no package or also to a kept one.

  hide-packages.py [--root DIR] --keep PKG... [--whiteouts UPPER]
                   [--closure FILE] [--report FILE]

--whiteouts UPPER: writes an overlayfs whiteout (a character device 0/0)
for each hidden file into UPPER, at its path below ROOT/usr, so that
`mount -t overlay -o lowerdir=ROOT/usr,upperdir=UPPER,...` shows ROOT/usr
without them (root, or a user namespace on Linux 5.11 or later).
--closure FILE: the kept packages, one a line. --report FILE: the hidden
packages with the number of files hidden, one a line. Prints a summary on
stderr. Exits 2 naming a KEEP package that is not installed.

deploy/check-agent-only.sh (CI) and deploy/arm64/build-agent.sh use it to
build the agent-only component (cmake/Components.cmake) with the other
components' libraries absent.
"""

import argparse
import glob
import os
import re
import stat
import sys


def parse_status(root):
    """Installed packages: name -> list of stanzas (one per architecture)."""
    installed = {}
    path = os.path.join(root, "var/lib/dpkg/status")
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    for block in text.split("\n\n"):
        fields = {}
        key = None
        for line in block.splitlines():
            if line.startswith((" ", "\t")) and key:
                fields[key] += " " + line.strip()
                continue
            key, _, value = line.partition(":")
            fields[key] = value.strip()
        if not fields.get("Package"):
            continue
        if not fields.get("Status", "").endswith(" installed"):
            continue
        installed.setdefault(fields["Package"], []).append(fields)
    return installed


def relation_names(field):
    """'a (>= 1) | b:any, c' -> [['a', 'b'], ['c']]."""
    groups = []
    for group in field.split(","):
        names = []
        for alt in group.split("|"):
            name = re.sub(r"\(.*?\)|\[.*?\]|<.*?>", "", alt).strip()
            name = name.split(":")[0].strip()
            if name:
                names.append(name)
        if names:
            groups.append(names)
    return groups


def closure(installed, keep):
    providers = {}
    for name, stanzas in installed.items():
        for st in stanzas:
            for group in relation_names(st.get("Provides", "")):
                for virtual in group:
                    providers.setdefault(virtual, set()).add(name)
    seen = set()
    todo = list(keep)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for st in installed.get(name, []):
            for field in ("Pre-Depends", "Depends"):
                for group in relation_names(st.get(field, "")):
                    for alt in group:
                        if alt in installed:
                            todo.append(alt)
                        for real in providers.get(alt, ()):
                            todo.append(real)
    return seen


def package_files(root, name):
    files = []
    info = os.path.join(root, "var/lib/dpkg/info")
    for lst in glob.glob(os.path.join(info, glob.escape(name) + ".list")) + \
            glob.glob(os.path.join(info, glob.escape(name) + ":*.list")):
        with open(lst, encoding="utf-8", errors="replace") as f:
            files.extend(line.rstrip("\n") for line in f if line.strip())
    return files


def canonical(root, path):
    """/lib/x -> /usr/lib/x where /lib is a link to usr/lib (merged /usr)."""
    for top in ("/lib", "/lib64", "/bin", "/sbin", "/lib32", "/libx32"):
        if path == top or path.startswith(top + "/"):
            link = os.path.join(root, top.lstrip("/"))
            if os.path.islink(link) and \
                    os.readlink(link).lstrip("/") == "usr" + top:
                return "/usr" + path
    return path


DEV = re.compile(
    r"^/usr/include/"
    r"|^/usr/(lib(/[^/]+)?|share)/(cmake|pkgconfig)/"
    r"|^/usr/lib(/[^/]+)?/lib[^/]*\.(so|a)$")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default="/")
    ap.add_argument("--keep", nargs="+", required=True)
    ap.add_argument("--whiteouts")
    ap.add_argument("--closure")
    ap.add_argument("--report")
    args = ap.parse_args()
    root = os.path.abspath(args.root)

    installed = parse_status(root)
    missing = [k for k in args.keep if k not in installed]
    if missing:
        print("hide-packages: not installed in %s: %s" % (root, " ".join(missing)),
              file=sys.stderr)
        return 2
    kept = closure(installed, args.keep)

    kept_paths = set()
    for name in kept:
        kept_paths.update(canonical(root, p) for p in package_files(root, name))

    hidden = {}
    for name in sorted(set(installed) - kept):
        for p in package_files(root, name):
            p = canonical(root, p)
            if not DEV.search(p) or p in kept_paths:
                continue
            full = os.path.join(root, p.lstrip("/"))
            if not os.path.lexists(full) or \
                    (os.path.isdir(full) and not os.path.islink(full)):
                continue
            hidden.setdefault(name, set()).add(p)

    if args.whiteouts:
        for paths in hidden.values():
            for p in paths:
                rel = os.path.relpath(p, "/usr")
                out = os.path.join(args.whiteouts, rel)
                os.makedirs(os.path.dirname(out), exist_ok=True)
                if not os.path.lexists(out):
                    os.mknod(out, stat.S_IFCHR | 0o600, os.makedev(0, 0))
    if args.closure:
        with open(args.closure, "w") as f:
            f.write("".join(n + "\n" for n in sorted(kept)))
    if args.report:
        with open(args.report, "w") as f:
            f.write("".join("%s %d\n" % (n, len(p)) for n, p in sorted(hidden.items())))
    print("hide-packages: %d packages kept (%s and what they depend on); "
          "%d files of %d other packages hidden"
          % (len(kept), ", ".join(args.keep), sum(len(p) for p in hidden.values()),
             len(hidden)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
