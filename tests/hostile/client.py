"""A raw opc.tcp client over uabin: HEL/ACK, OpenSecureChannel (SecurityPolicy None), anonymous session,
then requests. It keeps the sequence numbers and request ids itself so a test can also break them."""
import socket
import struct
import time

import uabin
from uabin import Decoder


class ErrReceived(Exception):
    """The server sent ERR (Part 6 §7.1.2.5): `status` is its error code."""

    def __init__(self, status, reason):
        super().__init__("ERR %s: %s" % (uabin.status_name(status), reason))
        self.status = status
        self.reason = reason


class Closed(Exception):
    """The server closed the connection without an ERR."""


class Client:
    def __init__(self, port, host="127.0.0.1", source=None, timeout=10.0):
        self.url = "opc.tcp://%s:%d" % (host, port)
        self.sock = socket.create_connection((host, port), timeout=timeout,
                                             source_address=(source, 0) if source else None)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.rx = bytearray()
        self.channel_id = 0
        self.token_id = 0
        self.sequence = 0
        self.request_id = 0
        self.auth_token = (0, 0)

    # --- bytes ---
    def send(self, data):
        self.sock.sendall(data)

    def recv_chunk(self, timeout=10.0):
        """One chunk: (type, chunk type, whole chunk bytes). ERR raises ErrReceived, EOF raises Closed."""
        deadline = time.monotonic() + timeout
        while True:
            if len(self.rx) >= 8:
                size = struct.unpack_from("<I", self.rx, 4)[0]
                if len(self.rx) >= size:
                    chunk = bytes(self.rx[:size])
                    del self.rx[:size]
                    kind = chunk[:3]
                    if kind == b"ERR":
                        d = Decoder(chunk, 8)
                        status = d.u32()
                        reason = d.string()
                        raise ErrReceived(status, reason)
                    return kind, chunk[3:4], chunk
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("no chunk within %.1f s" % timeout)
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(1 << 20)
            except ConnectionResetError:
                data = b""
            if not data:
                raise Closed("the server closed the connection")
            self.rx += data

    def wait_closed(self, timeout):
        """(seconds, ERR status or None for a bare close) when the server ends the connection; raises
        socket.timeout when it does not within `timeout`."""
        start = time.monotonic()
        try:
            while True:
                self.recv_chunk(timeout - (time.monotonic() - start))
        except ErrReceived as e:
            return time.monotonic() - start, e.status
        except Closed:
            return time.monotonic() - start, None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    # --- handshake ---
    def hello(self, **kw):
        self.send(uabin.hello(self.url, **kw))
        kind, _, chunk = self.recv_chunk()
        assert kind == b"ACK", kind
        d = Decoder(chunk, 8)
        d.u32()
        self.receive_buffer = d.u32()  # the server's: the largest chunk it accepts from us
        self.send_buffer = d.u32()
        self.max_message = d.u32()
        self.max_chunks = d.u32()

    def open(self):
        self.sequence += 1
        self.request_id += 1
        self.send(uabin.open_request(self.sequence, self.request_id))
        kind, _, chunk = self.recv_chunk()
        assert kind == b"OPN", kind
        d = Decoder(chunk, 8)
        d.u32()
        d.string()
        d.bytestring()
        d.bytestring()
        d.u32()
        d.u32()
        assert d.nodeid() == (0, uabin.OPEN_SECURE_CHANNEL_RESPONSE)
        _, result = d.response_header()
        assert result == uabin.GOOD, uabin.status_name(result)
        d.u32()
        self.channel_id = d.u32()
        self.token_id = d.u32()

    def connect(self):
        self.hello()
        self.open()
        return self

    # --- messages ---
    def next_ids(self):
        self.sequence += 1
        self.request_id += 1
        return self.sequence, self.request_id

    def send_request(self, body):
        """Sends a request in as many chunks as the negotiated buffer needs; returns its request id."""
        room = self.receive_buffer - 24  # the server's receive buffer bounds each chunk we send
        pieces = [body[i:i + room] for i in range(0, len(body), room)] or [b""]
        self.request_id += 1
        for i, piece in enumerate(pieces):
            self.sequence += 1
            last = i == len(pieces) - 1
            self.send(uabin.symmetric(self.channel_id, self.token_id, self.sequence, self.request_id, piece,
                                      b"F" if last else b"C"))
        return self.request_id

    def recv_response(self, timeout=10.0):
        """The next whole response: (type id, Decoder positioned after the type NodeId)."""
        parts = []
        while True:
            kind, chunk_type, chunk = self.recv_chunk(timeout)
            if kind != b"MSG":
                continue
            parts.append(chunk[24:])
            if chunk_type == b"F":
                break
            if chunk_type == b"A":
                parts = []
        d = Decoder(b"".join(parts))
        ns, ident = d.nodeid()
        return ident, d

    def call(self, body, timeout=10.0):
        """Request/response: (type id, service result, Decoder after the ResponseHeader)."""
        self.send_request(body)
        ident, d = self.recv_response(timeout)
        _, result = d.response_header()
        return ident, result, d

    def create_session(self):
        ident, result, d = self.call(uabin.create_session_request(url=self.url))
        if ident == uabin.SERVICE_FAULT or result != uabin.GOOD:
            return result
        d.nodeid()  # sessionId
        self.auth_token = d.nodeid()
        return result

    def activate_session(self):
        ident, result, d = self.call(uabin.activate_session_request(self.auth_token))
        return result

    def session(self):
        self.connect()
        result = self.create_session()
        assert result == uabin.GOOD, "CreateSession: " + uabin.status_name(result)
        result = self.activate_session()
        assert result == uabin.GOOD, "ActivateSession: " + uabin.status_name(result)
        return self

    def read_current_time(self, timeout=10.0):
        """Server_ServerStatus_CurrentTime (i=2258): (status, value)."""
        ident, result, d = self.call(uabin.read_request(self.auth_token, [(0, 2258)]), timeout)
        if ident != uabin.READ_RESPONSE or result != uabin.GOOD:
            return result, None
        values = d.array(d.data_value)
        return values[0]["status"], values[0].get("value")
