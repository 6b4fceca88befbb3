"""Streaming at scale: 200,000 generated SQuAD questions with flat memory, in a fresh
interpreter (so the pytest process's own peak does not hide growth); and the package
imports no Django."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from tests.collector.exporters.samples import REPO

SCRIPT = textwrap.dedent("""
    import json, resource, sys, time
    import collector.exporters as ex
    from collector.exporters import (
        SquadAnswer, SquadArticle, SquadParagraph, SquadQuestion, write_squad_v2)

    FILLER = " ".join(f"token{i}" for i in range(120))

    def articles(n_questions, per_paragraph=5, per_article=10):
        n_articles = n_questions // (per_paragraph * per_article)
        def paragraphs(a):
            for p in range(per_article):
                context = f"Article {a} paragraph {p} about Zürich. {FILLER}"
                start = context.index("Zürich")
                def questions(p=p, context=context, start=start):
                    for k in range(per_paragraph):
                        qid = f"{a:012x}{p:06x}{k:06x}"
                        if k == 4:
                            yield SquadQuestion(qid, f"Unanswerable {k}?", [], True,
                                                [SquadAnswer("Zürich", start)])
                        else:
                            yield SquadQuestion(qid, f"Where is paragraph {p}, {k}?",
                                                [SquadAnswer("Zürich", start),
                                                 SquadAnswer("Zürich", start)])
                yield SquadParagraph(context, questions())
        for a in range(n_articles):
            yield SquadArticle(f"Article_{a}", paragraphs(a))

    out_dir = sys.argv[1]
    write_squad_v2(out_dir + "/warmup.json", articles(2_000))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    entry = write_squad_v2(out_dir + "/big.json", articles(200_000), progress_every=10_000)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"records": entry.records, "bytes": entry.bytes,
                      "growth_kb": after - before, "seconds": seconds,
                      "django": "django" in sys.modules,
                      "modules": sorted(m for m in sys.modules
                                        if m.startswith("collector.exporters"))}))
""")


def test_200k_questions_stream_with_flat_memory(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["records"] == 200_000
    assert result["bytes"] > 60_000_000  # the file is far larger than the allowed growth
    assert result["growth_kb"] < 16 * 1024, result  # flat: well under the file's size
    assert result["seconds"] < 30, result
    assert (tmp_path / "big.json").stat().st_size == result["bytes"]
    # Read back in chunks (a json.load of 80 MB would cost the test process ~1 GB).
    marker = b'"is_impossible": '
    questions = 0
    with (tmp_path / "big.json").open("rb") as fh:
        head = fh.read(60)
        carry = tail = head
        while chunk := fh.read(1 << 20):
            window = carry + chunk
            questions += window.count(marker)
            carry = window[-(len(marker) - 1):]  # too short to hold a whole marker
            tail = chunk
    assert head.startswith(b'{"version": "v2.0", "data": [{"title": "Article_0"')
    assert tail.endswith(b"\"}]}]}")  # context, paragraph, article, data, envelope
    assert questions == 200_000
    # No Django anywhere in the package (every module was imported by the package).
    assert result["django"] is False
    assert "collector.exporters.hf" in result["modules"]
