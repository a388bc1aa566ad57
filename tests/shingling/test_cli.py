"""The ``shingling`` command: query, explain and top, checked against the library and brute force.

No Spark: the documents tables here are made with the library (the job's sketches equal the
library's, which the parity tests check), from real Debian copyright files and licence texts.
"""

from __future__ import annotations

import io
import itertools
import json
import re
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from shingling.cli import main
from shingling.cli.explain import explain_texts
from shingling.estimators import jaccard, matches
from shingling.hashing import shingle_hash, word_hash, xxhash64
from shingling.index import Manifest, SegmentInfo, open_index
from shingling.normalize import normalize, words
from shingling.query import candidate_rows, hot_hashes, query_index
from shingling.report.load import distinct_pairs
from shingling.shingles import shingles
from shingling.sketch import EmptyDocumentError, Sketch, sketch

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "data" / "sample" / "corpus.parquet"
LICENSES = Path("/usr/share/common-licenses")
N_DOCS = 160
TOP_DOCS = 320


def corpus_rows(n: int = N_DOCS) -> list[dict[str, Any]]:
    """The first n documents of the sample corpus that have words."""
    rows = pq.read_table(CORPUS, columns=["doc_id", "text"]).to_pylist()
    return [r for r in rows if r["text"] and words(r["text"])][:n]


def drop_last_paragraph(text: str) -> str:
    return text.rsplit("\n\n", 1)[0] if "\n\n" in text else text[: len(text) * 9 // 10]


def documents_table(
    rows: list[dict[str, Any]], library: dict[str, Sketch] | None = None
) -> pa.Table:
    """A run's documents table (width 4, k 20), made with the library."""
    made = library or {}
    sketches = [made.get(r["doc_id"]) or sketch(r["text"]) for r in rows]
    return pa.table(
        {
            "doc_id": [r["doc_id"] for r in rows],
            "n_words": [len(words(r["text"])) for r in rows],
            "n_shingles": [s.n_shingles for s in sketches],
            "sketch": pa.array([list(s.hashes) for s in sketches], pa.list_(pa.int64())),
            "text_hash": [xxhash64(normalize(r["text"]).encode()) for r in rows],
            "skip_reason": pa.nulls(len(rows), pa.string()),
        }
    )


def write_run(out: Path, documents: pa.Table, threshold: float = 0.6) -> None:
    (out / "documents").mkdir(parents=True)
    pq.write_table(documents, out / "documents" / "part-00000.parquet")
    (out / "config.toml").write_text(
        f"[sketch]\nwidth = 4\nk = 20\n\n[pairs]\nthreshold = {threshold}\n"
    )


def write_index(root: Path, documents: pa.Table, row_group: int = 64) -> None:
    """An index in the layout of shingling/index.py: one segment, postings sorted by hash."""
    segment = root / "segments" / "000001-test"
    (segment / "documents").mkdir(parents=True)
    (segment / "postings").mkdir(parents=True)
    by_id = documents.append_column("added", pa.array(["2026-11-30"] * documents.num_rows))
    by_id = by_id.sort_by("doc_id")
    pq.write_table(by_id, segment / "documents" / "part-00000.parquet", row_group_size=row_group)
    flat = documents["sketch"].combine_chunks()
    lengths = pc.list_value_length(flat).to_numpy()
    postings = pa.table(
        {
            "hash": flat.values,
            "doc_id": documents["doc_id"].take(
                pa.array(range(len(lengths))).to_numpy().repeat(lengths)
            ),
        }
    ).sort_by("hash")
    half = postings.num_rows // 2  # two range-partitioned files, as the job writes several
    for i, part in enumerate((postings.slice(0, half), postings.slice(half))):
        pq.write_table(
            part, segment / "postings" / f"part-{i:05d}.parquet", row_group_size=row_group
        )
    manifest = Manifest(
        version=1,
        created_at="2026-11-30T00:00:00+00:00",
        id_type="string",
        settings={"width": 4, "k": 20, "threshold": 0.6, "max_exact_group": 100},
        segments=(
            SegmentInfo("000001-test", "2026-11-30", documents.num_rows, postings.num_rows, 0),
        ),
        runs={},
        live_documents=documents.num_rows,
        live_postings=postings.num_rows,
    )
    (root / "_manifest.json").write_text(manifest.to_json())


def brute_force(
    query: Sketch, library: dict[str, Sketch], threshold: float
) -> dict[str, tuple[int, float]]:
    """Every document sharing a hash whose estimate reaches the threshold, one sketch at a time."""
    found = {}
    for doc_id, other in library.items():
        j, m = jaccard(query, other), matches(query, other)
        if j >= threshold and m > 0:
            found[doc_id] = (m, j)
    return found


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return corpus_rows()


@cache
def corpus_sketches() -> dict[str, Sketch]:
    """The library's sketch of each of the first TOP_DOCS documents, made once a process."""
    return {r["doc_id"]: sketch(r["text"]) for r in corpus_rows(TOP_DOCS)}


@pytest.fixture(scope="module")
def library(rows: list[dict[str, Any]]) -> dict[str, Sketch]:
    """The library's sketch of every document."""
    made = corpus_sketches()
    return {r["doc_id"]: made[r["doc_id"]] for r in rows}


@pytest.fixture(scope="module")
def run_output(
    tmp_path_factory: pytest.TempPathFactory, rows: list[dict[str, Any]], library: dict[str, Sketch]
) -> Path:
    out = tmp_path_factory.mktemp("run") / "out"
    write_run(out, documents_table(rows, library))
    return out


@pytest.fixture(scope="module")
def index(
    tmp_path_factory: pytest.TempPathFactory, rows: list[dict[str, Any]], library: dict[str, Sketch]
) -> Path:
    root = tmp_path_factory.mktemp("index") / "index"
    write_index(root, documents_table(rows, library))
    return root


@pytest.fixture(scope="module")
def index_tiny_groups(
    tmp_path_factory: pytest.TempPathFactory, rows: list[dict[str, Any]], library: dict[str, Sketch]
) -> Path:
    """Row groups of 4 postings: common hashes span many, so queries leave some unread."""
    root = tmp_path_factory.mktemp("index") / "index"
    write_index(root, documents_table(rows, library), row_group=4)
    return root


def run_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


# ---------------------------------------------------------------------------------------------
# query


@pytest.mark.parametrize("where", ["run_output", "index", "index_tiny_groups"])
@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.6])
def test_query_finds_exactly_what_comparing_every_sketch_finds(
    where: str,
    threshold: float,
    request: pytest.FixtureRequest,
    rows: list[dict[str, Any]],
    library: dict[str, Sketch],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = request.getfixturevalue(where)
    for source in rows[::40]:
        text = drop_last_paragraph(source["text"])
        (tmp_path / "q.txt").write_text(text, encoding="utf-8")
        got = run_json(
            capsys,
            [
                "query",
                str(path),
                str(tmp_path / "q.txt"),
                "--json",
                "--threshold",
                str(threshold),
                "-n",
                "1000",
            ],
        )
        expected = brute_force(sketch(text), library, threshold)
        assert {m["doc_id"]: (m["matches"], m["jaccard"]) for m in got["matches"]} == expected
        assert got["kind"] == ("run" if where == "run_output" else "index")


@pytest.mark.parametrize("where", ["index", "index_tiny_groups"])
def test_the_best_few_are_the_best_of_all_though_reading_stops_early(
    where: str,
    request: pytest.FixtureRequest,
    rows: list[dict[str, Any]],
    library: dict[str, Sketch],
) -> None:
    path = request.getfixturevalue(where)
    for source in rows[5::30]:
        q = sketch(drop_last_paragraph(source["text"]))
        everything = brute_force(q, library, 0.0)
        best = sorted(everything, key=lambda d: (-everything[d][1], -everything[d][0], d))[:3]
        got = query_index(open_index(str(path)), q, 0.0, limit=3, batch=2)
        assert [m.doc_id for m in got] == best
        assert [(m.matches, m.jaccard) for m in got] == [everything[d] for d in best]


def test_tiny_row_groups_make_queries_leave_hot_hashes_unread(
    index_tiny_groups: Path, rows: list[dict[str, Any]]
) -> None:
    reader = open_index(str(index_tiny_groups))
    left_out = [
        len(hot_hashes(reader.posting_bounds(sketch(r["text"]).hashes), 5)) for r in rows[::40]
    ]
    assert any(left_out)  # so the brute-force comparison above covers that path


def test_query_on_an_index_reads_only_some_row_groups(
    index: Path, rows: list[dict[str, Any]], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "q.txt").write_text(rows[7]["text"], encoding="utf-8")
    got = run_json(capsys, ["query", str(index), str(tmp_path / "q.txt"), "--json"])
    read, total = map(int, re.findall(r"\d+", got["read"]))
    assert rows[7]["doc_id"] in [m["doc_id"] for m in got["matches"]]
    assert 0 < read < total


def test_query_reads_standard_input_and_sorts_by_estimate(
    run_output: Path,
    rows: list[dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = drop_last_paragraph(rows[3]["text"])
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8"))))
    got = run_json(capsys, ["query", str(run_output), "--json", "--threshold", "0.2"])
    scores = [(-m["jaccard"], -m["matches"]) for m in got["matches"]]
    assert scores == sorted(scores)
    assert got["width"] == 4 and got["k"] == 20 and got["threshold"] == 0.2
    assert got["query"]["sketch"] == list(sketch(text).hashes)


def test_query_threshold_defaults_to_the_runs(
    tmp_path: Path, rows: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    write_run(out, documents_table(rows[:20]), threshold=0.85)
    (tmp_path / "q.txt").write_text(rows[0]["text"], encoding="utf-8")
    got = run_json(capsys, ["query", str(out), str(tmp_path / "q.txt"), "--json"])
    assert got["threshold"] == 0.85
    assert all(m["jaccard"] >= 0.85 for m in got["matches"])


def test_query_table_lists_the_matches(
    run_output: Path, rows: list[dict[str, Any]], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "q.txt").write_text(rows[11]["text"], encoding="utf-8")
    assert main(["query", str(run_output), str(tmp_path / "q.txt")]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.split()[:1] == [rows[11]["doc_id"]])
    assert line.split()[1:] == ["20/20", "1.00"]


def test_candidate_pruning_never_drops_a_document_that_can_pass(
    rows: list[dict[str, Any]], library: dict[str, Sketch]
) -> None:
    table = documents_table(rows, library)
    flat = table["sketch"].combine_chunks()
    values, offsets = flat.values.to_numpy(), flat.offsets.to_numpy()
    for source, threshold in itertools.product(rows[::25], (0.1, 0.5, 0.9)):
        q = sketch(drop_last_paragraph(source["text"]))
        kept, _ = candidate_rows(
            values, offsets, pc.cast(pa.array(q.hashes), pa.int64()).to_numpy(), 20, threshold
        )
        passing = {i for i, r in enumerate(rows) if jaccard(q, library[r["doc_id"]]) >= threshold}
        assert passing <= set(kept.tolist())


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["query", "/nonexistent/index", "-"], "nothing to query"),
        (["query", "{run}", "/nonexistent/file.txt"], "cannot read"),
        (["query", "{run}", "{empty}"], "no words"),
        (["explain", "{empty}", "{empty}"], "no words"),
        (["explain", "adduser", "no-such-id", "--corpus", str(CORPUS)], "no-such-id"),
        (["top", "/nonexistent/out"], "no pair table"),
        (["report", "/nonexistent/out"], "no run summary"),
    ],
)
def test_missing_or_unusable_input_exits_3_with_a_message(
    argv: list[str],
    message: str,
    run_output: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "empty.txt").write_text(" ... !!! ", encoding="utf-8")
    filled = [a.format(run=run_output, empty=tmp_path / "empty.txt") for a in argv]
    assert main(filled) == 3
    assert message in capsys.readouterr().err


def test_bad_arguments_exit_2(run_output: Path) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["query", str(run_output), "-", "--threshold", "1.5"])
    assert stop.value.code == 2


def test_index_fixture_is_readable_by_the_index_reader(
    index: Path, rows: list[dict[str, Any]]
) -> None:
    reader = open_index(str(index))
    got = reader.documents([rows[0]["doc_id"]]).to_pylist()
    assert [d["sketch"] for d in got] == [list(sketch(rows[0]["text"]).hashes)]


# ---------------------------------------------------------------------------------------------
# explain


def licence(name: str) -> str:
    return (LICENSES / name).read_text(encoding="utf-8")


def test_explain_scores_equal_the_library_and_the_exact_shingle_sets() -> None:
    a, b = licence("GPL-2"), licence("LGPL-2")
    e = explain_texts(a, b, width=4, k=20)
    sa, sb = sketch(a), sketch(b)
    assert (e.matches, e.estimate) == (matches(sa, sb), jaccard(sa, sb))
    # the exact Jaccard from the shingles' words, not their hashes
    set_a, set_b = set(shingles(words(a), 4)), set(shingles(words(b), 4))
    assert e.exact == pytest.approx(len(set_a & set_b) / len(set_a | set_b))


def shingle_words(text: str) -> dict[int, str]:
    """Each shingle hash of a text and the shingle's words, from the definitions."""
    behind: dict[int, str] = {}
    for s in shingles(words(text), 4):
        behind.setdefault(shingle_hash([word_hash(w) for w in s]), " ".join(s))
    return behind


def test_explain_prints_each_hash_beside_the_shingle_behind_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = licence("GPL-3"), licence("LGPL-3")
    (tmp_path / "a.txt").write_text(a, encoding="utf-8")
    (tmp_path / "b.txt").write_text(b, encoding="utf-8")
    assert main(["explain", str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]) == 0
    out = capsys.readouterr().out
    sa, sb = sketch(a), sketch(b)
    behind = {**shingle_words(a), **shingle_words(b)}
    rows = [ln for ln in out.splitlines() if " | " in ln][1:]  # after the header
    assert len(rows) == 20
    marked = 0
    for line, ha, hb in zip(rows, sa.hashes, sb.hashes, strict=True):
        left = re.fullmatch(r"\s*(.+?) (-?\d+) ([*+ ])", line.split(" | ")[0])
        right = re.fullmatch(r"([*+ ]) (-?\d+) +(.+)", line.split(" | ")[1])
        assert left and right
        assert (int(left[2]), int(right[2])) == (ha, hb)
        assert behind[ha].startswith(left[1].rstrip("…"))
        assert behind[hb].startswith(right[3].rstrip("…"))
        assert (left[3] != " ") == (ha in sb.hashes)
        marked += left[3] != " "
    assert marked == matches(sa, sb)
    assert f"matches:          {matches(sa, sb)} of 20" in out


def test_explain_json_names_the_shingle_behind_every_hash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = licence("Apache-2.0"), licence("MPL-2.0")
    (tmp_path / "a.txt").write_text(a, encoding="utf-8")
    (tmp_path / "b.txt").write_text(b, encoding="utf-8")
    got = run_json(
        capsys, ["explain", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "--json", "--k", "8"]
    )
    for side, text in (("a", a), ("b", b)):
        behind = shingle_words(text)
        assert [h["hash"] for h in got[side]["sketch"]] == list(sketch(text, k=8).hashes)
        assert all(h["shingle"] == behind[h["hash"]] for h in got[side]["sketch"])
    assert got["k"] == 8


def test_explain_ids_in_a_corpus_equals_explaining_their_texts(
    rows: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = rows[1], rows[2]
    by_id = run_json(
        capsys, ["explain", a["doc_id"], b["doc_id"], "--corpus", str(CORPUS), "--json"]
    )
    (tmp_path / "a").write_text(a["text"], encoding="utf-8")
    (tmp_path / "b").write_text(b["text"], encoding="utf-8")
    by_file = run_json(capsys, ["explain", str(tmp_path / "a"), str(tmp_path / "b"), "--json"])
    for d in (by_id, by_file):
        d["a"].pop("name"), d["b"].pop("name")
    assert by_id == by_file


def test_explain_on_a_corpus_with_other_column_names_names_them(
    rows: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "corpus.parquet"
    pq.write_table(
        pq.read_table(CORPUS, columns=["doc_id", "text"]).rename_columns(["url", "body"]), corpus
    )
    a, b = rows[1]["doc_id"], rows[2]["doc_id"]
    assert main(["explain", a, b, "--corpus", str(corpus)]) == 3
    err = capsys.readouterr().err
    assert "has no column 'doc_id' (columns present: url, body)" in err, err
    assert "does not exist in schema" not in err
    got = run_json(
        capsys,
        ["explain", a, b, "--corpus", str(corpus), "--id-column", "url", "--text-column", "body"]
        + ["--json"],
    )
    assert got["a"]["name"] == a


def test_explain_takes_width_and_k_from_a_run(
    tmp_path: Path, rows: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    (out).mkdir()
    (out / "config.toml").write_text("[sketch]\nwidth = 3\nk = 7\n")
    (tmp_path / "a").write_text(rows[0]["text"], encoding="utf-8")
    got = run_json(
        capsys, ["explain", str(tmp_path / "a"), str(tmp_path / "a"), "--run", str(out), "--json"]
    )
    assert (
        got["width"],
        got["k"],
        got["matches"],
        got["jaccard_estimate"],
        got["jaccard_exact"],
    ) == (3, 7, 7, 1.0, 1.0)


def test_explain_refuses_a_text_without_words() -> None:
    with pytest.raises(EmptyDocumentError):
        explain_texts("...", licence("BSD"), width=4, k=20)


# ---------------------------------------------------------------------------------------------
# top


def all_pairs(table: pa.Table, threshold: float) -> pa.Table:
    """Every pair at or above a positive threshold, by brute force, in the pair table's schema."""
    docs = sorted(table.to_pylist(), key=lambda d: d["doc_id"])
    # only documents sharing a hash can reach a positive threshold: compare those, every one
    holders: dict[int, list[int]] = {}
    for i, d in enumerate(docs):
        for h in d["sketch"]:
            holders.setdefault(h, []).append(i)
    sharing = {pair for held in holders.values() for pair in itertools.combinations(held, 2)}
    out = []
    for x, y in ((docs[i], docs[j]) for i, j in sorted(sharing)):
        sx = Sketch(tuple(x["sketch"]), x["n_shingles"], 4, 20)
        sy = Sketch(tuple(y["sketch"]), y["n_shingles"], 4, 20)
        j = jaccard(sx, sy)
        if j >= threshold:
            out.append(
                {
                    "doc_a": x["doc_id"],
                    "doc_b": y["doc_id"],
                    "matches": matches(sx, sy),
                    "jaccard": j,
                    "shingles_a": x["n_shingles"],
                    "shingles_b": y["n_shingles"],
                    "exact_duplicate": x["text_hash"] == y["text_hash"],
                }
            )
    return pa.Table.from_pylist(out)


@pytest.fixture(scope="module")
def run_with_pairs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pa.Table, pa.Table]:
    # the whole sample corpus holds exact-duplicate groups that are near-duplicates of each other
    documents = documents_table(corpus_rows(TOP_DOCS), corpus_sketches())
    pairs = all_pairs(documents, 0.6)
    out = tmp_path_factory.mktemp("top") / "out"
    write_run(out, documents)
    (out / "pairs").mkdir()
    pq.write_table(pairs, out / "pairs" / "part-00000.parquet")
    return out, documents, pairs


def shown_pairs(text: str) -> list[tuple[str, str]]:
    return re.findall(
        r"^(\S+)(?: \(\+\d+ exact cop\w+\))? ~ (\S+)(?: \(\+\d+ exact cop\w+\))?:", text, re.M
    )


@pytest.mark.parametrize("skip_exact", [True, False])
def test_top_shows_each_pair_of_texts_once_best_first(
    run_with_pairs: tuple[Path, pa.Table, pa.Table],
    skip_exact: bool,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, documents, pairs = run_with_pairs
    text_of = dict(
        zip(documents["doc_id"].to_pylist(), documents["text_hash"].to_pylist(), strict=True)
    )
    flag = "--skip-exact" if skip_exact else "--no-skip-exact"
    assert main(["top", str(out), "-n", "12", flag]) == 0
    printed = capsys.readouterr().out
    shown = shown_pairs(printed)
    assert len(shown) == 12
    assert "pairs repeating texts shown above left out" in printed  # the case this is about
    candidates = [p for p in pairs.to_pylist() if not (skip_exact and p["exact_duplicate"])]
    candidates.sort(key=lambda p: (-p["jaccard"], p["doc_a"], p["doc_b"]))
    position = {(p["doc_a"], p["doc_b"]): i for i, p in enumerate(candidates)}
    seen: set[int] = set()
    last = -1
    for a, b in shown:
        assert position[(a, b)] > last  # best first
        assert not {text_of[a], text_of[b]} <= seen  # each pair shows a new text
        # every pair passed over since the last one shown repeats texts already shown
        for p in candidates[last + 1 : position[(a, b)]]:
            assert {text_of[p["doc_a"]], text_of[p["doc_b"]]} <= seen
        seen |= {text_of[a], text_of[b]}
        last = position[(a, b)]


def test_top_names_exact_copies_and_shows_texts(
    run_with_pairs: tuple[Path, pa.Table, pa.Table], capsys: pytest.CaptureFixture[str]
) -> None:
    out, documents, _ = run_with_pairs
    copies = pc.value_counts(documents["text_hash"]).to_pylist()
    groups = {c["values"]: c["counts"] for c in copies}
    text_of = dict(
        zip(documents["doc_id"].to_pylist(), documents["text_hash"].to_pylist(), strict=True)
    )
    assert main(["top", str(out), "-n", "8", "--corpus", str(CORPUS)]) == 0
    printed = capsys.readouterr().out
    for doc, extra in re.findall(r"(\S+) \(\+(\d+) exact cop", printed):
        assert int(extra) == groups[text_of[doc]] - 1
    assert " | " in printed  # the texts side by side


def test_distinct_pairs_keeps_the_order_of_its_input() -> None:
    pairs = [
        {"doc_a": a, "doc_b": b} for a, b in [("x", "y"), ("x2", "y"), ("z", "w"), ("x", "y2")]
    ]
    shown, skipped = distinct_pairs(iter(pairs), {"x": 1, "x2": 1, "y": 2, "y2": 2}, 10)
    assert [(p["doc_a"], p["doc_b"]) for p in shown] == [("x", "y"), ("z", "w")]
    assert skipped == 2


def test_top_json_lists_what_the_text_shows(
    run_with_pairs: tuple[Path, pa.Table, pa.Table], capsys: pytest.CaptureFixture[str]
) -> None:
    out, _, pairs = run_with_pairs
    assert main(["top", str(out), "-n", "7"]) == 0
    shown = shown_pairs(capsys.readouterr().out)
    listed = run_json(capsys, ["top", str(out), "-n", "7", "--json"])
    assert listed["pairs"] == pairs.num_rows
    assert [(p["doc_a"], p["doc_b"]) for p in listed["top"]] == [tuple(p) for p in shown]
    assert all(p["jaccard"] >= 0.6 and p["copies_a"] >= 1 for p in listed["top"])


def test_top_reads_the_corpus_columns_the_run_was_given(
    run_with_pairs: tuple[Path, pa.Table, pa.Table],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, _, _ = run_with_pairs
    renamed = tmp_path / "corpus.parquet"
    table = pq.read_table(CORPUS, columns=["doc_id", "text"])
    pq.write_table(table.rename_columns(["key", "body"]), renamed)
    run = tmp_path / "run"
    shutil.copytree(out, run)
    (run / "config.toml").write_text('[input]\nid_column = "key"\ntext_column = "body"\n')
    listed = run_json(capsys, ["top", str(run), "-n", "3", "--json", "--corpus", str(renamed)])
    texts = dict(zip(table["doc_id"].to_pylist(), table["text"].to_pylist(), strict=True))
    for p in listed["top"]:
        assert (p["text_a"], p["text_b"]) == (texts[p["doc_a"]], texts[p["doc_b"]])
    # a corpus path that does not exist, or a column it does not have: exit 3, named
    assert main(["top", str(run), "--corpus", str(tmp_path / "nowhere")]) == 3
    assert "no corpus at" in capsys.readouterr().err
    assert main(["top", str(out), "--corpus", str(renamed)]) == 3  # out's config: doc_id, text
    assert "no column" in capsys.readouterr().err


def test_version_and_exit_codes_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("shingling ")
    with pytest.raises(SystemExit):
        main(["--help"])
    shown = capsys.readouterr().out
    assert "exit codes:" in shown and "4  the output exists" in shown and "run" in shown
