#!/usr/bin/env python3
"""The ceiling for bench/network.js: the least a TCP relay can do on this machine.

A relay with no policy, no HTTP parsing and no event loop: one blocking thread per direction moving
bytes with splice(2) through a pipe, exactly what the proxy's tunnels do once a CONNECT is allowed.
Whatever a download through it loses against direct is the cost of the second loopback hop itself
(the kernel's work, and what it does to the receiver), which no proxy design can win back.

    bare-relay.py LISTEN_HOST UPSTREAM_HOST UPSTREAM_PORT
Prints the port it listens on, then relays every connection to the upstream until killed.
"""
import fcntl
import os
import socket
import sys
import threading

F_SETPIPE_SZ = 1031
PIPE_BYTES = 1 << 20  # the proxy's own pipe size (src/network/proxy/splice.rs)


def pump(src, dst):
    r, w = os.pipe()
    try:
        fcntl.fcntl(w, F_SETPIPE_SZ, PIPE_BYTES)
        while True:
            n = os.splice(src.fileno(), w, PIPE_BYTES)
            if n == 0:
                break
            while n:
                n -= os.splice(r, dst.fileno(), n)
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    finally:
        os.close(r)
        os.close(w)


def main():
    listen_host, up_host, up_port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ls = socket.socket()
    ls.bind((listen_host, 0))
    ls.listen(16)
    print(ls.getsockname()[1], flush=True)
    while True:
        client, _ = ls.accept()
        upstream = socket.create_connection((up_host, up_port))
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=pump, args=(a, b), daemon=True).start()


if __name__ == "__main__":
    main()
