"""Benchmark: the ReCO query filter on 1,000,000 queries, streamed, memory flat.

Run from the repository root::

    .venv/bin/python bench/query_filter.py [--queries 1000000] [--seed 20200207]
        [--zh-share 0.6] [--chunk 10000] [--baseline-every 20]

1. Generates queries with a fixed seed, mixing Chinese and English (``--zh-share``):
   real queries from ``data/datasets/search_queries`` (NQ-open, DuReader demo) with one
   word swapped for a word of the samples' vocabulary; yes/no templates (auxiliary
   inversions, "could I", "is there any", "whether"; 吗, 能不能, 可不可以, 会不会, 有没有,
   是否 ...); keyword (non-question) queries; and questions carrying a term of the shipped
   blocklists. Lengths follow the samples (about 4-12 English words, 5-16 characters).
2. Streams them through ``collector.filters.QueryFilter()`` (default parameters: both
   languages, rules intent, shipped blocklists, default yes/no features) in chunks of
   ``--chunk`` queries: each chunk is generated, then filtered; only the filter is timed
   (generation is timed apart). Nothing is kept but counters, so memory stays flat; RSS
   is sampled from ``/proc/self/status`` every 100,000 queries.
3. In the same run, every ``--baseline-every``-th chunk is also filtered by the
   *baseline* named in the output: a naive implementation of the same decisions — jieba
   on every Chinese query (no substring pre-scan), the blocklist scanned term by term
   against every token span, the yes/no patterns looked up by string on every call — and
   the verdicts (accepted, failed step, matched term) are checked to be identical.
4. Prints queries/s, peak RSS, the ratio against the naive baseline and against the
   target (1,000,000 queries in 6 minutes = 2,778 queries/s).

The last line is ``RESULT query_filter queries_per_s=<q/s> peak_rss_mb=<MB>``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from collector.filters import QueryFilter, QueryVerdict  # noqa: E402
from collector.filters.query import StepVerdict  # noqa: E402
from collector.filters.text import (  # noqa: E402
    detect_language,
    en_words,
    jieba_tokenizer,
    normalize,
    zh_subwords,
    zh_words,
)

TARGET_QPS = 1_000_000 / 360
SAMPLES = ROOT / "data" / "datasets" / "search_queries"

EN_AUX = ["is", "are", "does", "do", "can", "could", "should", "will", "did", "was", "has"]
EN_YESNO = [
    "{aux} {a} {b}",
    "{aux} {a} {b} {c}",
    "{aux} the {a} {b} {c} {d}",
    "can i {a} {b} {c}",
    "could i {a} my {b}",
    "is there any {a} in {b} {c}",
    "is it safe to {a} {b}",
    "whether to {a} {b} {c}",
    "{aux} {a} {b} {c}?",
]
EN_BLOCK = ["porn", "cocaine", "sex", "heroin", "meth", "nude", "kill myself", "xxx"]
ZH_YESNO = [
    "{a}{b}能{c}吗",
    "{a}可以{b}吗",
    "{a}{b}会不会{c}",
    "{a}能不能{b}{c}",
    "{a}可不可以{b}",
    "{a}有没有{b}",
    "{a}是否{b}{c}",
    "{a}{b}是不是{c}",
    "{a}{b}好不好",
    "{a}{b}靠谱吗",
]
ZH_BLOCK = ["色情", "大麻", "约炮", "毒品", "强奸", "黄片", "吸毒", "自杀"]
ZH_ENDINGS = ["怎么办", "怎么样", "是什么", "吗", "多少钱", "在哪里", "有哪些"]


# --------------------------------------------------------------------------- data
def _load(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line)["question"] for line in fh if line.strip()]


class QueryGenerator:
    """Deterministic query stream: real queries perturbed, templates, keyword queries."""

    def __init__(self, seed: int, zh_share: float) -> None:
        self.rng = random.Random(seed)
        self.zh_share = zh_share
        self.en_real = _load(SAMPLES / "queries.en.nq_open_dev.sample.jsonl")
        self.zh_real = _load(SAMPLES / "queries.zh.dureader_demo.sample.jsonl")
        self.en_vocab = sorted({w for q in self.en_real for w in en_words(q) if len(w) > 2})
        self.zh_vocab = sorted(
            {w for q in self.zh_real for w in zh_words(q) if len(w) >= 2 and not w.isascii()}
        )
        self.kinds = Counter()

    def chunk(self, n: int) -> list[str]:
        rng = self.rng
        out = []
        for _ in range(n):
            zh = rng.random() < self.zh_share
            r = rng.random()
            if r < 0.45:
                kind, q = "real", self._real_zh() if zh else self._real_en()
            elif r < 0.70:
                kind, q = "yesno_template", self._yesno_zh() if zh else self._yesno_en()
            elif r < 0.95:
                kind, q = "keywords", self._keywords_zh() if zh else self._keywords_en()
            else:
                kind, q = "blocklisted", self._blocked_zh() if zh else self._blocked_en()
            self.kinds[("zh" if zh else "en", kind)] += 1
            out.append(q)
        return out

    def _words(self, k: int) -> list[str]:
        return self.rng.choices(self.en_vocab, k=k)

    def _real_en(self) -> str:
        words = self.rng.choice(self.en_real).split()
        words[self.rng.randrange(len(words))] = self.rng.choice(self.en_vocab)
        return " ".join(words)

    def _real_zh(self) -> str:
        q = self.rng.choice(self.zh_real)
        if len(q) > 4:  # two characters swapped for a word of the samples' vocabulary
            i = self.rng.randrange(len(q) - 2)
            q = q[:i] + self.rng.choice(self.zh_vocab) + q[i + 2 :]
        return q

    def _yesno_en(self) -> str:
        a, b, c, d = self._words(4)
        aux = self.rng.choice(EN_AUX)
        return self.rng.choice(EN_YESNO).format(aux=aux, a=a, b=b, c=c, d=d)

    def _yesno_zh(self) -> str:
        a, b, c = self.rng.choices(self.zh_vocab, k=3)
        return self.rng.choice(ZH_YESNO).format(a=a, b=b, c=c)

    def _keywords_en(self) -> str:
        return " ".join(self._words(self.rng.randint(2, 7)))

    def _keywords_zh(self) -> str:
        return "".join(self.rng.choices(self.zh_vocab, k=self.rng.randint(2, 5)))

    def _blocked_en(self) -> str:
        a, b = self._words(2)
        lead = self.rng.choice(["where to find", "is", "how much is", "can i buy"])
        return f"{lead} {a} {self.rng.choice(EN_BLOCK)} {b}"

    def _blocked_zh(self) -> str:
        a = self.rng.choice(self.zh_vocab)
        return f"{a}{self.rng.choice(ZH_BLOCK)}{self.rng.choice(ZH_ENDINGS)}"


# --------------------------------------------------------------------------- baseline
class NaiveFilter:
    """The same three steps written the straightforward way (the named baseline).

    Differences from ``QueryFilter``, all about speed: jieba runs on every Chinese query
    (no substring pre-scan); every token span is built and compared with every
    blocklisted term in a list; yes/no patterns are looked up by string on each call
    (``re.search(pattern, text)``, the ``re`` module's cache); verdict objects are built
    for every step. The intent rules are the same objects (they are cheap either way).
    """

    def __init__(self, reference: QueryFilter) -> None:
        self.ref = reference
        self.terms = {lang: list(reference.blocklist(lang).terms) for lang in ("en", "zh")}
        self.features = {
            lang: [(f.name, f.pattern, f.weight) for f in reference.yesno_classifier(lang).features]
            for lang in ("en", "zh")
        }
        self.threshold = reference.yesno_threshold

    def check(self, text: str) -> QueryVerdict:
        norm = normalize(text)
        lang = detect_language(norm)
        if not norm:
            step = StepVerdict("intent", False, "empty query")
            return QueryVerdict(text, lang, False, "intent", step.reason, (), None, (step,))
        pipeline = self.ref._pipelines[lang]
        intent = pipeline.rules.check(norm, en_words(norm) if lang == "en" else None)
        if not intent.passed:
            return QueryVerdict(text, lang, False, "intent", intent.reason, (), None, (intent,))
        term = self._blocklisted(norm, lang)
        if term is not None:
            reason = f"inappropriate content: blocklisted term '{term}'"
            step = StepVerdict("blocklist", False, reason, (term,))
            return QueryVerdict(text, lang, False, "blocklist", reason, (term,), None, (step,))
        total = 0.0
        fired = []
        for name, pattern, weight in self.features[lang]:
            m = re.search(pattern, norm)
            if m is not None:
                total += weight
                fired.append(f"{name}:{m.group(0)}")
        ok = total >= self.threshold
        return QueryVerdict(text, lang, ok, None if ok else "yesno", "", tuple(fired), total, ())

    def _blocklisted(self, norm: str, lang: str) -> str | None:
        if lang == "en":
            tokens, sep = en_words(norm), " "
        else:
            tokens, sep = zh_words(norm), ""
        for i in range(len(tokens)):
            spans = [sep.join(tokens[i:j]) for j in range(i + 1, len(tokens) + 1)]
            if lang == "zh":
                spans += zh_subwords(tokens[i])
            hits = [s for s in spans if s in self.terms[lang]]
            if hits:
                return max(hits, key=len) if lang == "en" else _zh_pick(hits, tokens[i])
        return None


def _zh_pick(hits: list[str], token: str) -> str:
    # QueryFilter prefers a whole token or token join (longest) over a sub-word
    joined = [h for h in hits if h.startswith(token)]
    return max(joined, key=len) if joined else hits[0]


# --------------------------------------------------------------------------- memory
def _status_mb(field: str) -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def rss_mb() -> float:
    """Current resident set size (VmRSS), MB."""
    return _status_mb("VmRSS")


def peak_rss_mb() -> float:
    """Peak resident set size: the larger of VmHWM and getrusage's ru_maxrss (KiB), MB."""
    return max(_status_mb("VmHWM"), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def per_language(qf: QueryFilter, seed: int, n: int) -> str:
    """Throughput on English-only and Chinese-only streams of the same generator."""
    parts = []
    for lang, share in (("en", 0.0), ("zh", 1.0)):
        queries = QueryGenerator(seed + 1, share).chunk(n)
        t = time.perf_counter()
        for _ in qf.check_many(queries):
            pass
        parts.append(f"{lang} {n / (time.perf_counter() - t):,.0f} queries/s")
    return ", ".join(parts)


def same(a: QueryVerdict, b: QueryVerdict) -> bool:
    return (a.accepted, a.failed_step, a.matched if a.failed_step != "intent" else ()) == (
        b.accepted,
        b.failed_step,
        b.matched if b.failed_step != "intent" else (),
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=20200207)
    ap.add_argument("--zh-share", type=float, default=0.6)
    ap.add_argument("--chunk", type=int, default=10_000)
    ap.add_argument("--baseline-every", type=int, default=20)
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    jieba_tokenizer()  # load jieba's dictionary once, before timing
    qf = QueryFilter()
    naive = NaiveFilter(qf)
    gen = QueryGenerator(args.seed, args.zh_share)
    setup_s = time.perf_counter() - t0
    print(
        f"setup: jieba dictionary + filter + generator vocabulary in {setup_s:.2f} s "
        f"(vocabulary {len(gen.en_vocab)} English words, {len(gen.zh_vocab)} Chinese words "
        f"from the real samples); RSS {rss_mb():.1f} MB"
    )

    outcomes: Counter[tuple[str, str]] = Counter()
    filter_s = gen_s = base_s = ours_on_base_s = 0.0
    base_n = mismatches = 0
    rss_samples: list[tuple[int, float]] = []
    done = 0
    chunk_no = 0
    check_many = qf.check_many
    while done < args.queries:
        n = min(args.chunk, args.queries - done)
        t = time.perf_counter()
        chunk = gen.chunk(n)
        gen_s += time.perf_counter() - t

        t = time.perf_counter()
        for v in check_many(chunk):
            outcomes[(v.language, "accepted" if v.accepted else v.failed_step or "")] += 1
        elapsed = time.perf_counter() - t
        filter_s += elapsed

        if chunk_no % args.baseline_every == 0:
            t = time.perf_counter()
            naive_verdicts = [naive.check(q) for q in chunk]
            base_s += time.perf_counter() - t
            ours_on_base_s += elapsed
            base_n += n
            ours = list(check_many(chunk))
            mismatches += sum(not same(a, b) for a, b in zip(ours, naive_verdicts, strict=True))
            del naive_verdicts, ours
        done += n
        chunk_no += 1
        if done % 100_000 == 0 or done == args.queries:
            rss_samples.append((done, rss_mb()))
        del chunk

    qps = done / filter_s
    base_qps = base_n / base_s if base_s else float("nan")
    ours_base_qps = base_n / ours_on_base_s if ours_on_base_s else float("nan")

    total = sum(outcomes.values())
    print(
        f"queries: {done:,} generated in {gen_s:.1f} s (seed {args.seed}, "
        f"zh share {args.zh_share}, chunks of {args.chunk:,}); mix by construction: "
        + ", ".join(
            f"{lang} {kind} {100 * c / total:.1f}%" for (lang, kind), c in sorted(gen.kinds.items())
        )
    )
    print(
        "verdicts: "
        + ", ".join(
            f"{lang} {what} {100 * c / total:.1f}%" for (lang, what), c in sorted(outcomes.items())
        )
    )
    accepted = sum(c for (_, what), c in outcomes.items() if what == "accepted")
    print(f"accepted overall: {accepted:,} ({100 * accepted / total:.1f}%)")
    print(
        f"ours (collector.filters.QueryFilter, default parameters): {filter_s:.2f} s for "
        f"{done:,} queries = {qps:,.0f} queries/s ({1e6 / qps:.1f} us/query)"
    )
    print(
        f"target: 1,000,000 queries in 360 s = {TARGET_QPS:,.0f} queries/s; "
        f"ours / target = {qps / TARGET_QPS:.1f}x; "
        f"1,000,000 queries would take {1e6 / qps:.1f} s"
    )
    print(
        f"baseline (naive: jieba on every Chinese query, blocklist scanned term by term, "
        f"patterns looked up per call) on one chunk in {args.baseline_every} "
        f"({base_n:,} queries): {base_s:.2f} s = {base_qps:,.0f} queries/s; ours on the "
        f"same chunks {ours_on_base_s:.2f} s = {ours_base_qps:,.0f} queries/s; "
        f"speedup {base_s / ours_on_base_s:.1f}x"
    )
    print(
        f"identical verdicts on the baseline chunks: {'yes' if mismatches == 0 else 'NO'} "
        f"({mismatches} differ)"
    )
    by_language = per_language(qf, args.seed, 50_000)
    print(f"per language (50,000 queries each, same generator): {by_language}")
    warm = rss_samples[0][1]
    growth = max(r for _, r in rss_samples) - warm
    print(
        "RSS (MB) every 100,000 queries: "
        + " ".join(f"{r:.1f}" for _, r in rss_samples)
        + f"; growth after the first 100,000: {growth:+.1f} MB"
    )
    peak = max(peak_rss_mb(), *(r for _, r in rss_samples))
    print(f"peak RSS of the whole run (max of VmHWM, ru_maxrss, samples): {peak:.1f} MB")
    print(f"RESULT query_filter queries_per_s={qps:.0f} peak_rss_mb={peak:.1f}")
    return 0 if mismatches == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
