"""A drafter's identity for the broken-drafter record: built here, read back here.

The key is a string in the record's JSON (`kind|path|size|mtime_ns`), so a drafter that is
replaced or rebuilt gets a new chance. Build it with `DrafterKey.of_file`, read one with
`DrafterKey.parse`; no one else splits the string.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from draftwise.core.identity import file_stamp

_SEP = "|"


@dataclass(frozen=True)
class DrafterKey:
    kind: str  # how it is used: the --spec-type (draft-mtp, draft-simple, ngram-mod...)
    path: str  # the drafter's file (for MTP heads and n-grams: the model's), resolved
    size: int | None = None  # None when the file could not be read
    mtime_ns: int | None = None

    def __str__(self) -> str:
        if self.size is None:
            return _SEP.join((self.kind, self.path))
        return _SEP.join((self.kind, self.path, str(self.size), str(self.mtime_ns)))

    @classmethod
    def of_file(cls, path: Path, kind: str) -> DrafterKey:
        resolved, size, mtime_ns = file_stamp(path)
        return cls(kind, resolved, size, mtime_ns)

    @classmethod
    def parse(cls, text: str) -> DrafterKey:
        """The key a string holds (paths may hold `|`: size and mtime are taken from the end)."""
        kind, _, rest = text.partition(_SEP)
        parts = rest.rsplit(_SEP, 2)
        if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
            return cls(kind, parts[0], int(parts[1]), int(parts[2]))
        return cls(kind, rest)
