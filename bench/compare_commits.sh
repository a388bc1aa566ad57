#!/bin/bash
# The job of an earlier commit and of this checkout on one corpus, back to back, each after a
# warm-up on the bundled sample and its own scan floor; then whether their pair tables are equal.
#
#   bash bench/compare_commits.sh REV CORPUS_DIR > bench/results/compare-<docs>-<UTC time>.txt
#
# REV is checked out in a worktree under /tmp (its jobs and package zipped as its `make dist` did);
# both run with this checkout's environment (.venv) and conf/spark-local.conf of their own tree.
set -eu
REV=$1
CORPUS=$(realpath "$2")
HERE=$(cd "$(dirname "$0")/.." && pwd)
OLD=$(mktemp -d /tmp/shingling-compare-XXXXXX)
OUT=$(mktemp -d /tmp/shingling-compare-out-XXXXXX)
trap 'git -C "$HERE" worktree remove --force "$OLD" >/dev/null 2>&1 || true' EXIT
git -C "$HERE" worktree add -f "$OLD" "$REV" >/dev/null 2>&1
ln -s "$HERE/.venv" "$OLD/.venv"
(cd "$HERE" && make dist >/dev/null)
(cd "$OLD" && mkdir -p dist/pkg && cp -r shingling $( [ -d jobs ] && echo jobs ) dist/pkg/ \
  && find dist/pkg -name __pycache__ -prune -exec rm -rf {} + \
  && cd dist/pkg && "$HERE/.venv/bin/python" -m zipfile -c ../shingling.zip * && cd .. && rm -rf pkg)
export PATH="$HERE/.venv/bin:$PATH" PYSPARK_PYTHON="$HERE/.venv/bin/python" PYSPARK_DRIVER_PYTHON="$HERE/.venv/bin/python"
echo "corpus $CORPUS; $(nproc) cores; $(date -u +%FT%TZ)"
for tree in "$OLD" "$HERE"; do
  cd "$tree"
  export PYTHONPATH="$tree"
  submit=(spark-submit --properties-file conf/spark-local.conf --py-files dist/shingling.zip)
  "${submit[@]}" jobs/near_duplicates.py --input "$HERE/data/sample/corpus.parquet" \
    --output "$OUT/warm" --overwrite >/dev/null 2>&1
  s0=$(date +%s.%N)
  "${submit[@]}" "$HERE/bench/peers/scan.py" --input "$CORPUS" >/dev/null 2>&1
  s1=$(date +%s.%N)
  name=$([ "$tree" = "$HERE" ] && echo new || echo old)
  "${submit[@]}" jobs/near_duplicates.py --input "$CORPUS" --output "$OUT/$name" --overwrite \
    >"$OUT/$name.log" 2>&1
  s2=$(date +%s.%N)
  printf '%s %s: scan floor %.1f s, job %.1f s, load %s\n' "$name" "$(git rev-parse --short HEAD)" \
    "$(echo "$s1 - $s0" | bc)" "$(echo "$s2 - $s1" | bc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
done
"$HERE/.venv/bin/python" - "$OUT" <<'PY'
import json, sys
import pyarrow.parquet as pq
out = sys.argv[1]
old, new = (pq.read_table(f"{out}/{n}/pairs") for n in ("old", "new"))
key = [("doc_a", "ascending"), ("doc_b", "ascending")]
same = old.column_names == new.column_names and old.sort_by(key).equals(new.sort_by(key))
for n in ("old", "new"):
    s = json.load(open(f"{out}/{n}/summary.json"))
    p = s["pairs"]
    work = {k: p[k] for k in ("pairs_tested", "signature_passes", "candidate_pairs") if k in p}
    print(f"{n}: stage seconds {s['stage_seconds']}, pairs written {p['written']}, work {work}")
print(f"pair tables equal row for row, every column: {same} ({old.num_rows} and {new.num_rows} rows)")
PY
rm -rf "$OUT"
