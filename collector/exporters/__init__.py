"""CrowdQA release writers: pure Python (no Django), streaming, atomic, checksummed.

The release job streams plain records (:mod:`.records`) from the database into these
writers. Every writer takes an *iterator* of records, writes its file incrementally
(never the whole dataset in memory), validates each record on the way (span offsets,
labels, parallel lists; :class:`InvalidRecordError` names the record), calls
``progress(done)`` every ``progress_every`` records and once at the end, and returns a
:class:`ManifestEntry` ``(path, records, sha256, bytes)`` computed while writing. The
file is written to a hidden temporary file in the destination's directory and renamed
into place only on success: after an error nothing partial remains. An existing file is
never replaced unless ``overwrite=True`` (releases are immutable).

Records (:mod:`.records`)
    SQuAD: ``SquadArticle(title, paragraphs)`` -> ``SquadParagraph(context, qas)`` ->
    ``SquadQuestion(id, question, answers, is_impossible, plausible_answers)`` ->
    ``SquadAnswer(text, answer_start, worker)``; or flat ``SquadRow(title, context,
    question, article_key, paragraph_key)`` grouped by :func:`squad_articles_from_rows`.
    NewsQA: ``NewsqaStory(story_id, text, type, questions)`` ->
    ``NewsqaQuestion(q, answers, is_answer_absent, is_question_bad, validated_answers,
    consensus)`` with ``NewsqaSourcerAnswer(spans, worker)``,
    ``NewsqaValidatedAnswer(choice, count)``, ``CharSpan(s, e)``, ``NO_ANSWER``,
    ``BAD_QUESTION``.
    MS MARCO: ``MarcoRecord(query_id, query, query_type, passages, answers,
    well_formed_answers, workers)`` with ``MarcoPassage(passage_text, url, is_selected)``.
    ReCO: ``RecoRecord(query_id, query, doc, passage, alternatives, answer, url,
    annotator)``.
    DuReader: ``DureaderRecord(question_id, question, question_type, fact_or_opinion,
    documents, answers, yesno_answers, entity_answers, yesno_type, <preprocessed
    fields>, workers)`` with ``DureaderDocument(title, paragraphs, bs_rank_pos,
    is_selected, segmented_title, segmented_paragraphs, most_related_para)``.

Writers (all ``(path, records, *, progress=None, progress_every=1000, overwrite=False)
-> ManifestEntry``, plus the options shown)
    ``write_squad_v1(..., skip_unanswerable=False)``, ``write_squad_v2``
    ``write_newsqa_json(..., ensure_ascii=False)``,
    ``write_newsqa_csv(..., include_story_text=True)``,
    ``write_newsqa_story_ids`` (a split's ``<split>_story_ids.csv``)
    Fed one record at a time, for one read of the data feeding several files:
    ``SquadWriter(path, *, v2, ...)`` (``add(article)``) and ``NewsqaJsonWriter(path,
    ...)`` (``add(story)``), context managers whose ``entry`` is set on success.
    ``write_msmarco_jsonl``, ``write_msmarco_columnar``, ``write_msmarco_references``
    ``write_reco``, ``write_dureader``
    Hugging Face: ``write_hf_split(folder, split, records, *, kind, fmt="parquet",
    pseudonyms=None, ...)`` -> ``data/<split>.parquet|jsonl``;
    ``write_dataset_card(folder, *, kind, splits, datasheet, fmt, pseudonyms, ...)`` ->
    ``README.md`` with ``configs``/``data_files`` for ``datasets.load_dataset(folder)``.
    Datasheet: ``render_datasheet(sheet, *, pseudonyms=None)`` -> Markdown,
    ``write_datasheet(path, sheet, ...)`` -> ``DATASHEET.md`` (keys: :class:`Datasheet`).
    Checksums: ``write_checksums(path, entries)`` (``sha256sum -c`` format),
    ``verify_entry(entry, root)``.
    Per-record helpers (validated official objects, e.g. for previews):
    ``squad_question_object``, ``newsqa_question_object``, ``newsqa_consensus`` (the
    consensus Maluuba's loader computes), ``msmarco_row``, ``reco_row``,
    ``dureader_row``, ``hf_rows(kind, records)``; ``squad_id(namespace, key)`` makes a
    stable 24-hex question id.

Workers (:mod:`.pseudonyms`)
    ``Pseudonymizer(salt, *, length=8, omit=False)`` maps worker ids to ``w-<hex>``
    (HMAC-SHA256 with the per-release ``new_release_salt()``); ``Pseudonymizer.fitted(
    salt, worker_ids)`` picks the shortest collision-free length. Only the Hugging Face
    rows and the datasheet carry workers, always through it.
"""

from collector.exporters.datasheet import (
    BatchInspection,
    Datasheet,
    HumanPerformance,
    Licence,
    StageInfo,
    render_datasheet,
    write_datasheet,
)
from collector.exporters.dureader import dureader_row, write_dureader
from collector.exporters.errors import ExportError, InvalidRecordError, RecordOrderError
from collector.exporters.hf import (
    HF_KINDS,
    hf_columns,
    hf_rows,
    hf_schema,
    hf_split_path,
    parquet_available,
    render_dataset_card,
    write_dataset_card,
    write_hf_split,
)
from collector.exporters.msmarco import (
    msmarco_row,
    write_msmarco_columnar,
    write_msmarco_jsonl,
    write_msmarco_references,
)
from collector.exporters.newsqa import (
    NewsqaJsonWriter,
    newsqa_consensus,
    newsqa_question_object,
    write_newsqa_csv,
    write_newsqa_json,
    write_newsqa_story_ids,
)
from collector.exporters.pseudonyms import (
    PseudonymCollisionError,
    Pseudonymizer,
    new_release_salt,
)
from collector.exporters.reco import reco_row, write_reco
from collector.exporters.records import (
    BAD_QUESTION,
    NO_ANSWER,
    NO_ANSWER_PRESENT,
    CharSpan,
    DureaderDocument,
    DureaderRecord,
    MarcoPassage,
    MarcoRecord,
    NewsqaQuestion,
    NewsqaSourcerAnswer,
    NewsqaStory,
    NewsqaValidatedAnswer,
    RecoRecord,
    SquadAnswer,
    SquadArticle,
    SquadParagraph,
    SquadQuestion,
    SquadRow,
    WorkerRef,
)
from collector.exporters.squad import (
    SquadWriter,
    check_squad_answer,
    squad_articles_from_rows,
    squad_id,
    squad_question_object,
    write_squad_v1,
    write_squad_v2,
)
from collector.exporters.stream import (
    AtomicOutput,
    ManifestEntry,
    ProgressCallback,
    sha256_file,
    verify_entry,
    write_checksums,
)

__all__ = [
    "BAD_QUESTION",
    "HF_KINDS",
    "NO_ANSWER",
    "NO_ANSWER_PRESENT",
    "AtomicOutput",
    "BatchInspection",
    "CharSpan",
    "Datasheet",
    "DureaderDocument",
    "DureaderRecord",
    "ExportError",
    "HumanPerformance",
    "InvalidRecordError",
    "Licence",
    "ManifestEntry",
    "MarcoPassage",
    "MarcoRecord",
    "NewsqaJsonWriter",
    "NewsqaQuestion",
    "NewsqaSourcerAnswer",
    "NewsqaStory",
    "NewsqaValidatedAnswer",
    "ProgressCallback",
    "PseudonymCollisionError",
    "Pseudonymizer",
    "RecoRecord",
    "RecordOrderError",
    "SquadAnswer",
    "SquadArticle",
    "SquadParagraph",
    "SquadQuestion",
    "SquadRow",
    "SquadWriter",
    "StageInfo",
    "WorkerRef",
    "check_squad_answer",
    "dureader_row",
    "hf_columns",
    "hf_rows",
    "hf_schema",
    "hf_split_path",
    "msmarco_row",
    "new_release_salt",
    "newsqa_consensus",
    "newsqa_question_object",
    "parquet_available",
    "reco_row",
    "render_dataset_card",
    "render_datasheet",
    "sha256_file",
    "squad_articles_from_rows",
    "squad_id",
    "squad_question_object",
    "verify_entry",
    "write_checksums",
    "write_datasheet",
    "write_dataset_card",
    "write_dureader",
    "write_hf_split",
    "write_msmarco_columnar",
    "write_msmarco_jsonl",
    "write_msmarco_references",
    "write_newsqa_csv",
    "write_newsqa_json",
    "write_newsqa_story_ids",
    "write_reco",
    "write_squad_v1",
    "write_squad_v2",
]
