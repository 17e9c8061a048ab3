#!/usr/bin/env python3
"""include-graph.py - egret's module graph from user/'s #include lines.

    tools/include-graph.py [--cycles] [--layers] [--unused]

A module is a .c with its .h ("dns/proxy"); a private "X_impl.h" belongs
to module X (the struct the module's own .c files share). Prints every include cycle
between modules (--cycles, the default) and every include that breaks the
folder layering of docs/ARCHITECTURE.md, "Source map" (--layers), and every
include of egret's own headers whose names the file never uses (--unused).
Exit 1 if it found any.
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


# What a header declares: functions, macros, types, tags, enumerators.
DECL = [
    re.compile(r'^#define\s+([A-Za-z_][A-Za-z0-9_]*)', re.M),
    re.compile(r'\b(?:struct|union|enum)\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{', re.M),
    re.compile(r'^(?:struct|union)\s+([A-Za-z_][A-Za-z0-9_]*)\s*;', re.M),
    re.compile(r'^[A-Za-z_][^;(){}=]*?\b\**([A-Za-z_][A-Za-z0-9_]*)\s*\(', re.M),
    re.compile(r'^typedef\b[^;]*?\b([A-Za-z_][A-Za-z0-9_]*)\s*(?:\)\s*\([^;]*)?;', re.M),
    re.compile(r'^extern\b[^;]*?\b([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[[^\]]*\])?;', re.M),
    re.compile(r'^\s+([A-Z][A-Z0-9_]+)\s*(?:=[^,\n]*)?,?\s*(?:/\*.*)?$', re.M),
]
WORD = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
# Comments, with the strings and characters that could hold "/*" or "//"
# ("OWNER/*"): each string is kept, each comment becomes a space.
LEXEME = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', re.S)

STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')


def uncomment(text):
    return LEXEME.sub(lambda m: m.group(0) if m.group(0)[0] in '"\'' else ' ', text)


def declared(header):
    text = uncomment(open(header).read())
    names = set()
    for rx in DECL:
        names.update(rx.findall(text))
    return names - {'if', 'while', 'for', 'switch', 'return', 'sizeof'}


def unused_includes():
    """Includes of egret's own headers whose names the file never uses
    (by name: a heuristic; an include that only a macro's expansion needs
    says so with the include-what-you-use mark "IWYU pragma: keep")."""
    found = []
    for path in sorted(glob.glob(os.path.join(ROOT, '**', '*.[ch]'), recursive=True)):
        rel = os.path.relpath(path, ROOT)
        raw = text = open(path).read()
        # A table included whole (run_options.def) is the file's text too.
        for d in re.findall(r'^#include "([a-z_]+/[a-z_]+\.def)"', text, re.M):
            text += open(os.path.join(ROOT, d)).read()
        text = uncomment(text)
        body = STRING.sub('""', INC.sub(' ', text))
        used = set(WORD.findall(body))
        keep = set(re.findall(r'^#include "([a-z_/]+)\.h".*IWYU pragma: keep', raw, re.M))
        for inc in INC.findall(text):
            if inc in keep:	# used by what its macros expand to
                continue
            header = os.path.join(ROOT, inc + '.h')
            if not os.path.exists(header) or rel == inc + '.h':
                continue
            if rel[:-2] == inc:	# a module's own header
                continue
            names = declared(header)
            if names and not names & used:
                found.append('%s includes %s.h, and uses none of its names' % (rel, inc))
    return found


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
    if '--unused' in sys.argv:
        for u in unused_includes():
            print('unused: ' + u)
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
