"""Small durable counters for a job-server without a database of its own:
RevisionFile (the last event handled, with its history epoch) and
GenerationFile (snapshot generations that keep increasing across restarts).
Each save is atomic: a temporary file, fsync, rename."""

import os
import tempfile
from typing import Tuple

__all__ = ["RevisionFile", "GenerationFile"]


def _write_atomically(path: str, text: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-" + os.path.basename(path))
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.rename(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class RevisionFile:
    """The last event revision handled (0 = from the beginning) with the
    history epoch it belongs to (Event.epoch): "<revision> <epoch>" (a file
    of an older client holds the revision alone)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def load(self) -> int:
        """The stored revision; 0 if the file does not exist."""
        return self.load_with_epoch()[0]

    def load_with_epoch(self) -> Tuple[int, str]:
        """(revision, epoch); (0, "") if the file does not exist. ValueError
        naming the file if it holds something else."""
        try:
            with open(self.path) as f:
                text = f.read().strip()
        except FileNotFoundError:
            return 0, ""
        parts = text.split()
        if not parts or len(parts) > 2 or not parts[0].isdigit():
            raise ValueError("%s: expected a revision (and an epoch), found %r" % (self.path, text))
        return int(parts[0]), parts[1] if len(parts) == 2 else ""

    def save(self, value: int, epoch: str = "") -> None:
        """Stores `value` (and `epoch`) atomically."""
        _write_atomically(self.path, "%d %s\n" % (value, epoch) if epoch else "%d\n" % value)


class GenerationFile:
    """Snapshot generations that keep increasing across restarts."""

    def __init__(self, path: str) -> None:
        self.path = path

    def load(self) -> int:
        """The last generation reserved; 0 if the file does not exist."""
        try:
            with open(self.path) as f:
                text = f.read().strip()
        except FileNotFoundError:
            return 0
        if not text.isdigit():
            raise ValueError("%s: expected a number, found %r" % (self.path, text))
        return int(text)

    def save(self, value: int) -> None:
        _write_atomically(self.path, "%d\n" % value)

    def next(self, floor: int = 0) -> int:
        """Reserves and returns the next generation (persisted first): above
        both the stored one and `floor` (berthd's last applied generation,
        e.g. GenerationConflict.last_applied_generation, so that a fresh
        state directory does not start below it)."""
        value = max(self.load(), floor) + 1
        self.save(value)
        return value
