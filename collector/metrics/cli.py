"""``python -m collector.metrics <command> ...``: score files, print one JSON object.

Commands (file names are as the official scripts take them)::

    squad-v1 DATA.json PRED.json                       -> exact_match, f1
    squad-v2 DATA.json PRED.json [-n NA_PROB.json] [-t THRESH]
                                                       -> exact, f1, total, HasAns_*, NoAns_*,
                                                          best_* (with -n)
    dureader PRED.jsonl REF.jsonl [--scorer mrc2018|dureader2] [--alpha A] [--beta B]
             [--gamma G] [--tokens char|word]      -> "ROUGE-L", "BLEU-4" (x100, 2 dp),
                                                          BLEU-1..3, counts, by_type
             (REF in the evaluation layout or DuReader's data layout, converted on read)
    msmarco REF.jsonl CAND.jsonl                       -> bleu_1..bleu_4, rouge_l, F1
    pa --metric bleu|meteor REFS.json CANDS.json       -> per-candidate pa-scores and the
                                                          reference weights
    competence --kind labels FILE.jsonl                -> method, workers{accuracy}, items
               (lines {"item", "worker", "label"})        (Dawid-Skene)
    competence --kind spans FILE.jsonl [--resamples N] [--seed S]
               (lines {"item", "worker", "answer"})    -> workers{f1, low, high}
                                                          (leave-one-out F1, bootstrap CI)
    judgment --refs REF.jsonl --preds NAME=PRED.jsonl [--preds ...] --ratings R.jsonl
             [--alpha 2.0] [--beta 1.0] [--resamples 100] [--sample 30] [--seed 0]
             (ratings {"question_id", "system",        -> table1, table2, table3, bootstrap,
              "rater", "score": 1-5})                     candidates (adapted-metrics
                                                          paper section 4), and
                                                          table1_krippendorff_alpha,
                                                          table1_one_rating, ...

On bad input (malformed file, unknown or missing ids with ``--strict``, empty input, or a
case where the official script would crash) it prints one line ``error: ...`` on stderr
and exits with status 2; warnings (ignored unknown ids, unanswered questions scored 0,
with their counts) go to stderr as well. Ids: see ``collector.metrics.files``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from collector.metrics.errors import MetricsInputError

EXIT_INPUT_ERROR = 2


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_INPUT_ERROR, f"error: {self.prog}: {message} (see --help)\n")


def _finite(value: str) -> float:
    number = float(value)
    if not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"not a finite number: {value!r}")
    return number


def bonus_weight(value: str) -> float:
    """An argparse type for a bonus weight (``--alpha``, ``--beta``): a finite number >= 0."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number, got {value!r}") from None
    if not math.isfinite(number) or number < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {value!r}")
    return number


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m collector.metrics",
        description="Score MRC predictions exactly as the official scripts do; prints JSON.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    from collector.metrics.dureader import SCORERS
    from collector.metrics.files import IDS_HELP

    p = sub.add_parser("squad-v1", help="SQuAD v1.1 exact match and F1", description=IDS_HELP)
    p.add_argument("data_file", help="SQuAD dataset JSON")
    p.add_argument("pred_file", help="JSON object: question id -> answer text")
    p.add_argument("--strict", action="store_true",
                   help="error on predictions for unknown ids and on missing predictions "
                   "(default: ignored / scored 0 with a warning, as evaluate-v1.1.py)")

    p = sub.add_parser("squad-v2", help="SQuAD v2.0 exact/F1 with HasAns/NoAns breakdown",
                       description=IDS_HELP)
    p.add_argument("data_file", help="SQuAD v2.0 dataset JSON")
    p.add_argument("pred_file", help="JSON object: question id -> answer text ('' = none)")
    p.add_argument("-n", "--na-prob-file", dest="na_prob_file",
                   help="JSON object: question id -> probability of no answer")
    p.add_argument("-t", "--na-prob-thresh", dest="na_prob_thresh", type=_finite,
                   default=1.0, help="predict no answer above this probability (1.0)")
    p.add_argument("--strict", action="store_true",
                   help="error on predictions for unknown question ids (default: ignored "
                   "with a warning, as evaluate-v2.0.py)")

    p = sub.add_parser(
        "dureader", help="DuReader BLEU-4 and ROUGE-L (default: MRC2018 with bonuses)",
        description="Scorers: " + "; ".join(f"{k}: {v}" for k, v in SCORERS.items())
        + ". The reference file may be in the evaluation layout (question_id, "
        "question_type, source, answers, yesno_answers, entity_answers) or in DuReader's "
        "data layout (records with documents, as DuReader's files and CrowdQA's "
        "dureader.<split>.jsonl release files have), converted on read. " + IDS_HELP)
    p.add_argument("pred_file", help="JSON lines: question_id, answers, yesno_answers")
    p.add_argument("ref_file", help="JSON lines: the evaluation layout or DuReader's data "
                   "layout")
    p.add_argument("--scorer", choices=list(SCORERS), default="mrc2018",
                   help="mrc2018: the MRC2018 bonus scorer (default); dureader2: DuReader "
                   "2.0's dureader_eval.py (coco-caption BLEU and ROUGE-L, no bonuses)")
    p.add_argument("--alpha", type=bonus_weight, default=None,
                   help="mrc2018: yes-no bonus weight, a number >= 0 (1.0)")
    p.add_argument("--beta", type=bonus_weight, default=None,
                   help="mrc2018: entity bonus weight, a number >= 0 (1.0)")
    p.add_argument("--gamma", type=_finite, default=1.2, help="ROUGE-L recall weight (1.2)")
    p.add_argument("--tokens", choices=("char", "word"), default="char",
                   help="char: Chinese characters, whitespace removed (official); word: "
                   "English words and punctuation")
    p.add_argument("--strict", action="store_true",
                   help="error on predictions whose question_id is not in the references "
                   "(default: ignored with a warning, as the official scorers)")

    p = sub.add_parser("msmarco", help="MS MARCO Q&A BLEU-1..4, ROUGE-L and F1")
    p.add_argument("ref_file", help="JSON lines: query_id, answers (reference first)")
    p.add_argument("cand_file", help="JSON lines: query_id, answers (one answer each)")

    from collector.metrics.pa import CLI_FORMAT_HELP

    p = sub.add_parser("pa", help="pa-BLEU / pa-METEOR over many references",
                       description=CLI_FORMAT_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--metric", choices=("bleu", "meteor"), required=True)
    p.add_argument("refs_file", help="JSON: query id -> list of references, or one list")
    p.add_argument("cands_file", help="JSON: query id -> candidate(s), or one list")
    p.add_argument("--exclude-self", action="store_true",
                   help="leave Sim(Ref_i, Ref_i) out of Imp(Ref_i) (Eq. 2 read as j != i)")
    p.add_argument("--outlier-ratio", type=_finite, default=0.5,
                   help="flag references whose weight is below this fraction of the median")
    p.add_argument("--tokens", choices=("word", "char"), default="word",
                   help="word: English words and punctuation, lower-cased (the paper's); "
                   "char: characters without whitespace, for Chinese")

    p = sub.add_parser("competence", help="worker competence from their judgments",
                       description="labels: Dawid-Skene accuracy per worker and the "
                       "estimated label per item; spans: each worker's token F1 against the "
                       "other answerers' consensus, with a bootstrap interval over items. "
                       "See collector/metrics/competence.py.")
    p.add_argument("--kind", choices=("labels", "spans"), required=True)
    p.add_argument("file", help='JSON lines {"item", "worker", "label"} (labels) or '
                   '{"item", "worker", "answer"} (spans, "" for no answer)')
    p.add_argument("--resamples", type=_positive_int, default=1000,
                   help="spans: bootstrap resamples (1000)")
    p.add_argument("--seed", type=_non_negative_int, default=0,
                   help="spans: bootstrap seed (0)")
    p = sub.add_parser("judgment", help="human judgment study of (adapted) ROUGE-L / BLEU-4",
                       description="Rater agreement (Table 1: Pearson r over every pair of "
                       "a candidate's ratings, and Krippendorff's interval alpha), "
                       "single-question (Table 2) and "
                       "overall-level (Table 3) Pearson r of ROUGE-L and BLEU-4, original and "
                       "adapted, with the mean human score; paired bootstrap; alpha / beta "
                       "sweeps. See collector/metrics/judgment.py.")
    p.add_argument("--refs", required=True, help="DuReader reference JSON lines")
    p.add_argument("--preds", required=True, action="append", type=_named_file,
                   metavar="NAME=PRED.jsonl", help="a system's DuReader predictions (repeat)")
    p.add_argument("--ratings", required=True, help='JSON lines {"question_id", "system", '
                   '"rater", "score"}')
    p.add_argument("--alpha", type=bonus_weight, default=2.0,
                   help="yes-no bonus weight, a number >= 0 (2.0)")
    p.add_argument("--beta", type=bonus_weight, default=1.0,
                   help="entity bonus weight, a number >= 0 (1.0)")
    p.add_argument("--gamma", type=_finite, default=1.2, help="ROUGE-L recall weight (1.2)")
    p.add_argument("--resamples", type=_positive_int, default=100,
                   help="bootstrap resamples and overall-level draws (100)")
    p.add_argument("--sample", type=_positive_int, default=30,
                   help="questions per overall-level draw (30)")
    p.add_argument("--seed", type=_non_negative_int, default=0, help="random seed (0)")
    p.add_argument("--tokens", choices=("char", "word"), default="char",
                   help="char: Chinese characters (official); word: English words")
    return parser


def _named_file(value: str) -> tuple[str, str]:
    name, sep, path = value.partition("=")
    if not sep or not name.strip() or not path:
        raise argparse.ArgumentTypeError(f"expected NAME=FILE, got {value!r}")
    return name.strip(), path


def _positive_int(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"not a positive integer: {value!r}")
    return number


def _non_negative_int(value: str) -> int:
    number = int(value)
    if number < 0:
        raise argparse.ArgumentTypeError(f"not a non-negative integer: {value!r}")
    return number


def _competence(args: argparse.Namespace) -> dict[str, Any]:
    from collector.metrics.competence import (
        labels_competence,
        read_judgments,
        spans_competence,
    )

    rows = read_judgments(args.file, kind=args.kind)
    if args.kind == "labels":
        return labels_competence(rows)
    result = spans_competence(rows, resamples=args.resamples, seed=args.seed)
    unscored = sorted({r["worker"] for r in rows} - set(result["workers"]))
    if unscored:
        print(f"warning: {len(unscored)} worker(s) share no item with another worker and "
              f"have no score, e.g. {unscored[0]!r}", file=sys.stderr)
    return result


def _run(args: argparse.Namespace) -> dict[str, Any]:
    if args.command in ("squad-v1", "squad-v2", "dureader", "msmarco"):
        from collector.metrics.files import score_files

        if args.command == "msmarco":
            gold, predictions = args.ref_file, args.cand_file
        elif args.command == "dureader":
            gold, predictions = args.ref_file, args.pred_file
        else:
            gold, predictions = args.data_file, args.pred_file
        extra: dict[str, Any] = {}
        if args.command == "squad-v2":
            extra = {"na_prob_file": args.na_prob_file, "na_prob_thresh": args.na_prob_thresh}
        if args.command == "dureader":
            extra = {"scorer": args.scorer, "alpha": args.alpha, "beta": args.beta,
                     "gamma": args.gamma, "level": args.tokens}
        result, warnings = score_files(args.command, gold=gold, predictions=predictions,
                                       strict=getattr(args, "strict", False), **extra)
        for warning in warnings:
            print(f"warning: {warning}", file=sys.stderr)
        return result
    if args.command == "competence":
        return _competence(args)
    if args.command == "judgment":
        from collector.metrics.judgment import judgment_study_files

        return judgment_study_files(args.refs, args.preds, args.ratings, level=args.tokens,
                                    alpha=args.alpha, beta=args.beta, gamma=args.gamma,
                                    resamples=args.resamples, sample=args.sample,
                                    seed=args.seed)
    from collector.metrics.pa import pa_score_files

    return pa_score_files(args.refs_file, args.cands_file, metric=args.metric,
                          include_self=not args.exclude_self,
                          outlier_ratio=args.outlier_ratio, level=args.tokens)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        result = _run(args)
    except MetricsInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    except RecursionError:
        print("error: input nested too deeply to parse", file=sys.stderr)
        return EXIT_INPUT_ERROR
    except MemoryError:
        print("error: input too large for memory", file=sys.stderr)
        return EXIT_INPUT_ERROR
    print(json.dumps(result, ensure_ascii=False))
    return 0
