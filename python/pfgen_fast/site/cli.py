"""The site room: one top-level command, `python -m pfgen_fast site OUT ...`."""

from pfgen_fast.common.rooms import Command, Room

ROOM = Room(
    word=None,
    help="a static results site of every benchmark, opened from file://",
    commands=(
        Command(
            "site",
            "write a static site (leaderboards, run pages, images) that opens from file://",
            "pfgen_fast.site.commands.site",
        ),
    ),
)
