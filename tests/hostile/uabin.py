"""A small OPC UA Binary encoder/decoder (Part 6 §5.2) and UA TCP framing (Part 6 §7.1), enough for a
hostile client: it builds valid messages and, on purpose, invalid ones. Standard library only."""
import struct
import time

# Binary encoding ids of the messages used here (Part 6 Annex A, NodeIds.csv: <Type>_Encoding_DefaultBinary).
OPEN_SECURE_CHANNEL_REQUEST = 446
OPEN_SECURE_CHANNEL_RESPONSE = 449
SERVICE_FAULT = 397
CREATE_SESSION_REQUEST = 461
CREATE_SESSION_RESPONSE = 464
ACTIVATE_SESSION_REQUEST = 467
ACTIVATE_SESSION_RESPONSE = 470
CLOSE_SESSION_REQUEST = 473
BROWSE_REQUEST = 527
BROWSE_RESPONSE = 530
TRANSLATE_REQUEST = 554
TRANSLATE_RESPONSE = 557
READ_REQUEST = 631
READ_RESPONSE = 634
WRITE_REQUEST = 673
WRITE_RESPONSE = 676
ANONYMOUS_IDENTITY_TOKEN = 321

# Status codes (Part 4 §7.34, Part 6 Annex A StatusCode.csv).
GOOD = 0x00000000
STATUS = {
    "BadDecodingError": 0x80070000,
    "BadEncodingLimitsExceeded": 0x80080000,
    "BadRequestTooLarge": 0x80B80000,
    "BadResponseTooLarge": 0x80B90000,
    "BadTimeout": 0x800A0000,
    "BadServiceUnsupported": 0x800B0000,
    "BadNothingToDo": 0x800F0000,
    "BadTooManyOperations": 0x80100000,
    "BadSecureChannelIdInvalid": 0x80220000,
    "BadSessionIdInvalid": 0x80250000,
    "BadSessionNotActivated": 0x80270000,
    "BadTooManySessions": 0x80560000,
    "BadNoContinuationPoints": 0x804B0000,
    "BadNoMatch": 0x806F0000,
    "BadQueryTooComplex": 0x806E0000,
    "BadTooManyMatches": 0x806D0000,
    "BadNodeIdUnknown": 0x80340000,
    "BadTcpMessageTypeInvalid": 0x807E0000,
    "BadTcpSecureChannelUnknown": 0x807F0000,
    "BadTcpMessageTooLarge": 0x80800000,
    "BadTcpNotEnoughResources": 0x80810000,
    "BadTcpInternalError": 0x80820000,
    "BadSecureChannelTokenUnknown": 0x80870000,
    "BadSequenceNumberInvalid": 0x80880000,
    "BadConnectionRejected": 0x80AC0000,
    "BadSecureChannelClosed": 0x80860000,
}
STATUS_NAME = {v: k for k, v in STATUS.items()}
STATUS_NAME[GOOD] = "Good"


def status_name(code):
    return STATUS_NAME.get(code, "0x%08X" % code)


class Encoder:
    def __init__(self):
        self.parts = []

    def bytes(self):
        return b"".join(self.parts)

    def raw(self, b):
        self.parts.append(b)
        return self

    def boolean(self, v):
        return self.raw(b"\x01" if v else b"\x00")

    def u8(self, v):
        return self.raw(struct.pack("<B", v))

    def u16(self, v):
        return self.raw(struct.pack("<H", v))

    def i32(self, v):
        return self.raw(struct.pack("<i", v))

    def u32(self, v):
        return self.raw(struct.pack("<I", v))

    def i64(self, v):
        return self.raw(struct.pack("<q", v))

    def double(self, v):
        return self.raw(struct.pack("<d", v))

    def string(self, s):
        if s is None:
            return self.i32(-1)
        b = s.encode() if isinstance(s, str) else s
        return self.i32(len(b)).raw(b)

    bytestring = string

    def length(self, n):
        """An array length prefix; the elements are the caller's to write (or, for a lie, not)."""
        return self.i32(n)

    def datetime(self, t=None):
        t = time.time() if t is None else t
        return self.i64(int((t + 11644473600) * 10_000_000))

    def nodeid(self, ns=0, ident=0):
        """Numeric ids in the smallest form (two-byte, four-byte, numeric); string ids with 0x03; GUID and
        opaque ids as the decoder returns them, ("g", 16 bytes) and ("b", bytes)."""
        if isinstance(ident, str):
            return self.u8(0x03).u16(ns).string(ident)
        if isinstance(ident, tuple):
            kind, value = ident
            if kind == "g":
                return self.u8(0x04).u16(ns).raw(value)
            return self.u8(0x05).u16(ns).bytestring(value)
        if ns == 0 and ident < 256:
            return self.u8(0x00).u8(ident)
        if ns < 256 and ident < 65536:
            return self.u8(0x01).u8(ns).u16(ident)
        return self.u8(0x02).u16(ns).u32(ident)

    def qualified_name(self, ns, name):
        return self.u16(ns).string(name)

    def localized_text(self, text):
        return self.u8(0x02).string(text)

    def extension_object(self, type_id=0, body=None):
        self.nodeid(0, type_id)
        if body is None:
            return self.u8(0x00)
        return self.u8(0x01).bytestring(body)

    def request_header(self, token=(0, 0), handle=1, timeout_hint=10000):
        self.nodeid(*token).datetime().u32(handle).u32(0).string(None).u32(timeout_hint)
        return self.extension_object()


class Decoder:
    def __init__(self, data, pos=0):
        self.data = data
        self.pos = pos

    def take(self, n):
        if self.pos + n > len(self.data):
            raise ValueError("truncated at %d (+%d of %d)" % (self.pos, n, len(self.data)))
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def unpack(self, fmt):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def boolean(self):
        return self.unpack("<B") != 0

    def u8(self):
        return self.unpack("<B")

    def u16(self):
        return self.unpack("<H")

    def i32(self):
        return self.unpack("<i")

    def u32(self):
        return self.unpack("<I")

    def i64(self):
        return self.unpack("<q")

    def double(self):
        return self.unpack("<d")

    def string(self):
        n = self.i32()
        return None if n < 0 else self.take(n).decode("utf-8", "replace")

    def bytestring(self):
        n = self.i32()
        return None if n < 0 else self.take(n)

    def datetime(self):
        return self.i64() / 10_000_000 - 11644473600

    def array(self, element):
        n = self.i32()
        return [] if n < 0 else [element() for _ in range(n)]

    def nodeid(self):
        mask = self.u8()
        kind = mask & 0x0F
        if kind == 0x00:
            return (0, self.u8())
        if kind == 0x01:
            return (self.u8(), self.u16())
        if kind == 0x02:
            return (self.u16(), self.u32())
        ns = self.u16()
        if kind == 0x03:
            return (ns, self.string())
        if kind == 0x04:
            return (ns, ("g", self.take(16)))
        if kind == 0x05:
            return (ns, ("b", self.bytestring()))
        raise ValueError("NodeId encoding 0x%02X" % mask)

    def expanded_nodeid(self):
        mask = self.data[self.pos]
        n = self.nodeid()
        if mask & 0x80:
            self.string()
        if mask & 0x40:
            self.u32()
        return n

    def qualified_name(self):
        return (self.u16(), self.string())

    def localized_text(self):
        mask = self.u8()
        locale = self.string() if mask & 1 else None
        text = self.string() if mask & 2 else None
        return (locale, text)

    def extension_object(self):
        type_id = self.nodeid()
        enc = self.u8()
        body = self.bytestring() if enc in (1, 2) else None
        return (type_id, body)

    def diagnostic_info(self):
        mask = self.u8()
        for bit in (0x01, 0x02, 0x04, 0x08):
            if mask & bit:
                self.i32()
        if mask & 0x10:
            self.string()
        if mask & 0x20:
            self.u32()
        if mask & 0x40:
            self.diagnostic_info()

    def variant(self):
        mask = self.u8()
        kind = mask & 0x3F
        scalar = {
            1: self.boolean, 2: lambda: self.unpack("<b"), 3: self.u8, 4: lambda: self.unpack("<h"),
            5: self.u16, 6: self.i32, 7: self.u32, 8: self.i64, 9: lambda: self.unpack("<Q"),
            10: lambda: self.unpack("<f"), 11: self.double, 12: self.string, 13: self.datetime,
            14: lambda: self.take(16), 15: self.bytestring, 16: self.string, 17: self.nodeid,
            18: self.expanded_nodeid, 19: self.u32, 20: self.qualified_name, 21: self.localized_text,
            22: self.extension_object, 23: self.data_value, 24: self.variant, 25: self.diagnostic_info,
        }
        if kind == 0:
            return None
        read = scalar[kind]
        if mask & 0x80:
            value = self.array(read)
            if mask & 0x40:
                self.array(self.i32)
            return value
        return read()

    def data_value(self):
        mask = self.u8()
        dv = {"status": GOOD}
        if mask & 0x01:
            dv["value"] = self.variant()
        if mask & 0x02:
            dv["status"] = self.u32()
        if mask & 0x04:
            dv["source_timestamp"] = self.datetime()
        if mask & 0x10:
            self.u16()
        if mask & 0x08:
            dv["server_timestamp"] = self.datetime()
        if mask & 0x20:
            self.u16()
        return dv

    def response_header(self):
        self.datetime()
        handle = self.u32()
        result = self.u32()
        self.diagnostic_info()
        self.array(self.string)
        self.extension_object()
        return handle, result


# --- UA TCP framing (Part 6 §7.1.2) and secure-conversation headers (Part 6 §6.7.2) ---

def frame(msg_type, chunk_type, body, size=None):
    """A UA TCP chunk: 3-byte type, chunk type, UInt32 size (the whole chunk) unless `size` lies."""
    size = 8 + len(body) if size is None else size
    return msg_type + chunk_type + struct.pack("<I", size) + body


def hello(url, receive_buffer=65535, send_buffer=65535, max_message=0, max_chunks=0):
    body = Encoder().u32(0).u32(receive_buffer).u32(send_buffer).u32(max_message).u32(max_chunks).string(url)
    return frame(b"HEL", b"F", body.bytes())


def open_request(sequence=1, request_id=1, lifetime_ms=600000):
    e = Encoder().u32(0).string("http://opcfoundation.org/UA/SecurityPolicy#None").bytestring(None).bytestring(None)
    e.u32(sequence).u32(request_id)
    e.nodeid(0, OPEN_SECURE_CHANNEL_REQUEST).request_header()
    e.u32(0).u32(0).u32(1).bytestring(b"").u32(lifetime_ms)  # version, Issue, MessageSecurityMode None
    return frame(b"OPN", b"F", e.bytes())


def symmetric(channel_id, token_id, sequence, request_id, body, chunk_type=b"F"):
    return frame(b"MSG", chunk_type, struct.pack("<IIII", channel_id, token_id, sequence, request_id) + body)


# --- service request bodies (type NodeId + request), Part 4 §5 with Part 6 encodings ---

def create_session_request(token=(0, 0), url="opc.tcp://127.0.0.1/", name="hostile"):
    e = Encoder().nodeid(0, CREATE_SESSION_REQUEST).request_header(token)
    # ApplicationDescription: uri, productUri, name, type Client (1), gatewayServerUri, discoveryProfileUri, urls
    e.string("urn:opcuad:hostile").string(None).localized_text("hostile").i32(1).string(None).string(None).length(-1)
    e.string(None).string(url).string(name).bytestring(b"\x00" * 32).bytestring(None)
    e.double(60000.0).u32(0)
    return e.bytes()


def activate_session_request(token):
    identity = Encoder().string("anonymous").bytes()
    e = Encoder().nodeid(0, ACTIVATE_SESSION_REQUEST).request_header(token)
    e.string(None).bytestring(None)  # clientSignature
    e.length(-1).length(-1)  # software certificates, locale ids
    e.extension_object(ANONYMOUS_IDENTITY_TOKEN, identity)
    e.string(None).bytestring(None)  # userTokenSignature
    return e.bytes()


def read_request(token, nodes, attribute=13, handle=1):
    """nodes: (ns, id) pairs, Value attribute by default."""
    e = Encoder().nodeid(0, READ_REQUEST).request_header(token, handle).double(0).i32(2).length(len(nodes))
    for ns, ident in nodes:
        e.nodeid(ns, ident).u32(attribute).string(None).qualified_name(0, None)
    return e.bytes()


def browse_request(token, nodes, max_refs=0, reference_type=33, direction=2, result_mask=63):
    e = Encoder().nodeid(0, BROWSE_REQUEST).request_header(token)
    e.nodeid(0, 0).i64(0).u32(0)  # no view
    e.u32(max_refs).length(len(nodes))
    for ns, ident in nodes:
        e.nodeid(ns, ident).i32(direction).nodeid(0, reference_type).boolean(True).u32(0).u32(result_mask)
    return e.bytes()


def relative_path_element(e, target, inverse=False, reference_type=33, subtypes=True):
    """target: (ns, name)."""
    e.nodeid(0, reference_type).boolean(inverse).boolean(subtypes).qualified_name(*target)


def translate_request(token, paths):
    """paths: [(start (ns, id), [(reference_type, inverse, (ns, name)), ...]), ...]"""
    e = Encoder().nodeid(0, TRANSLATE_REQUEST).request_header(token).length(len(paths))
    for start, elements in paths:
        e.nodeid(*start).length(len(elements))
        for reference_type, inverse, target in elements:
            relative_path_element(e, target, inverse, reference_type)
    return e.bytes()


def write_request_raw(token, node, data_value_bytes):
    e = Encoder().nodeid(0, WRITE_REQUEST).request_header(token).length(1)
    e.nodeid(*node).u32(13).string(None).raw(data_value_bytes)
    return e.bytes()


def decode_browse_response(d):
    def reference():
        d.nodeid()
        d.boolean()
        node = d.expanded_nodeid()
        name = d.qualified_name()
        d.localized_text()
        d.i32()
        d.expanded_nodeid()
        return node, name

    def result():
        status = d.u32()
        cp = d.bytestring()
        refs = d.array(reference)
        return status, cp, refs

    return d.array(result)


def decode_translate_response(d):
    def target():
        node = d.expanded_nodeid()
        d.u32()
        return node

    def result():
        status = d.u32()
        return status, d.array(target)

    return d.array(result)
