#!/usr/bin/env python3
"""include-graph.py - egret's module graph from user/'s #include lines.

    tools/include-graph.py [--cycles] [--layers]

A module is a .c with its .h ("dns/proxy"); a private "X_impl.h" belongs
to module X (the struct the module's own .c files share). Prints every include cycle
between modules (--cycles, the default) and every include that breaks the
folder layering of docs/ARCHITECTURE.md, "Source map" (--layers). Exit 1
if it found any.
"""
import glob, os, re, sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'user')
# A folder may include its own headers and those of the folders listed.
LAYERS = {
    'lib': [],
    'git': ['lib'],
    'launch': ['lib', 'git'],
    'policy': ['lib'],
    'dns': ['lib', 'policy', 'enforce'],
    'enforce': ['lib', 'policy'],
    'requests': ['lib', 'policy', 'dns'],
    'observe': ['lib', 'policy', 'dns', 'enforce', 'requests'],
    'attempt': ['lib', 'git', 'launch', 'policy', 'dns', 'enforce', 'requests', 'observe'],
    'daemon': ['lib', 'git', 'launch', 'policy', 'dns', 'enforce', 'requests', 'observe',
               'attempt'],
    'cmd': ['lib', 'git', 'launch', 'policy', 'dns', 'enforce', 'requests', 'observe',
            'attempt', 'daemon'],
    '.': ['lib', 'git', 'launch', 'policy', 'dns', 'enforce', 'requests', 'observe',
          'attempt', 'cmd'],
}
INC = re.compile(r'^#include "([a-z_]+/[a-z_]+)\.h"', re.M)


def owner(name):
    return name[:-len('_impl')] if name.endswith('_impl') else name


def modules():
    deps = {}
    for path in glob.glob(os.path.join(ROOT, '**', '*.[ch]'), recursive=True):
        rel = owner(os.path.relpath(path, ROOT)[:-2])
        found = (owner(d) for d in INC.findall(open(path).read()))
        deps.setdefault(rel, set()).update(found)
    for m in deps:
        deps[m].discard(m)
    return deps


def cycles(deps):
    found, seen = [], set()
    def walk(m, stack):
        for d in sorted(deps.get(m, ())):
            if d in stack:
                cyc = stack[stack.index(d):]
                key = frozenset(cyc)
                if key not in seen:
                    seen.add(key)
                    found.append(cyc + [d])
            elif d not in done:
                walk(d, stack + [d])
        done.add(m)
    done = set()
    for m in sorted(deps):
        if m not in done:
            walk(m, [m])
    return found


def layer_breaks(deps):
    bad = []
    for m, ds in sorted(deps.items()):
        folder = m.split('/')[0] if '/' in m else '.'
        for d in sorted(ds):
            to = d.split('/')[0]
            if to != folder and to not in LAYERS.get(folder, []):
                bad.append('%s -> %s' % (m, d))
    return bad


def main():
    deps = modules()
    bad = 0
    if '--layers' not in sys.argv or '--cycles' in sys.argv:
        for c in cycles(deps):
            print('cycle: ' + ' -> '.join(c))
            bad += 1
    if '--layers' in sys.argv:
        for b in layer_breaks(deps):
            print('layer: ' + b)
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
