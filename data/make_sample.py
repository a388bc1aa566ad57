"""Build data/sample/corpus.parquet: the bundled sample corpus of real text with real near-duplicates.

Its documents are the Debian copyright files of the packages installed on the machine that built it
(/usr/share/doc/<package>/copyright), one document per package, id = the package name. They are real
text with real near-duplicates: packages built from one source ship the same or nearly the same file,
and many quote the same licence with small changes. Each file is distributed under the terms it
states itself. Run: python data/make_sample.py [--max-bytes N]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

DOCS = Path("/usr/share/doc")
OUT = Path(__file__).resolve().parent / "sample" / "corpus.parquet"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-bytes", type=int, default=60_000, help="skip larger files")
    args = parser.parse_args()
    ids, texts = [], []
    for path in sorted(DOCS.glob("*/copyright")):
        if path.is_symlink() or path.stat().st_size > args.max_bytes:
            continue
        ids.append(path.parent.name)
        texts.append(path.read_bytes().decode("utf-8", errors="replace"))
    table = pa.table({"doc_id": ids, "text": texts, "source": [f"{DOCS}/{i}/copyright" for i in ids]})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, OUT, compression="zstd", compression_level=19)
    print(f"{OUT}: {len(ids)} documents, {sum(map(len, texts)) / 1e6:.1f} MB of text")


if __name__ == "__main__":
    main()
