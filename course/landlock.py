"""Landlock: let a process give up access to every file outside a few folders (Linux 5.13+).

The grader runs students' code in a sandbox process that must not read the course (solution
notebooks, the gradebook, other students' submissions) nor write anywhere but its own scratch
folder. Landlock does this without privileges: the process lists what stays allowed, then
`restrict` seals it, irrevocably, for itself and every process it starts. From ABI 4 on it also
forbids TCP connections, from ABI 6 on signals to processes outside the sandbox (so a student
cannot kill the grader).

Only the system calls are used (through ctypes); `abi()` is 0 where the kernel lacks Landlock,
and callers then fall back to weaker isolation and say so.
"""

import ctypes
import os
import platform

# System call numbers: the same on x86-64 and arm64 (the generic table).
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
# REMOVE_DIR ... MAKE_SYM (ABI 1), REFER (2), TRUNCATE (3), IOCTL_DEV (5): everything else a path allows.
_FS_BITS_BY_ABI = {1: 13, 2: 14, 3: 15, 4: 15, 5: 16}
_FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | (1 << 14) | (1 << 15)  # rights that apply to a file
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1

READ = EXECUTE | READ_FILE | READ_DIR


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class LandlockError(OSError):
    """The kernel refused a Landlock call."""


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def abi():
    """The Landlock ABI version the kernel offers (0: none, or not Linux)."""
    if platform.system() != "Linux":
        return 0
    version = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def all_fs_rights(version):
    return (1 << _FS_BITS_BY_ABI.get(version, 16)) - 1


def restrict(read=(), write=(), version=None):
    """Allow reading (and executing) beneath `read` and everything beneath `write`; forbid all
    other file access, TCP, and (ABI 6+) signals to outside processes. Irrevocable.

    Paths that do not exist are skipped. Returns the ABI version used.
    """
    version = abi() if version is None else version
    if version < 1:
        raise LandlockError("Landlock is not available in this kernel")
    libc = _libc()
    handled = all_fs_rights(version)
    attr = _RulesetAttr(handled, _NET_BIND_TCP | _NET_CONNECT_TCP if version >= 4 else 0,
                        _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL if version >= 6 else 0)
    size = ctypes.sizeof(_RulesetAttr) if version >= 6 else (16 if version >= 4 else 8)
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise LandlockError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        for paths, rights in ((read, READ & handled), (write, handled)):
            for path in paths:
                _allow(libc, ruleset, path, rights)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise LandlockError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise LandlockError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return version


def _allow(libc, ruleset, path, rights):
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        if not os.path.isdir(path):
            rights &= _FILE_ONLY
        rule = _PathBeneathAttr(rights, fd)
        if libc.syscall(_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule),
                        ctypes.c_uint32(0)) != 0:
            raise LandlockError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
    finally:
        os.close(fd)
