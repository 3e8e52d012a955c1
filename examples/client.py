#!/usr/bin/python3
"""examples/client.py: tell and ask the actors of an actord node from
Python, as actord-wire(7) specifies, with Debian's python3-zmq.

The node must list this client's public key in its node block:

    clients = ( { name = "py"; public_key = "...the .pub file..."; } );

Usage:

    client.py -e tcp://127.0.0.1:7400 -s a.key.pub -k py.key -n py \\
        ask /echo 1 hello
    client.py -e ... tell /counter 1 apples

A key pair comes from `actorctl keygen py.key` (py.key, py.key.pub).
ask prints the answer's payload and exits 0; an error answer prints its
code and text on stderr and exits 1; no answer within -t ms exits 2.
"""
import argparse
import os
import struct
import sys

import zmq

MAGIC = b"AW"
VERSION = 1
HELLO, WELCOME, PING, PONG, BATCH, ERROR = 1, 2, 3, 4, 5, 6
TELL, ASK, REPLY = 1, 2, 3
F_PATH, F_ERROR = 0x01, 0x02
NOBODY = 0xFFFFFFFF
HDR = struct.Struct("<2sBBI8x")           # magic, version, type, body length
MSG = struct.Struct("<BBHIIIIIQI")        # kind .. payload length: 36 bytes


def frame(ftype, body):
    return HDR.pack(MAGIC, VERSION, ftype, len(body)) + body


def hello(name, session):
    n = name.encode()
    return frame(HELLO, struct.pack("<QQIB", 0, session, 1 << 20, len(n)) + n)


def batch(kind, path, tag, corr, payload):
    p = path.encode()
    msg = MSG.pack(kind, F_PATH, len(p), tag, 0, 0, NOBODY, 0, corr,
                   len(payload)) + p + payload
    return frame(BATCH, struct.pack("<QI", 0, 1) + msg)


def parse(data):
    """(type, body) of a frame, checked as the node checks ours."""
    if len(data) < HDR.size:
        raise ValueError("short frame")
    magic, version, ftype, length = HDR.unpack_from(data)
    if magic != MAGIC or version != VERSION or length != len(data) - HDR.size:
        raise ValueError("bad header")
    return ftype, data[HDR.size:]


def replies(body):
    """The messages of a BATCH body: (kind, flags, tag, corr, payload)."""
    _, count = struct.unpack_from("<QI", body)
    off = 12
    for _ in range(count):
        kind, flags, plen, tag, _, _, _, _, corr, length = \
            MSG.unpack_from(body, off)
        off += MSG.size + plen
        yield kind, flags, tag, corr, body[off:off + length]
        off += length


def read_key(path):
    with open(path, "rb") as f:
        return f.read().strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-e", "--endpoint", required=True)
    ap.add_argument("-s", "--server-key", required=True,
                    help="the node's public key file")
    ap.add_argument("-k", "--key", required=True,
                    help="this client's secret key file")
    ap.add_argument("-n", "--name", required=True,
                    help="the name the node lists this key under")
    ap.add_argument("-t", "--timeout", type=int, default=5000, help="ms")
    ap.add_argument("verb", choices=["tell", "ask"])
    ap.add_argument("path")
    ap.add_argument("tag", type=lambda s: int(s, 0))
    ap.add_argument("data", nargs="?", default="")
    a = ap.parse_args()

    secret = read_key(a.key)
    ctx = zmq.Context()
    s = ctx.socket(zmq.DEALER)
    s.curve_serverkey = read_key(a.server_key)
    s.curve_secretkey = secret
    s.curve_publickey = zmq.curve_public(secret)
    s.linger = 0
    s.rcvtimeo = a.timeout
    s.connect(a.endpoint)
    try:
        s.send(hello(a.name, int.from_bytes(os.urandom(4), "little")))
        ftype, body = parse(s.recv())
        if ftype != WELCOME:
            sys.exit("client.py: no WELCOME: %r" % body[4:])
        corr = int.from_bytes(os.urandom(4), "little") + 1
        payload = a.data.encode()
        if a.verb == "tell":
            s.send(batch(TELL, a.path, a.tag, 0, payload))
            # A PING's PONG says the node has read the tell's frame.
            s.send(frame(PING, struct.pack("<Q", corr)))
            while parse(s.recv())[0] != PONG:
                pass
            return 0
        s.send(batch(ASK, a.path, a.tag, corr, payload))
        while True:
            ftype, body = parse(s.recv())
            if ftype == ERROR:
                code, = struct.unpack_from("<I", body)
                sys.exit("client.py: refused (%d): %s" % (code,
                         body[4:].decode(errors="replace")))
            if ftype != BATCH:
                continue
            for kind, flags, tag, rcorr, data in replies(body):
                if kind != REPLY or rcorr != corr:
                    continue
                if flags & F_ERROR:
                    code, = struct.unpack_from("<i", data)
                    text = data[4:].split(b"\0")[0].decode(errors="replace")
                    print("client.py: error %d: %s" % (code, text),
                          file=sys.stderr)
                    return 1
                sys.stdout.buffer.write(data)
                return 0
    except zmq.Again:
        print("client.py: no answer within %d ms" % a.timeout,
              file=sys.stderr)
        return 2
    finally:
        s.close()
        ctx.term()


if __name__ == "__main__":
    sys.exit(main())
