"""CrowdQA automatic filters for the ReCO recipe: pure Python, no Django.

Implements the computations of ``reco-opinion-dataset.md`` ("Data Collection") that the
``reco`` pipeline stages call: query filtering (intent, inappropriate content, yes/no
features), trivial-overlap document filtering, and the checkers' batch inspection
arithmetic. Every decision carries its reason and score so it can be stored with the item
and audited. Languages: ``"en"`` and ``"zh"`` (``"auto"`` picks per text).

Query filter (:mod:`.query`; paper: Intent Analysis + Query Filtering)
    ``QueryFilter(*, language="auto", steps=STEPS, intent_mode="rules",
    intent_models=None, blocklists=None, yesno_features=None, yesno_threshold=0.5,
    all_steps=False)``; ``QueryFilter.from_params(dict)`` / ``.params()`` for JSON stage
    parameters. ``.check(text, *, all_steps=None) -> QueryVerdict`` (``accepted``,
    ``failed_step``, ``reason``, ``matched``, ``score``, ``steps``: one
    ``StepVerdict(step, passed, reason, matched, score)`` per step that ran);
    ``.check_many(texts) -> Iterator[QueryVerdict]`` streams.
    Steps: ``IntentRules(language).check(text)``; ``Blocklist(language, terms)``,
    ``Blocklist.default(language)`` (shipped ``blocklists/<language>.txt``),
    ``.from_file``, ``.match(text) -> term | None``;
    ``YesNoClassifier(language, features=None, threshold=0.5)`` with
    ``YesNoFeature(name, pattern, weight)`` and ``DEFAULT_YESNO_FEATURES``.
    Optional trained intent model (:mod:`.classifier`):
    ``IntentClassifier.train(samples, *, language, l2=1e-3, ...)``, ``.probability``,
    ``.predict``, ``.save(path)`` / ``.load(path)``, ``.to_dict()`` / ``.from_dict()``.
    Measuring against an admin's labels: ``evaluate_filter(query_filter, labelled, *,
    step=None) -> FilterEvaluation`` (tp/fp/fn/tn, precision, recall, F1, accuracy,
    examples of errors); ``precision_recall_f1(tp, fp, fn)``; ``parse_label``.

Document filter (:mod:`.documents`; paper: Document Filtering)
    ``DocumentFilter(*, language="auto", rules=("contains", "ngram", "window"),
    ngram_n=None, ngram_threshold=0.8, window_factor=1.5, window_threshold=0.9,
    strip_question=True)``; ``.prepare(query) -> PreparedQuery``;
    ``.check(query, document) -> DocumentVerdict(kept, rule, reason, score, scores,
    matched)``; ``.check_many(query, documents)``; ``from_params`` / ``params``;
    ``query_core(text, language)``.

Batch inspection (:mod:`.inspection`; paper: Quality Inspection)
    ``sample_batch(item_ids, *, fraction, seed=None, minimum=1) -> InspectionSample``;
    ``round_seed(base_seed, round_number)``; ``Violation`` (two strict rules, 1.0; two
    loose rules, 0.5); ``item_error(violations)`` (distinct rules add up, capped at 1.0);
    ``inspect_batch(sampled_ids, marks, *, threshold=0.95) -> InspectionResult``
    (``accuracy = 1 - errors / sampled``; passes only when ``accuracy > threshold``,
    compared exactly).

Text helpers (:mod:`.text`): ``normalize``, ``detect_language``, ``en_words``,
``zh_words`` (jieba, loaded once per process), ``content_chars``.
"""

from collector.filters.blocklist import Blocklist
from collector.filters.classifier import IntentClassifier, parse_label
from collector.filters.documents import (
    DOCUMENT_RULES,
    DocumentFilter,
    DocumentVerdict,
    PreparedQuery,
    query_core,
)
from collector.filters.inspection import (
    InspectionResult,
    InspectionSample,
    Violation,
    inspect_batch,
    item_error,
    round_seed,
    sample_batch,
    sample_size,
)
from collector.filters.query import (
    DEFAULT_YESNO_FEATURES,
    INTENT_MODES,
    STEPS,
    FilterEvaluation,
    IntentRules,
    QueryFilter,
    QueryVerdict,
    StepVerdict,
    YesNoClassifier,
    YesNoFeature,
    evaluate_filter,
    precision_recall_f1,
)
from collector.filters.text import detect_language, normalize

__all__ = [
    "DEFAULT_YESNO_FEATURES",
    "DOCUMENT_RULES",
    "INTENT_MODES",
    "STEPS",
    "Blocklist",
    "DocumentFilter",
    "DocumentVerdict",
    "FilterEvaluation",
    "InspectionResult",
    "InspectionSample",
    "IntentClassifier",
    "IntentRules",
    "PreparedQuery",
    "QueryFilter",
    "QueryVerdict",
    "StepVerdict",
    "Violation",
    "YesNoClassifier",
    "YesNoFeature",
    "detect_language",
    "evaluate_filter",
    "inspect_batch",
    "item_error",
    "normalize",
    "parse_label",
    "precision_recall_f1",
    "query_core",
    "round_seed",
    "sample_batch",
    "sample_size",
]
