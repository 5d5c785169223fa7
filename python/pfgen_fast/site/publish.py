"""Puts a site made in a temporary folder into OUT without touching what the site did not
write. OUT records the files the site wrote (MANIFEST); a rebuild replaces exactly those and
keeps everything else (`.git`, `CNAME`, a user's notes). Every file but `index.html` has its
content's digest in its name, so the new files go in beside the old ones; `index.html` is then
replaced in one rename (the moment the new site takes over), and the old files it no longer
names are removed. A rebuild killed before that rename leaves the old site whole; one killed
after it, the new site whole (and old files the next rebuild removes, being in MANIFEST)."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import orjson

from pfgen_fast.common.errors import PfgenError
from pfgen_fast.common.files import WriteError, write_atomically
from pfgen_fast.common.jsonl import read_json_object

MANIFEST = ".pfgen_fast-site.json"
INDEX = "index.html"
# What the site writes in OUT: its index, its record, and its folders.
SITE_NAMES = (INDEX, MANIFEST, "assets", "runs", "images", "figures")


def site_target(out: Path) -> Path:
    """The folder the site goes into: OUT, or the folder a symbolic link OUT points to (the
    link is kept). A PfgenError when OUT is a file, or a folder the site cannot go into
    (`in_the_way`)."""
    target = out.resolve() if out.is_symlink() else out.absolute()
    if target.exists() and not target.is_dir():
        raise PfgenError(f"{out}: exists and is not a folder; give a folder for the site")
    blocking = in_the_way(target) if target.is_dir() else None
    if blocking is not None:
        raise PfgenError(
            f"{out / blocking}: the site would write there, and {out} holds no site written "
            f"before (no {MANIFEST}); give a new or empty folder, a git checkout without "
            f"{INDEX}, or a folder without {', '.join(SITE_NAMES)}"
        )
    return target


def in_the_way(folder: Path) -> str | None:
    """What keeps the site out of `folder`, None when nothing does. A site written before (its
    MANIFEST) is replaced. A folder with no site yet takes one beside what it holds, untouched,
    unless it holds index.html; or, when it is not a git checkout (`.git`), one of the site's
    folders, where its files would be mixed with others'. A file the site would write over
    stops the build even so (`publish`)."""
    if (folder / MANIFEST).is_file():
        return None
    names = (INDEX, MANIFEST) if os.path.lexists(folder / ".git") else SITE_NAMES
    return next((name for name in names if os.path.lexists(folder / name)), None)


def written_before(target: Path) -> set[str]:
    """The files the site wrote into `target` last time (paths relative to it, checked to
    stay inside it)."""
    path = target / MANIFEST
    if not path.is_file():
        return set()
    files = read_json_object(path).get("files")
    if not isinstance(files, list):
        raise PfgenError(f'{path}: field "files": expected a list of paths')
    return {name for name in files if isinstance(name, str) and inside(name)}


def inside(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return bool(parts) and not PurePosixPath(name).is_absolute() and ".." not in parts


def files_of(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir()}


def write_manifest(target: Path, files: set[str]) -> None:
    document = {"written_by": "python -m pfgen_fast site", "files": sorted(files | {MANIFEST})}
    write_atomically(target / MANIFEST, orjson.dumps(document, option=orjson.OPT_INDENT_2))


def publish(work: Path, target: Path) -> None:
    """Moves the site made in `work` (on target's file system) into `target`."""
    old = written_before(target) if target.is_dir() else set()
    new = files_of(work)
    for name in sorted(new - old):
        if (target / name).exists() or (target / name).is_symlink():
            raise PfgenError(
                f"{target / name}: the site would replace it, and it was not written by the "
                "site; move it away"
            )
    try:
        target.mkdir(parents=True, exist_ok=True)
        # recorded before they are moved in: a killed rebuild leaves none unrecorded
        write_manifest(target, old | new)
        for name in sorted(new - {INDEX}):
            destination = target / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            os.replace(work / name, destination)
        os.replace(work / INDEX, target / INDEX)
        write_manifest(target, new)
    except OSError as error:
        raise WriteError.of(target, error) from None
    remove_files(target, old - new - {MANIFEST})


def remove_files(target: Path, names: set[str]) -> None:
    """Removes the site's old files, then the folders they leave empty (never `target`)."""
    folders: set[Path] = set()
    for name in names:
        path = target / name
        if path.is_file() and not path.is_symlink():
            path.unlink(missing_ok=True)
        folders.update(path.parents)
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        if folder != target and target in folder.parents:
            try:
                folder.rmdir()
            except OSError:
                pass  # not empty: it holds something the site did not write
