"""Write ``docs/benchmarks.md`` from the results the benchmarks left in ``benchmarks/results/``:
the current figures of every benchmark with the command, the commit and the machine they came
from. History stays in git, not in the page.

    python -m benchmarks.render            # write docs/benchmarks.md
    python -m benchmarks.render --check    # exit 1 if the page is not what the results give
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PAGE = ROOT / "docs" / "benchmarks.md"

HEADER = """# Benchmarks

The current figures of every benchmark, written by `python -m benchmarks.render` from the files the
benchmarks leave in `benchmarks/results/` (each run writes its own: what it printed, the command,
the commit and the machine). Nothing here is copied by hand; earlier figures are in this page's git
history. Absolute times on shared machines are noisy: each benchmark measures a reference in the
same run (a naive version, a library routine, a bare Streamlit page) and reports ratios.

Run one from the project's folder, then render the page:

```bash
python -m benchmarks.NAME [options]
python -m benchmarks.render
```

"""


def benchmarks() -> list[tuple[str, str]]:
    """``(name, docstring)`` of every benchmark script, in name order."""
    found = []
    for path in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        found.append((path.stem, ast.get_docstring(ast.parse(path.read_text())) or path.stem))
    return found


def _machine(record: dict) -> str:
    machine = record.get("machine", {})
    libraries = ", ".join(f"{name} {machine[name]}" for name in ("numpy", "scipy", "sklearn", "streamlit")
                          if name in machine)
    return (f"{machine.get('processor', 'unknown processor')}, {machine.get('cores', '?')} cores, "
            f"{machine.get('memory_gib', '?')} GiB; Python {machine.get('python', '?')}; {libraries}")


def section(name: str, doc: str, record: dict | None) -> str:
    title, _, rest = doc.strip().partition("\n")
    lines = [f"## {name}", "", f"**{title.strip()}**", "", rest.strip(), ""]
    if record is None:
        lines += [f"*Not run since the benchmarks began writing their results:* `python -m benchmarks.{name}`.", ""]
        return "\n".join(lines)
    changed = record.get("changed_files", 0)
    lines += [f"Measured by `{record['command']}` on {record['started'][:10]} at commit `{record['commit']}`"
              + (f" ({changed} changed file(s) beside it)" if changed else "")
              + f", in {record['seconds']:,} s; {_machine(record)}.", "", "```text", record["output"].rstrip(), "```", ""]
    return "\n".join(lines)


def render() -> str:
    records = {}
    for path in sorted(RESULTS.glob("*.json")):
        record = json.loads(path.read_text())
        records[record["name"]] = record
    found = benchmarks()
    index = ["| benchmark | what it measures | last run | commit |", "|---|---|---|---|"]
    for name, doc in found:
        record = records.get(name)
        index.append(f"| [{name}](#{name}) | {doc.strip().splitlines()[0]} | "
                     f"{record['started'][:10] if record else 'not yet'} | {record['commit'] if record else ''} |")
    return HEADER + "\n".join(index) + "\n\n" + "\n".join(section(name, doc, records.get(name)) for name, doc in found)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the page is up to date")
    options = parser.parse_args(argv)
    text = render()
    if options.check:
        if PAGE.read_text() != text:
            print(f"{PAGE.relative_to(ROOT)} is not what benchmarks/results/ gives: run python -m benchmarks.render")
            return 1
        return 0
    PAGE.write_text(text)
    print(f"wrote {PAGE.relative_to(ROOT)} from {len(list(RESULTS.glob('*.json')))} result(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
