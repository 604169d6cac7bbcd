"""Write docs/events.md from the event payload models (justkernel.core.events).

uv run python tools/gen_events_doc.py           # write the page
uv run python tools/gen_events_doc.py --check   # exit 1 when the page is out of date
"""

from __future__ import annotations

import sys
from pathlib import Path

from justkernel.core.events.doc import render_catalog

PAGE = Path(__file__).resolve().parents[1] / "docs" / "events.md"


def main(argv: list[str]) -> int:
    text = render_catalog()
    if "--check" in argv:
        current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        if current != text:
            print(f"{PAGE} is out of date: run python tools/gen_events_doc.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
