"""The streaming JSON reader: same values as json.load, line numbers, memory held flat."""

from __future__ import annotations

import json
import tracemalloc

import pytest

from collector.importers import ImportFailure
from collector.importers.jsonstream import JsonStream
from collector.importers.source import ByteCounter, SourceFile
from tests.collector.corpus_support import MSMARCO_COLUMNAR, NEWSQA_JSON, RECO, SQUAD_V2


def _stream(path, chunk_size=1 << 16):
    return JsonStream(SourceFile(path, path.name), ByteCounter(), chunk_size=chunk_size)


@pytest.mark.parametrize("chunk_size", [1, 7, 64, 1 << 16])
@pytest.mark.parametrize("path", [SQUAD_V2, NEWSQA_JSON, RECO, MSMARCO_COLUMNAR])
def test_walking_gives_what_json_load_gives(path, chunk_size):
    expected = json.loads(path.read_text(encoding="utf-8"))

    def walk(stream):
        first = stream.peek()
        if first == "{":
            return {key: walk(stream) for key in stream.iter_object()}
        if first == "[":
            return [walk(stream) for _ in stream.iter_array()]
        return stream.read_value()

    with _stream(path, chunk_size) as stream:
        assert walk(stream) == expected
        stream.finish()


def test_line_numbers_and_skipping(tmp_path):
    path = tmp_path / "doc.json"
    path.write_text('{\n "skip": {"a": [1, "]}\\"", {"b": null}]},\n "items": [\n  {"x": 1},\n'
                    '  {"x": "两"},\n  3\n ]\n}\n', encoding="utf-8")
    with _stream(path, chunk_size=4) as stream:
        seen = []
        for key in stream.iter_object():
            if key == "items":
                for _ in stream.iter_array():
                    seen.append((stream.line(), stream.read_value()))
        stream.finish()
    assert seen == [(4, {"x": 1}), (5, {"x": "两"}), (6, 3)]


@pytest.mark.parametrize(("text", "where"), [
    ('{"a": [1, 2,, 3]}', "line 1, column 13"),
    ('{"a": 1\n "b": 2}', "line 2, column 2"),
    ('[1, 2]\n[3]', "line 2, column 1"),
    ('{"a": "never closed}', "line 1, column 7"),
    ('{"a": [1, 2]', "line 1, column 13"),
])
def test_invalid_json_names_line_and_column(tmp_path, text, where):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ImportFailure) as caught, _stream(path, chunk_size=3) as stream:
        if stream.peek() == "{":
            for _ in stream.iter_object():
                stream.read_value()
        else:
            for _ in stream.iter_array():
                stream.read_value()
        stream.finish()
    assert str(caught.value).startswith(f"bad.json: {where}: invalid JSON")


def test_not_utf8_names_the_line(tmp_path):
    path = tmp_path / "latin.json"
    path.write_bytes(b'[\n"ok",\n"caf\xe9"\n]')
    with pytest.raises(ImportFailure, match=r"latin.json: line 3: is not valid UTF-8"), \
            _stream(path) as stream:
        for _ in stream.iter_array():
            stream.read_value()


def test_memory_stays_flat_on_a_large_array(tmp_path):
    path = tmp_path / "big.json"
    record = {"query_id": 0, "doc": "文档内容" * 200, "query": "q", "alternatives": "a|b|c"}
    with path.open("w", encoding="utf-8") as handle:
        handle.write("[")
        for i in range(6000):
            handle.write(("," if i else "") + json.dumps({**record, "query_id": i},
                                                         ensure_ascii=False))
        handle.write("]")
    size = path.stat().st_size
    assert size > 14_000_000
    tracemalloc.start()
    count = 0
    with _stream(path) as stream:
        for _ in stream.iter_array():
            count += stream.read_value()["query_id"] >= 0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert count == 6000
    assert peak < size / 20  # about one chunk and one record, never the file
