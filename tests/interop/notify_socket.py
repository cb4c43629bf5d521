#!/usr/bin/env python3
"""Stands in for systemd's $NOTIFY_SOCKET: binds an AF_UNIX datagram socket at argv[1] and prints each
datagram it receives as one JSON line (a string) on standard output, until killed."""
import json
import os
import socket
import sys

path = sys.argv[1]
if os.path.exists(path):
    os.unlink(path)
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(path)
print(json.dumps("BOUND"), flush=True)
while True:
    data = sock.recv(65536)
    print(json.dumps(data.decode("utf-8", "replace")), flush=True)
