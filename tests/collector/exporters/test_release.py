"""A whole release folder the way the release job will build one: every format, the
datasheet, the card and SHA256SUMS; no worker identity in any file."""

from __future__ import annotations

import itertools
import re

from collector.exporters import (
    Pseudonymizer,
    new_release_salt,
    verify_entry,
    write_checksums,
    write_dataset_card,
    write_datasheet,
    write_dureader,
    write_hf_split,
    write_msmarco_columnar,
    write_msmarco_jsonl,
    write_newsqa_csv,
    write_newsqa_json,
    write_reco,
    write_squad_v1,
    write_squad_v2,
)
from tests.collector.exporters.samples import (
    DUREADER,
    SQUAD_V1,
    SQUAD_V2,
    dureader_records,
    marco_records,
    newsqa_stories,
    reco_records,
    squad_articles,
)

# Worker database ids and the usernames the database holds for them. The writers only
# ever receive the ids; neither may reach a released file.
USERS = {731_000_001: "alice.annotator", 731_000_002: "bob_checker",
         731_000_003: "carol-editor"}


def _with_workers():
    ids = itertools.cycle(USERS)
    squad1, squad2 = squad_articles(SQUAD_V1), squad_articles(SQUAD_V2)
    for article in squad1 + squad2:
        for paragraph in article.paragraphs:
            for q in paragraph.qas:
                for answer in q.answers:
                    answer.worker = next(ids)
    stories = newsqa_stories()
    for story in stories:
        for q in story.questions:
            for answer in q.answers:
                answer.worker = next(ids)
    marco = marco_records()
    for record in marco:
        record.workers = [next(ids) for _ in record.answers]
    reco = reco_records()
    for record in reco:
        record.annotator = next(ids)
    dureader = dureader_records(DUREADER["dev"])
    for record in dureader:
        record.workers = [next(ids) for _ in record.answers or ()]
    return squad1, squad2, stories, marco, reco, dureader


SHEET = {
    "title": "Release test", "version": "0.1.0", "recipe": "newsqa",
    "batch_inspections": [{"batch": n, "annotator": worker, "round": 1, "sampled": 10,
                           "errors": 0.0, "accuracy": 1.0, "passed": True}
                          for n, worker in enumerate(USERS)],
    "licence": {"name": "CC BY-SA 4.0", "spdx": "cc-by-sa-4.0"},
}


def _build(folder, pseudonyms):
    squad1, squad2, stories, marco, reco, dureader = _with_workers()
    entries = [
        write_squad_v1(folder / "squad-v1.json", squad1),
        write_squad_v2(folder / "squad-v2.json", squad2),
        write_newsqa_json(folder / "combined-newsqa-data-v1.json", stories),
        write_newsqa_csv(folder / "combined-newsqa-data-v1.csv", stories),
        write_msmarco_jsonl(folder / "msmarco.jsonl", marco),
        write_msmarco_columnar(folder / "msmarco.json", marco),
        write_reco(folder / "ReCO.json", reco),
        write_dureader(folder / "search.dev.json", dureader),
        write_datasheet(folder / "DATASHEET.md", SHEET, pseudonyms=pseudonyms),
    ]
    hf = folder / "hf"
    splits = {}
    for kind, records in (("squad_v2", squad2), ("newsqa", stories), ("msmarco", marco),
                          ("reco", reco), ("dureader", dureader)):
        splits[kind] = write_hf_split(hf / kind, "train", records, kind=kind,
                                      pseudonyms=pseudonyms)
        write_hf_split(hf / kind, "test", records, kind=kind, fmt="jsonl",
                       pseudonyms=pseudonyms)
        entries.append(write_dataset_card(hf / kind, kind=kind,
                                          splits={"train": splits[kind]},
                                          datasheet=SHEET, pseudonyms=pseudonyms))
    entries += splits.values()
    entries.append(write_checksums(folder / "SHA256SUMS", entries))
    return entries


def _all_bytes(folder) -> bytes:
    return b"\n".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def test_no_worker_identity_in_any_file(tmp_path):
    pseudonyms = Pseudonymizer.fitted(new_release_salt(), USERS)
    entries = _build(tmp_path, pseudonyms)
    assert all(verify_entry(entry) for entry in entries)
    blob = _all_bytes(tmp_path)
    for worker, username in USERS.items():
        assert username.encode() not in blob
        assert str(worker).encode() not in blob
        assert pseudonyms(worker).encode() in blob  # present, but only as a pseudonym


def test_omitting_workers_leaves_no_trace_of_them(tmp_path):
    pseudonyms = Pseudonymizer(new_release_salt(), omit=True)
    _build(tmp_path, pseudonyms)
    blob = _all_bytes(tmp_path)
    assert not re.search(rb"\bw-[0-9a-f]{6,}\b", blob)  # no pseudonym anywhere
    assert b"answer_workers" not in blob
    for worker, username in USERS.items():
        assert username.encode() not in blob
        assert str(worker).encode() not in blob


def test_two_releases_give_a_worker_different_pseudonyms(tmp_path):
    one = Pseudonymizer.fitted(new_release_salt(), USERS)
    two = Pseudonymizer.fitted(new_release_salt(), USERS)
    for name, pseudonyms in (("a", one), ("b", two)):
        (tmp_path / name).mkdir()
        _build(tmp_path / name, pseudonyms)
    blob_a, blob_b = _all_bytes(tmp_path / "a"), _all_bytes(tmp_path / "b")
    for worker in USERS:
        assert one(worker) != two(worker)
        assert one(worker).encode() in blob_a and one(worker).encode() not in blob_b
