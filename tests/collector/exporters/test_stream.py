"""The common layer: atomic files, checksums, progress, refusal to overwrite."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from collector.exporters import (
    AtomicOutput,
    ManifestEntry,
    sha256_file,
    verify_entry,
    write_checksums,
    write_dureader,
    write_hf_split,
    write_msmarco_columnar,
    write_msmarco_jsonl,
    write_msmarco_references,
    write_newsqa_csv,
    write_newsqa_json,
    write_reco,
    write_squad_v1,
    write_squad_v2,
)
from collector.exporters.records import SquadArticle, SquadParagraph
from tests.collector.exporters.samples import (
    DUREADER,
    SQUAD_V1,
    dureader_records,
    marco_records,
    newsqa_stories,
    reco_records,
    squad_articles,
)


class Boom(RuntimeError):
    pass


def _then_fail(items):
    yield from items
    raise Boom("database connection lost")


def _squad_failing_mid_paragraph():
    article = squad_articles(SQUAD_V1)[0]
    paragraph = article.paragraphs[0]
    yield SquadArticle(article.title, [SquadParagraph(paragraph.context,
                                                      _then_fail(paragraph.qas))])


WRITERS = {
    "squad_v1": lambda path, fail: write_squad_v1(
        path, _squad_failing_mid_paragraph() if fail else squad_articles(SQUAD_V1)),
    "squad_v2": lambda path, fail: write_squad_v2(
        path, _squad_failing_mid_paragraph() if fail else squad_articles(SQUAD_V1)),
    "newsqa_json": lambda path, fail: write_newsqa_json(
        path, _then_fail(newsqa_stories()) if fail else newsqa_stories()),
    "newsqa_csv": lambda path, fail: write_newsqa_csv(
        path, _then_fail(newsqa_stories()) if fail else newsqa_stories()),
    "msmarco_jsonl": lambda path, fail: write_msmarco_jsonl(
        path, _then_fail(marco_records()) if fail else marco_records()),
    "msmarco_columnar": lambda path, fail: write_msmarco_columnar(
        path, _then_fail(marco_records()) if fail else marco_records()),
    "msmarco_refs": lambda path, fail: write_msmarco_references(
        path, _then_fail(marco_records()) if fail else marco_records()),
    "reco": lambda path, fail: write_reco(
        path, _then_fail(reco_records()) if fail else reco_records()),
    "dureader": lambda path, fail: write_dureader(
        path, _then_fail(dureader_records(DUREADER["dev"])) if fail
        else dureader_records(DUREADER["dev"])),
    "hf_parquet": lambda path, fail: write_hf_split(
        path.parent, "train", _then_fail(reco_records()) if fail else reco_records(),
        kind="reco", batch_rows=1),
    "hf_jsonl": lambda path, fail: write_hf_split(
        path.parent, "train", _then_fail(reco_records()) if fail else reco_records(),
        kind="reco", fmt="jsonl"),
}


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_a_failing_writer_leaves_no_partial_file(tmp_path, name):
    folder = tmp_path / "release"
    folder.mkdir()
    with pytest.raises(Boom):
        WRITERS[name](folder / "out", True)
    leftovers = [p for p in folder.rglob("*") if p.is_file()]
    assert leftovers == []


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_manifest_checksum_and_size_match_the_file(tmp_path, name):
    entry = WRITERS[name](tmp_path / "out", False)
    data = Path(entry.path).read_bytes()
    assert entry.sha256 == hashlib.sha256(data).hexdigest()
    assert entry.bytes == len(data)
    assert entry.records > 0
    assert sha256_file(entry.path) == (entry.sha256, entry.bytes)
    assert [p.name for p in tmp_path.rglob(".*")] == []  # no temp files left


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_existing_files_are_never_replaced(tmp_path, name):
    entry = WRITERS[name](tmp_path / "out", False)
    before = Path(entry.path).read_bytes()
    with pytest.raises(FileExistsError, match="immutable"):
        WRITERS[name](tmp_path / "out", False)
    assert Path(entry.path).read_bytes() == before


def test_overwrite_replaces_only_on_success(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("old")
    with pytest.raises(Boom), AtomicOutput(path, overwrite=True) as out:
        out.write("new, partial")
        raise Boom("x")
    assert path.read_text() == "old"
    with AtomicOutput(path, overwrite=True) as out:
        out.write("new")
    assert path.read_text() == "new"
    assert out.entry(1) == ManifestEntry(str(path), 1, hashlib.sha256(b"new").hexdigest(), 3)


def test_interrupt_cleans_up_too(tmp_path):
    with pytest.raises(KeyboardInterrupt), AtomicOutput(tmp_path / "f") as out:
        out.write("x" * 1_000_000)
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_text_and_bytes_interleave_in_order(tmp_path):
    with AtomicOutput(tmp_path / "f") as out:
        out.write("é")
        out.write_bytes(b"\x00")
        out.write("z" * 300_000)
        out.write("€")
    data = (tmp_path / "f").read_bytes()
    assert data == "é".encode() + b"\x00" + b"z" * 300_000 + "€".encode()
    assert out.size == len(data)
    assert out.sha256 == hashlib.sha256(data).hexdigest()


def test_missing_directory_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        AtomicOutput(tmp_path / "nope" / "f")


def test_progress_reports_every_n_and_at_the_end(tmp_path):
    seen: list[int] = []
    entry = write_squad_v1(tmp_path / "x.json", squad_articles(SQUAD_V1),
                           progress=seen.append, progress_every=50)
    assert entry.records == 186
    assert seen == [50, 100, 150, 186]


def test_a_failing_progress_callback_aborts_the_export(tmp_path):
    def cancel(done: int) -> None:
        raise Boom(f"cancelled at {done}")

    with pytest.raises(Boom, match="cancelled at 10"):
        write_squad_v1(tmp_path / "x.json", squad_articles(SQUAD_V1), progress=cancel,
                       progress_every=10)
    assert list(tmp_path.iterdir()) == []


def test_checksum_file_verifies_with_sha256sum(tmp_path):
    entries = [write_squad_v1(tmp_path / "squad.json", squad_articles(SQUAD_V1)),
               write_hf_split(tmp_path, "train", reco_records(), kind="reco")]
    sums = write_checksums(tmp_path / "SHA256SUMS", entries)
    assert sums.records == 2
    lines = (tmp_path / "SHA256SUMS").read_text().splitlines()
    assert lines == [f"{entries[0].sha256}  squad.json",
                     f"{entries[1].sha256}  data/train.parquet"]
    assert all(verify_entry(e.relative_to(tmp_path), tmp_path) for e in entries)
    (tmp_path / "squad.json").write_bytes(b"tampered")
    assert not verify_entry(entries[0])
    if shutil.which("sha256sum"):
        proc = subprocess.run(["sha256sum", "--quiet", "-c", "SHA256SUMS"], cwd=tmp_path,
                              capture_output=True, text=True, check=False)
        assert proc.returncode == 1
        assert "squad.json: FAILED" in proc.stdout


@pytest.mark.parametrize("cut", [0, 1, 2, None])
def test_fragments_appended_make_the_file_one_writer_writes(tmp_path, cut):
    """SquadWriter / NewsqaJsonWriter fragments (parts of the records written apart, by
    another process) appended with add_fragment after a writer's own records, empty
    parts included: the same bytes and records as one writer over all the records."""
    from collector.exporters import NewsqaJsonWriter, SquadWriter

    for source, make, whole in (
            (lambda: squad_articles(SQUAD_V1),
             lambda path, **kw: SquadWriter(path, v2=True, **kw), write_squad_v2),
            (newsqa_stories, lambda path, **kw: NewsqaJsonWriter(path, **kw),
             write_newsqa_json)):
        records = source()
        at = len(records) // 2 if cut is None else min(cut, len(records))
        parts = []
        for n, chunk in enumerate(([], records[at:], [])):
            with make(tmp_path / f"part-{n}", fragment=True, overwrite=True) as part:
                for record in chunk:
                    part.add(record)
            parts.append((part.path, part.entry.records, part.empty))
        with make(tmp_path / "joined", overwrite=True) as writer:
            for record in records[:at]:
                writer.add(record)
            for part in parts:
                writer.add_fragment(*part)
        expected = whole(tmp_path / "whole", source(), overwrite=True)
        assert (tmp_path / "joined").read_bytes() == (tmp_path / "whole").read_bytes()
        assert (writer.entry.records, writer.entry.sha256) == (expected.records,
                                                               expected.sha256)
