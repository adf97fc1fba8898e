#!/usr/bin/env python3
"""Fails when a file includes, or a target links, along an arrow that
tests/layers.txt does not allow, or when server/README.md's arrow table says
otherwise than layers.txt.

Usage: check_layers.py SRCDIR LINKS
  SRCDIR  the source tree
  LINKS   the link graph, one line per target: FOLDER TARGET LINKED...
          (tests/layers.cmake writes it at generate time; $<LINK_ONLY:x>
          counts as x)

An include is resolved as the compiler finds it: beside the including file,
else in any folder of the tree (every folder's library puts its folder on the
include path, and header names are unique). Headers found nowhere in the tree
are libraries' or generated ones; a folder allowed only libc may include only
the headers musl-gcc sees (without musl-gcc that part is not checked, and the
check says so). Exit status: 0 clean, 1 a violation, 2 bad usage.
"""
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def read_arrows(path):
    arrows = {}
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.split('#', 1)[0].split()
            if line:
                arrows[line[0]] = {x for x in line[1:] if x != '-'}
    return arrows


def readme_arrows(path):
    """The server's rows of README's table: | `folder/` | `a/`, `b/` |."""
    rows = {}
    if not os.path.exists(path):
        return rows
    with open(path, encoding='utf-8') as f:
        for line in f:
            m = re.match(r'\|\s*`([a-z_]+)/`\s*\|\s*([^|]*)\|\s*$', line)
            if m:
                uses = re.findall(r'`([a-z_.]+)/?`', m.group(2))
                rows['server/' + m.group(1)] = {u if u in ('storage', 'minder', 'client', 'proto')
                                                else 'server/' + u for u in uses}
    return rows


def folder_of(path, folders):
    best = None
    for folder in folders:
        if (path.startswith(folder + '/')) and (best is None or len(folder) > len(best)):
            best = folder
    return best


def libc_dirs():
    try:
        out = subprocess.run(['musl-gcc', '-E', '-Wp,-v', '-'], input='', capture_output=True,
                             text=True).stderr
    except OSError:
        return []
    return [l.strip() for l in out.splitlines() if l.startswith(' /')]


def main():
    if len(sys.argv) != 3:
        print('usage: check_layers.py SRCDIR LINKS', file=sys.stderr)
        return 2
    src, links = sys.argv[1], sys.argv[2]
    arrows_path = os.path.join(src, 'tests', 'layers.txt')
    try:
        arrows = read_arrows(arrows_path)
        link_lines = [l.split() for l in open(links, encoding='utf-8') if l.strip()]
    except OSError as e:
        print(f'check_layers: {e}', file=sys.stderr)
        return 2
    bad = []

    readme = readme_arrows(os.path.join(src, 'server', 'README.md'))
    for folder, uses in arrows.items():
        if folder.startswith('server/') and readme.get(folder) != uses:
            bad.append(f'server/README.md: the row of {folder[7:]}/ differs from tests/layers.txt')
    for folder in readme:
        if folder not in arrows:
            bad.append(f'server/README.md: {folder[7:]}/ is not in tests/layers.txt')

    files = []
    for root, dirs, names in os.walk(src):
        dirs[:] = [d for d in dirs if not d.startswith('.') and not d.startswith('build')]
        for name in names:
            if name.endswith(('.c', '.h')):
                files.append(os.path.relpath(os.path.join(root, name), src))
    by_name = {}
    for f in files:
        by_name.setdefault(os.path.basename(f), []).append(f)

    musl = libc_dirs()
    if not musl:
        print('check_layers: no musl-gcc: headers of folders allowed only libc are not checked')

    def allowed(layer, other):
        return other is None or other == layer or other in arrows[layer]

    for f in sorted(files):
        layer = folder_of(f, arrows)
        if layer is None:
            continue
        text = open(os.path.join(src, f), encoding='utf-8', errors='replace').read()
        for kind, name in INCLUDE.findall(text):
            beside = os.path.normpath(os.path.join(os.path.dirname(f), name))
            if kind == '"' and beside in files:
                found = [beside]
            else:
                found = by_name.get(os.path.basename(name), [])
                found = [p for p in found if p.endswith('/' + name) or p == name]
            if found:
                # tests/ may hold a header of the same name; a folder's own wins.
                if any(allowed(layer, folder_of(p, arrows)) for p in found
                       if folder_of(p, arrows) is not None):
                    continue
                owners = {folder_of(p, arrows) for p in found} - {None}
                if owners:
                    bad.append(f'{f}: includes {name} from {sorted(owners)[0]}/')
                continue
            if arrows[layer] == {'libc'}:
                if kind == '"' or (musl and not any(os.path.exists(os.path.join(d, name))
                                                    for d in musl)):
                    bad.append(f'{f}: includes {name}, not libc or {layer}/')

    owner = {line[1]: line[0] for line in link_lines if len(line) >= 2}
    for line in link_lines:
        if len(line) < 2:
            continue
        folder, target = line[0], line[1]
        layer = folder if folder in arrows else folder_of(folder + '/x', arrows)
        if layer is None:
            continue
        for dep in line[2:]:
            if dep.startswith('::@'):
                continue  # CMake's marker of a link set from another folder
            m = re.fullmatch(r'\$<LINK_ONLY:(.*)>', dep)
            dep = m.group(1) if m else dep
            if dep in owner:
                dep_folder = owner[dep]
                if dep_folder == '.':
                    continue  # build settings (cs_warnings)
                other = dep_folder if dep_folder in arrows else folder_of(dep_folder + '/x', arrows)
                if other is None:
                    other = dep_folder
                if other != layer and other not in arrows[layer]:
                    bad.append(f'{folder}/CMakeLists.txt: {target} links {dep} from {dep_folder}/')
            elif arrows[layer] == {'libc'}:
                bad.append(f'{folder}/CMakeLists.txt: {target} links {dep}, not libc or {layer}/')

    bad = sorted(set(bad))
    for b in bad:
        print(f'check_layers: {b}', file=sys.stderr)
    if bad:
        print(f'check_layers: {len(bad)} crossings of a forbidden boundary', file=sys.stderr)
        return 1
    print(f'check_layers: {len(files)} files and {len(link_lines)} targets checked against '
          f'{len(arrows)} folders\' arrows: no crossings')
    return 0


if __name__ == '__main__':
    sys.exit(main())
