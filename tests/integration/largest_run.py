#!/usr/bin/python3
"""largest_run.py SOCKET CWD refused|served - send egretd the largest RUN
the wire admits (docs/WIRE.md: 1024 ARGV, 1024 ENV, 64 ALLOW, 128 OPTION,
REPO, AUDIT, PTY), raw: egret-client stops earlier. With "served" the
OPTIONs are as many as egret run takes with a cache; with "refused" more.
Prints each answer (STARTED ID, ERROR TEXT, EXIT STATUS); exit 0 once an
EXIT came, 3 when egretd closed without one."""
import socket
import struct
import sys

sock_path, cwd, kind = sys.argv[1], sys.argv[2], sys.argv[3]


def field(tag, v=b''):
    return struct.pack('>HH', tag, len(v)) + v


def host(i):
    n = 255 - len(':443')
    h = bytearray(b'a' * n)
    h[0:3] = b'h%02d' % i
    for dot in range(63, n, 64):
        h[dot] = ord('.')
    return bytes(h) + b':443'


body = b''.join(field(1, b'true' if i == 0 else b'argument-%05d' % i) for i in range(1024))
body += b''.join(field(2, b'V%04d=x' % i) for i in range(1024))
body += field(3, cwd.encode())
body += field(4, b'r' * 5 + b'/' + b'r' * 121)
body += b''.join(field(5, host(i)) for i in range(64))
body += field(6) + field(7)
if kind == 'served':
    opts = ([b'setenv=S%03d=v' % i for i in range(62)] + [b'pass-env=P%03d' % i for i in range(64)] +
            [b'umask=0022', b'pty-size=100x30'])
else:
    opts = [(b'setenv=S%03d=v' if i % 2 else b'pass-env=P%03d') % i for i in range(128)]
assert len(opts) == 128
body += b''.join(field(12, o) for o in opts)
msg = b'EGRT' + struct.pack('>HHI', 1, 1, len(body)) + body
assert len(msg) <= 65536, len(msg)

s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sock_path)
socket.send_fds(s, [msg], [0, 1, 2])
while True:
    b = s.recv(65536)
    if not b:
        print('closed')
        sys.exit(3)
    typ = struct.unpack('>H', b[6:8])[0]
    tag, ln = struct.unpack('>HH', b[12:16]) if len(b) >= 16 else (0, 0)
    v = b[16:16 + ln]
    if typ == 4:
        print('STARTED', v.decode())
    elif typ == 6:
        print('ERROR', v.decode(errors='replace').strip())
    elif typ == 5:
        print('EXIT', struct.unpack('>I', v)[0])
        sys.exit(0)
