"""The sandbox's system-call filter: no unix socket a command could use to reach a program outside it.

A listening unix socket anywhere on the machine (a tmux server's, the Docker daemon's, an ssh or gpg agent's,
journald's) takes orders from whoever can connect to it, and a read-only mount does not stop a ``connect``.
Rather than guess where such sockets live, the filter (a classic BPF program that bubblewrap loads with
``--seccomp`` just before it starts the command) refuses the calls that would make one usable:

- ``socket(AF_UNIX, …)``: no unix socket can be created, so none can connect or send to a path (or to an
  abstract name, when the network namespace is shared);
- ``socketpair`` of any type but ``SOCK_STREAM`` / ``SOCK_SEQPACKET``: a datagram pair could still
  ``sendto`` a socket path; a stream pair (what asyncio's event loop and most programs use) reaches only its
  other end;
- ``io_uring_setup`` / ``_enter`` / ``_register``: io_uring creates and connects sockets without those calls
  (answered with ``ENOSYS``, which programs take as "no io_uring here" and fall back);
- ``add_key`` / ``request_key`` / ``keyctl``: the kernel keyrings are not namespaced, and the session keyring
  deep-tui was started in (Kerberos tickets, ecryptfs or VPN keys) would be readable (as Docker's default
  profile, refused with ``EPERM``);
- a system call of another ABI (32-bit x86 or x32 on x86-64) kills the process: it would name other call
  numbers the filter does not check.

Refused calls fail with ``EPERM`` ("Operation not permitted"). Only x86-64 and AArch64 are supported
(:func:`filter_program` returns ``None`` elsewhere, and the sandbox says it cannot run).
"""

from __future__ import annotations

import errno
import os
import platform
import struct
from dataclasses import dataclass

# classic BPF opcodes (linux/filter.h)
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_AND_K = 0x54
_RET_K = 0x06

_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_RET_KILL_PROCESS = 0x80000000

_NR_OFFSET = 0
_ARCH_OFFSET = 4
_ARG_OFFSET = 16  # args[i]'s low 32 bits (little-endian): 16 + 8 * i

AF_UNIX = 1
SOCK_STREAM = 1
SOCK_SEQPACKET = 5
SOCK_TYPE_MASK = 0xF
X32_SYSCALL_BIT = 0x40000000


@dataclass(frozen=True)
class _Abi:
    arch: int
    socket: int
    socketpair: int
    io_uring: tuple[int, int, int]
    keys: tuple[int, int, int]
    """add_key, request_key, keyctl."""
    x32_bit: bool


_ABIS = {
    "x86_64": _Abi(arch=0xC000003E, socket=41, socketpair=53, io_uring=(425, 426, 427), keys=(248, 249, 250),
                   x32_bit=True),
    "aarch64": _Abi(arch=0xC00000B7, socket=198, socketpair=199, io_uring=(425, 426, 427), keys=(217, 218, 219),
                    x32_bit=False),
}
_ABIS["amd64"] = _ABIS["x86_64"]
_ABIS["arm64"] = _ABIS["aarch64"]


class _Program:
    """A tiny assembler: instructions with symbolic jump targets, resolved on :meth:`encode`."""

    def __init__(self) -> None:
        self._code: list[tuple[int, int | str, int | str, int]] = []
        self._labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self._labels[name] = len(self._code)

    def load(self, offset: int) -> None:
        self._code.append((_LD_W_ABS, 0, 0, offset))

    def and_(self, mask: int) -> None:
        self._code.append((_AND_K, 0, 0, mask))

    def jump_if(self, opcode: int, value: int, true: int | str, false: int | str) -> None:
        """Compare the accumulator with ``value``; go to ``true`` / ``false`` (a label, or 0: the next one)."""
        self._code.append((opcode, true, false, value))

    def ret(self, value: int) -> None:
        self._code.append((_RET_K, 0, 0, value))

    def encode(self) -> bytes:
        out = bytearray()
        for index, (code, true, false, k) in enumerate(self._code):
            out += struct.pack("<HBBI", code, self._offset(index, true), self._offset(index, false), k)
        return bytes(out)

    def _offset(self, index: int, target: int | str) -> int:
        if isinstance(target, int):
            return target
        offset = self._labels[target] - index - 1
        if not 0 <= offset <= 255:
            raise ValueError(f"jump to {target} out of range")
        return offset


def filter_program(machine: str | None = None) -> bytes | None:
    """The filter for this machine's architecture (``platform.machine()``), or ``None`` when unsupported."""
    abi = _ABIS.get((machine or platform.machine()).lower())
    if abi is None:
        return None
    program = _Program()
    program.load(_ARCH_OFFSET)
    program.jump_if(_JEQ_K, abi.arch, 0, "kill")
    program.load(_NR_OFFSET)
    if abi.x32_bit:
        program.jump_if(_JGE_K, X32_SYSCALL_BIT, "kill", 0)
    program.jump_if(_JEQ_K, abi.socket, "socket", 0)
    program.jump_if(_JEQ_K, abi.socketpair, "socketpair", 0)
    for number in abi.io_uring:
        program.jump_if(_JEQ_K, number, "no_such_call", 0)
    for number in abi.keys:
        program.jump_if(_JEQ_K, number, "refuse", 0)
    program.ret(_RET_ALLOW)
    program.label("socket")
    program.load(_ARG_OFFSET)  # the domain
    program.jump_if(_JEQ_K, AF_UNIX, "refuse", 0)
    program.ret(_RET_ALLOW)
    program.label("socketpair")
    program.load(_ARG_OFFSET + 8)  # the type, with SOCK_NONBLOCK / SOCK_CLOEXEC
    program.and_(SOCK_TYPE_MASK)
    program.jump_if(_JEQ_K, SOCK_STREAM, "allow", 0)
    program.jump_if(_JEQ_K, SOCK_SEQPACKET, "allow", "refuse")
    program.label("allow")
    program.ret(_RET_ALLOW)
    program.label("refuse")
    program.ret(_RET_ERRNO | errno.EPERM)
    program.label("no_such_call")
    program.ret(_RET_ERRNO | errno.ENOSYS)
    program.label("kill")
    program.ret(_RET_KILL_PROCESS)
    return program.encode()


def filter_descriptor(program: bytes) -> int:
    """A file descriptor holding ``program`` (read from its start by bubblewrap's ``--seccomp``); the caller
    closes it once the sandbox has started."""
    descriptor = os.memfd_create("deep-tui-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(descriptor, program)
        os.lseek(descriptor, 0, os.SEEK_SET)
    except OSError:
        os.close(descriptor)
        raise
    return descriptor
