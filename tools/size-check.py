#!/usr/bin/env python3
"""size-check.py - the sizes the style keeps, checked (STYLE.md: give a
feature a seam instead of growing the nearest function or file).

    tools/size-check.py [--report]

Fails (exit 1), naming each, on a source file of user/, bpf/ or include/
over FILE_MAX lines, or a function over FUNC_MAX lines, unless
tools/size-allow.txt names it with its reason ("PATH" for a file,
"PATH:FUNCTION" for a function; a line each, the reason after " - ").
An allowlist line that names nothing over its limit any more is an error
too: the list holds only what still needs it. --report prints every
function over REPORT_FUNC lines and file over REPORT_FILE lines, and
passes.

A function is what the style writes: its name and parameters ending a
line at column 0 of a .c or .h, its "{" alone at column 0 on the next
line, its "}" alone at column 0 at its end.
"""
import glob
import os
import re
import sys

FILE_MAX = 600
FUNC_MAX = 80
REPORT_FILE = 500
REPORT_FUNC = 70

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
ALLOW = os.path.join(ROOT, 'tools', 'size-allow.txt')
NAME = re.compile(r'^[A-Za-z_].*?\b([A-Za-z_][A-Za-z0-9_]*)\s*\(')


def sources():
    for pattern in ('user/**/*.[ch]', 'bpf/**/*.[ch]', 'include/*.h'):
        for path in glob.glob(os.path.join(ROOT, pattern), recursive=True):
            yield os.path.relpath(path, ROOT)


def functions(path, lines):
    """(name, first line, length) of each function of @lines."""
    head = None
    for i, line in enumerate(lines):
        if line.rstrip() == '{' and i > 0 and head is None:
            # Back over the parameters' continuation lines to the one at
            # column 0 that holds the name and its "(".
            j = i - 1
            while j > 0 and lines[j][:1] in ('\t', ' '):
                j -= 1
            m = NAME.match(lines[j])
            if m and '(' in lines[j]:
                head = (m.group(1), j)
        elif line.startswith('}') and head is not None:
            yield head[0], head[1] + 1, i - head[1] + 1
            head = None


def main():
    report = '--report' in sys.argv
    allowed = {}
    if os.path.exists(ALLOW):
        for n, line in enumerate(open(ALLOW), 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            key, _, why = line.partition(' - ')
            if not why.strip():
                print('size-check: %s:%d: want "PATH[:FUNCTION] - reason"' % (ALLOW, n))
                sys.exit(1)
            allowed[key.strip()] = n
    over, used = [], set()
    for path in sorted(sources()):
        lines = open(os.path.join(ROOT, path), errors='replace').read().split('\n')
        nlines = len(lines) - (lines[-1] == '')
        if report and nlines > REPORT_FILE:
            print('file %s: %d lines' % (path, nlines))
        if nlines > FILE_MAX:
            if path in allowed:
                used.add(path)
            else:
                over.append('%s: %d lines (more than %d)' % (path, nlines, FILE_MAX))
        for name, first, length in functions(path, lines):
            key = '%s:%s' % (path, name)
            if report and length > REPORT_FUNC:
                print('function %s (line %d): %d lines' % (key, first, length))
            if length > FUNC_MAX:
                if key in allowed:
                    used.add(key)
                else:
                    over.append('%s (line %d): %d lines (more than %d)' %
                                (key, first, length, FUNC_MAX))
    for key, n in sorted(allowed.items(), key=lambda kv: kv[1]):
        if key not in used:
            over.append('%s:%d: %s is not over its limit any more: remove the line' %
                        (os.path.relpath(ALLOW, ROOT), n, key))
    for o in over:
        print('size-check: ' + o)
    if report:
        sys.exit(0)
    sys.exit(1 if over else 0)


if __name__ == '__main__':
    main()
