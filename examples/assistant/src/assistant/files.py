"""File operations confined to one directory, with no window between check and use.

A path is never handed to the kernel whole. :class:`Workdir` holds a descriptor of
its root directory and walks each path one component at a time with ``openat``
(``dir_fd``) and ``O_NOFOLLOW``, keeping the descriptors of the directories it went
through. So:

* ``..`` goes back to a directory descriptor already held, never above the root;
* a symlink is never followed by the kernel: its target is read (``readlinkat``) and
  walked the same way, from the root if it is absolute; a target outside the root is
  refused with :class:`PathEscapeError`;
* a directory swapped for a symlink while a write is under way cannot redirect it:
  the walk either already holds the real directory's descriptor or sees the symlink
  and resolves it inside the root (this was a real race with path-based checks);
* files are opened ``O_NONBLOCK`` after a type check and checked again with
  ``fstat``: a FIFO, device or socket is refused (:class:`NotRegularFileError`)
  without blocking;
* a file with more than one hard link is not read (:class:`LinkedFileError`): its other
  name may be outside the root, and nothing in the file says where. Writes never write
  through an existing file: they write a temporary file in the same directory and
  rename it over the name, so a hard-linked name is replaced (the link is broken) and
  whatever it was linked to is left untouched.

Every error the model can cause is a :class:`FileToolError` (a :class:`ValueError`),
with a bounded message that says what to do instead; the missing-file and
is-a-directory cases also subclass the matching :class:`OSError`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import threading
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from .output import CHUNK, CappedText, bounded

__all__ = [
    "DirectoryError",
    "FileToolError",
    "LinkedFileError",
    "MissingFileError",
    "NotRegularFileError",
    "PathEscapeError",
    "Workdir",
]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
#: Symlinks (and retries after a concurrent change) followed in one path, as Linux's ELOOP.
_MAX_STEPS = 40
_MAX_PATH = 4096


class FileToolError(ValueError):
    """A file operation the model asked for that cannot be done; the message says why."""


class PathEscapeError(FileToolError):
    """A file path that resolves outside the runtime's working directory."""


class NotRegularFileError(FileToolError):
    """A FIFO, device, socket, ...: only regular files are read and written."""


class LinkedFileError(FileToolError):
    """A file with several hard links: one of them may be outside the working directory."""


class MissingFileError(FileToolError, FileNotFoundError):
    """No such file (or a missing directory on the way to it)."""


class DirectoryError(FileToolError, IsADirectoryError):
    """A directory where a file was expected."""


_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


class Workdir:
    """Read, write and list files under ``root`` (see the module docstring).

    ``owner`` (uid, gid), when given, owns the files and directories this creates: the
    runtimes pass the user their sandboxed commands run as, so that commands can edit
    what the file tools wrote. The methods block; the runtimes call them in a thread.
    """

    def __init__(self, root: Path, *, owner: tuple[int, int] | None = None) -> None:
        self.root = root
        self.owner = owner
        self._fd = os.open(root, _DIR_FLAGS)
        self._lock = threading.Lock()
        self._users = 0
        self._closed = False

    def close(self) -> None:
        """Release the root descriptor (once the operations under way are done)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._users == 0:
                os.close(self._fd)

    @contextlib.contextmanager
    def _root_fd(self) -> Iterator[int]:
        # A descriptor closed under a running walk could be reused for another
        # directory: it stays open until the last operation using it ends.
        with self._lock:
            if self._closed:
                raise RuntimeError(f"the working directory {self.root} is closed")
            self._users += 1
        try:
            yield self._fd
        finally:
            self._release()

    def _release(self) -> None:
        with self._lock:
            self._users -= 1
            if self._closed and self._users == 0:
                os.close(self._fd)

    # -- paths ------------------------------------------------------------------------

    def _escape(self, path: str) -> PathEscapeError:
        return PathEscapeError(
            f"{bounded(path)} is outside the working directory {self.root}; use a path inside it"
        )

    def _parts(self, path: str, original: str, *, relative_ok: bool = False) -> list[str]:
        """The components of ``path`` (relative to the root); refuse a lexical escape.

        ``relative_ok`` skips the depth check, for a relative symlink target: it starts
        in the link's directory, and the walk's own ``..`` handling keeps it inside.
        """
        pure = PurePosixPath(path)
        if pure.is_absolute():
            try:
                pure = pure.relative_to(self.root)
            except ValueError:
                raise self._escape(original) from None
        elif relative_ok:
            return list(pure.parts)
        depth = 0
        for part in pure.parts:  # fail fast on "a/../../x", even when "a" is missing
            depth += -1 if part == ".." else 1
            if depth < 0:
                raise self._escape(original)
        return list(pure.parts)

    def _check_path(self, path: object) -> str:
        if not isinstance(path, str) or not path.strip():
            raise FileToolError("path must be a non-empty string relative to the working directory")
        if "\0" in path or len(path) > _MAX_PATH:
            raise FileToolError(
                f"path {bounded(path)} is not usable (a NUL byte, or longer than "
                f"{_MAX_PATH} characters); use a shorter relative path"
            )
        return path

    def _walk(
        self, root_fd: int, path: str, *, create: bool
    ) -> tuple[list[int], str | None, os.stat_result | None]:
        """Walk ``path`` from ``root_fd`` without letting the kernel follow anything.

        Returns the descriptors opened below the root (the last is the directory that
        holds the target; the caller closes them), the target's name in it (``None``
        when the path names a directory by ``.``/``..``) and the target's ``lstat``
        (``None`` if it does not exist). Symlinks are resolved here, so the target is
        not one. ``create`` makes missing directories on the way.
        """
        pending = list(reversed(self._parts(path, path)))
        fds: list[int] = []
        detours = 0  # symlinks followed and components looked at again

        def detour() -> None:
            nonlocal detours
            detours += 1
            if detours > _MAX_STEPS:
                raise FileToolError(
                    f"{bounded(path)}: too many symlinks, or the path kept changing "
                    "while it was opened; use a plain path"
                )

        def follow(name: str, here: int) -> bool:
            """Queue the target of symlink ``name``; False if it is not one (any more)."""
            detour()
            try:
                target = os.readlink(name, dir_fd=here)
            except OSError as exc:
                if exc.errno in (errno.EINVAL, errno.ENOENT):  # replaced meanwhile, or not a link
                    return False
                raise
            if target.startswith("/"):  # walk it again from the root
                while fds:
                    os.close(fds.pop())
            pending.extend(reversed(self._parts(target, path, relative_ok=True)))
            return True

        try:
            while pending:
                name = pending.pop()
                here = fds[-1] if fds else root_fd
                if name == "..":
                    if not fds:
                        raise self._escape(path)
                    os.close(fds.pop())
                elif not pending:  # the target itself: a symlink is followed, else it is it
                    try:
                        info = os.stat(name, dir_fd=here, follow_symlinks=False)
                    except FileNotFoundError:
                        return fds, name, None
                    if not stat.S_ISLNK(info.st_mode):
                        return fds, name, info
                    if not follow(name, here):
                        pending.append(name)
                else:  # a directory on the way: open it first, ask what it is only if that fails
                    fd = self._open_dir(path, name, here, create=create)
                    if fd is not None:
                        fds.append(fd)
                    elif not follow(name, here):
                        mode = os.stat(name, dir_fd=here, follow_symlinks=False).st_mode
                        if not (stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                            raise MissingFileError(
                                f"{bounded(path)}: {bounded(name)} is not a directory"
                            )
                        pending.append(name)  # it changed meanwhile: look again
            return fds, None, None
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise

    def _open_dir(self, path: str, name: str, here: int, *, create: bool) -> int | None:
        """A descriptor of directory ``name`` in ``here``; ``None`` if it is not a directory.

        A missing directory is created when ``create`` (and given to ``owner``).
        """
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=here)
        except FileNotFoundError:
            if not create:
                raise MissingFileError(
                    f"{bounded(path)}: the directory {bounded(name)} does not exist"
                    " (list_files shows what is there)"
                ) from None
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # a symlink, or not a directory
                return None
            raise
        try:
            os.mkdir(name, dir_fd=here)
        except FileExistsError:  # made meanwhile: whatever it is, look again
            return self._open_dir(path, name, here, create=False)
        fd = os.open(name, _DIR_FLAGS, dir_fd=here)
        if self.owner is not None:
            os.fchown(fd, *self.owner)
        return fd

    def _check_file(self, path: str, info: os.stat_result) -> None:
        if stat.S_ISDIR(info.st_mode):
            raise DirectoryError(f"{bounded(path)} is a directory, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(
                f"{bounded(path)} is {_kind(info.st_mode)}; only regular files can be "
                "read or written"
            )

    # -- operations -------------------------------------------------------------------

    @contextlib.contextmanager
    def _reported(self, path: str) -> Iterator[None]:
        """Turn a bare :class:`OSError` (a name too long, no space...) into a model error."""
        try:
            yield
        except FileToolError:
            raise
        except OSError as exc:
            raise FileToolError(f"{bounded(path)}: {exc.strerror or exc}") from exc

    def read(self, path: str, limit: int) -> str:
        """The text of ``path`` (UTF-8, bad bytes replaced), at most ``limit`` characters.

        A longer file is cut, and a last line says how big it was and how to see the rest.
        """
        path = self._check_path(path)
        with self._reported(path):
            fd = self._open_for_reading(path)
            try:
                info = os.fstat(fd)
                self._check_file(path, info)
                if info.st_nlink > 1:
                    raise LinkedFileError(
                        f"{bounded(path)} has {info.st_nlink} hard links, and another name "
                        "may be outside the working directory, so it is not read; copy it "
                        "with bash (cp) if you need its content"
                    )
                text = CappedText(limit)
                while not text.full and (chunk := os.read(fd, CHUNK)):
                    text.feed(chunk)
                if text.full and not text.truncated:
                    text.feed(os.read(fd, 1))  # exactly at the cap, or more to come?
                content = text.text()
            finally:
                os.close(fd)
        if text.truncated:
            content += (
                f"\n[read_file: cut here; the file has {info.st_size:,} bytes and only its "
                f"first {len(content):,} characters are shown. Use bash (head, tail, "
                "sed -n, grep) to read the rest.]"
            )
        return content

    def _open_for_reading(self, path: str) -> int:
        with self._root_fd() as root_fd:
            fds, name, info = self._walk(root_fd, path, create=False)
            try:
                if name is None:
                    raise DirectoryError(f"{bounded(path)} is a directory, not a file")
                if info is None:
                    raise MissingFileError(
                        f"{bounded(path)} does not exist in the working directory "
                        f"{self.root} (list_files shows what is there)"
                    )
                self._check_file(path, info)  # before opening: never open a device
                try:
                    return os.open(name, _READ_FLAGS, dir_fd=fds[-1] if fds else root_fd)
                except OSError as exc:
                    raise FileToolError(
                        f"{bounded(path)} changed while it was opened ({exc.strerror}); try again"
                    ) from None
            finally:
                for directory in fds:
                    os.close(directory)

    def write(self, path: str, content: str) -> str:
        """Replace ``path`` with ``content`` (UTF-8), creating missing directories."""
        path = self._check_path(path)
        if not isinstance(content, str):
            raise FileToolError(f"content must be a string, got {type(content).__name__}")
        data = content.encode("utf-8")
        with self._reported(path), self._root_fd() as root_fd:
            fds, name, info = self._walk(root_fd, path, create=True)
            try:
                if name is None:
                    raise DirectoryError(f"{bounded(path)} is a directory, not a file")
                if info is not None:
                    self._check_file(path, info)
                self._replace(fds[-1] if fds else root_fd, name, data, info)
            finally:
                for directory in fds:
                    os.close(directory)
        return f"wrote {len(content)} characters to {PurePosixPath(path).as_posix()}"

    def _replace(self, directory: int, name: str, data: bytes, old: os.stat_result | None) -> None:
        """Write a temporary file next to ``name``, then rename it over ``name``."""
        temp = f".{name[:32]}.{secrets.token_hex(6)}.tmp"
        fd = os.open(temp, _TEMP_FLAGS, 0o666, dir_fd=directory)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                if old is not None:
                    os.fchmod(fd, stat.S_IMODE(old.st_mode))
                if old is not None and os.geteuid() == 0:
                    os.fchown(fd, old.st_uid, old.st_gid)
                elif self.owner is not None:
                    os.fchown(fd, *self.owner)
            finally:
                os.close(fd)
            os.rename(temp, name, src_dir_fd=directory, dst_dir_fd=directory)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=directory)
            raise

    def list(self) -> list[str]:
        """Every file under the root (symlinked directories are not entered), sorted."""
        with self._root_fd() as root_fd:
            files: list[str] = []
            for top, _dirs, names, _fd in os.fwalk(".", dir_fd=root_fd, follow_symlinks=False):
                base = PurePosixPath(top)
                files.extend((base / name).as_posix() for name in names)
        return sorted(files)
