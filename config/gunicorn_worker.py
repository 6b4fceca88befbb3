"""gunicorn's sync worker, woken one at a time for a new connection.

The sync workers of one gunicorn all wait on the one listening socket with ``select()``.
A connection arriving wakes every idle worker: one accepts it, the others find nothing
(``EAGAIN``), touch their heartbeat file and go back to waiting. With five workers that
is four wasted wake-ups per request, each a trip through the scheduler that also evicts
the serving worker's data from the CPU's caches; on a 2-core host, one request at a time,
a cycle of claim + page + submit cost the workers 12-15 ms of CPU with five of them against
8-11 ms with one (``bench/http_assign.py`` measures the whole path).

Here each worker waits in its own epoll instance, on the listener with
``EPOLLEXCLUSIVE`` (Linux 4.5 and later): the kernel wakes one waiting worker per
connection. Everything else is the sync worker's: the heartbeat (``notify``) at least
once every ``timeout``, the signal pipe that wakes a waiting worker for a signal, one
request per connection. Where epoll or ``EPOLLEXCLUSIVE`` is missing (not Linux), it waits
as the sync worker does.

Use: ``gunicorn -c config/gunicorn.conf.py config.wsgi`` (that file names this class), or
``--worker-class config.gunicorn_worker.SyncWorker``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select

from gunicorn.workers import sync

EXCLUSIVE = getattr(select, "EPOLLEXCLUSIVE", 0)  # Linux 4.5+, where epoll is


class SyncWorker(sync.SyncWorker):
    """The sync worker, with one listener and an exclusive wake-up (see the module)."""

    poller: select.epoll | None = None

    def run(self) -> None:
        # The signal pipe exists now (the parent's init_process made it, then called run).
        self.poller = self.exclusive_poller()
        super().run()

    def exclusive_poller(self) -> select.epoll | None:
        """An epoll instance on the listeners (exclusive) and the signal pipe, or None
        where the platform has no ``EPOLLEXCLUSIVE``."""
        if not EXCLUSIVE:
            return None
        poller = select.epoll()
        for listener in self.sockets:
            poller.register(listener.fileno(), select.EPOLLIN | EXCLUSIVE)
        # gunicorn's signal pipe (set_wakeup_fd): a signal ends the wait at once.
        poller.register(self.PIPE[0], select.EPOLLIN)
        return poller

    def wait(self, timeout: float) -> list | None:
        if self.poller is None:
            return super().wait(timeout)
        self.notify()
        try:
            events = self.poller.poll(timeout)
        except OSError as exc:  # EINTR is retried by Python; anything else is real
            if exc.errno == errno.EBADF:
                raise sync.StopWaiting from exc
            raise
        ready = []
        for fd, _ in events:
            if fd == self.PIPE[0]:
                with contextlib.suppress(BlockingIOError):
                    os.read(self.PIPE[0], 1)
                ready.append(fd)
            else:
                ready.extend(s for s in self.sockets if s.fileno() == fd)
        return ready
