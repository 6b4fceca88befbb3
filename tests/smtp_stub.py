"""A small SMTP server for tests that need a real mail server on a socket (a worker
process sends through it): it keeps the messages it accepts, and can keep its first
connections waiting, then turn them away ("421"), as a busy server does."""

from __future__ import annotations

import email
import socketserver
import threading
from email.message import Message


class _Handler(socketserver.StreamRequestHandler):
    server: SmtpStub

    def _say(self, line: str) -> None:
        self.wfile.write(line.encode() + b"\r\n")

    def handle(self) -> None:
        stub = self.server
        with stub.lock:
            number = stub.connections
            stub.connections += 1
        if number < stub.refuse:
            stub.release.wait(30)
            self._say("421 stub.test busy, try again later")
            return
        self._say("220 stub.test ESMTP")
        lines: list[str] | None = None  # the message's lines, while in DATA
        for raw in self.rfile:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if lines is not None:
                if line == ".":
                    with stub.lock:
                        stub.messages.append(email.message_from_string("\n".join(lines)))
                    lines = None
                    self._say("250 queued")
                else:
                    lines.append(line[1:] if line.startswith("..") else line)
                continue
            command = line[:4].upper()
            if command == "DATA":
                lines = []
                self._say("354 end with <CRLF>.<CRLF>")
            elif command == "QUIT":
                self._say("221 bye")
                return
            else:  # EHLO, HELO, MAIL, RCPT, RSET, NOOP
                self._say("250 stub.test")


class SmtpStub(socketserver.ThreadingTCPServer):
    """``SmtpStub(refuse=n)``: the first ``n`` connections wait for ``release`` to be set,
    then are refused; later ones deliver into ``messages``. ``port`` is where it listens
    (on 127.0.0.1); ``close()`` stops it."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, *, refuse: int = 0) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.refuse = refuse
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.connections = 0
        self.messages: list[Message] = []
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self.server_address[1]

    def close(self) -> None:
        self.release.set()
        self.shutdown()
        self.server_close()
