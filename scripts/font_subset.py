"""Builds static/fonts/crowdqa-cjk-sc.woff2: Noto Sans SC cut down to the characters CrowdQA
shows, so a machine without a CJK font draws Chinese instead of empty boxes (tofu).

The subset holds ASCII, CJK and full-width punctuation, the 3,755 characters of GB2312
level 1 (the common characters, the core of the 通用规范汉字表 level 1), and every other
character of the Chinese interface (locale/zh_Hans/*.po, the Chinese guidelines) and of
the demo's Chinese samples (data/datasets: ReCO, DuReader, the Chinese search queries).
Its source is Debian's fonts-noto-cjk (``apt-get install fonts-noto-cjk``), used only
here; its licence (SIL OFL 1.1) is written beside it. Run again after the translations or
the samples change:

    .venv/bin/python scripts/font_subset.py [--source /path/NotoSansCJK-Regular.ttc]

Needs fonttools and brotli (requirements.txt). Prints the character count and file size.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTCollection, TTFont

ROOT = Path(__file__).resolve().parent.parent
SOURCE = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
LICENSE_SOURCE = Path("/usr/share/doc/fonts-noto-cjk/copyright")
OUT = ROOT / "static" / "fonts" / "crowdqa-cjk-sc.woff2"
FAMILY = "CrowdQA CJK SC"
#: Text whose characters the subset must hold, besides the fixed sets.
TEXT_SOURCES = (
    "locale/zh_Hans/LC_MESSAGES",
    "annotation/guidelines_zh.py",
    "annotation/recipes.py",
    "annotation/demo.py",
    "data/datasets/reco",
    "data/datasets/dureader",
    "data/datasets/search_queries",
)
TEXT_SUFFIXES = {".po", ".py", ".json", ".jsonl", ".md", ".txt", ".tsv", ".csv"}
#: Largest file we accept to commit.
MAX_BYTES = 2 * 1024 * 1024


def gb2312_level1() -> set[str]:
    """The 3,755 characters of GB2312 level 1 (rows 16-55, by pinyin)."""
    chars = set()
    for row in range(0xB0, 0xD8):
        for cell in range(0xA1, 0xFF):
            try:
                chars.add(bytes((row, cell)).decode("gb2312"))
            except UnicodeDecodeError:
                continue  # the gaps at the end of row 55
    return chars


def punctuation() -> set[str]:
    """ASCII, Latin-1 punctuation, general punctuation, CJK symbols and full-width forms."""
    ranges = [(0x20, 0x7E), (0xA0, 0xFF), (0x2010, 0x2027), (0x2030, 0x203B),
              (0x2190, 0x2193), (0x3000, 0x303F), (0xFF01, 0xFF5E), (0xFFE0, 0xFFE6)]
    return {chr(c) for lo, hi in ranges for c in range(lo, hi + 1)}


def text_characters(root: Path) -> set[str]:
    """Every non-ASCII character of the interface's and samples' text."""
    chars: set[str] = set()
    for relative in TEXT_SOURCES:
        path = root / relative
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*")
                                                      if p.suffix in TEXT_SUFFIXES)
        for file in files:
            text = file.read_text(encoding="utf-8", errors="strict")
            chars.update(c for c in text if ord(c) > 0x7F and c.isprintable())
    return chars


def license_text() -> str:
    """The SIL OFL 1.1 text as Debian ships it with the font, with the font's copyright."""
    lines = LICENSE_SOURCE.read_text(encoding="utf-8").splitlines()
    start = len(lines) - 1 - lines[::-1].index("License: SIL-1.1")  # the full text, last
    body = []
    for line in lines[start + 1:]:
        if line and not line.startswith(" "):
            break
        body.append("" if line.strip() == "." else line[1:])
    return "\n".join(body).strip() + "\n"


def build(source: Path, out: Path) -> tuple[int, int]:
    needed = text_characters(ROOT)
    wanted = gb2312_level1() | punctuation() | needed
    font = _sc_face(source)
    cmap = font.getBestCmap()
    missing = sorted(c for c in needed if ord(c) not in cmap and not c.isspace())
    if missing:
        print(f"no glyph in the source for {len(missing)} characters: {''.join(missing[:40])}",
              file=sys.stderr)
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6]
    options.hinting = False
    options.desubroutinize = True
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=[ord(c) for c in wanted if ord(c) in cmap])
    subsetter.subset(font)
    _rename(font)
    out.parent.mkdir(parents=True, exist_ok=True)
    subset.save_font(font, str(out), options)
    (out.parent / "OFL.txt").write_text(
        f"{out.name} is a subset of Noto Sans CJK SC (Noto Sans SC), renamed {FAMILY!r}.\n"
        f"{font['name'].getDebugName(0)}\n\n" + license_text(), encoding="utf-8")
    size = out.stat().st_size
    if size > MAX_BYTES:
        raise SystemExit(f"{out} is {size} bytes, more than {MAX_BYTES}: subset fewer characters")
    return len(wanted), size


def _sc_face(source: Path) -> TTFont:
    if source.suffix.lower() == ".ttc":
        for face in TTCollection(str(source)).fonts:
            if face["name"].getDebugName(4) == "Noto Sans CJK SC":
                return face
        raise SystemExit(f"{source} has no 'Noto Sans CJK SC' face")
    return TTFont(str(source))


def _rename(font: TTFont) -> None:
    """A modified OFL font takes a name of its own (the source's has a reserved name)."""
    names = {1: FAMILY, 3: f"{FAMILY}; subset", 4: FAMILY, 6: FAMILY.replace(" ", "")}
    for record in font["name"].names:
        if record.nameID in names:
            record.string = names[record.nameID]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=SOURCE,
                        help="Noto Sans CJK (.ttc) or Noto Sans SC (.otf/.ttf)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if not args.source.exists():
        raise SystemExit(f"{args.source} not found: apt-get install fonts-noto-cjk, or --source")
    count, size = build(args.source, args.out)
    print(f"{args.out.relative_to(ROOT)}: {count} characters, {size} bytes")


if __name__ == "__main__":
    main()
