"""axe-core (vendored in vendor/axe-core/, see its README) run on a page the tests opened.

    violations = serious_violations(page)   # [] when the page is clean

Only violations of impact "serious" or "critical" are returned, each as one readable line with
the rule, its impact and the first elements it names.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

AXE_VERSION = "4.14.1"
AXE_SHA256 = "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"
AXE_FILE = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")


@lru_cache(maxsize=1)
def axe_source() -> str:
    data = AXE_FILE.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    assert digest == AXE_SHA256, f"{AXE_FILE} is not axe-core {AXE_VERSION} as vendored (sha256 {digest})"
    return data.decode("utf-8")


def violations(page, impacts=SERIOUS) -> list[str]:
    """axe.run on the whole document as it is now; one line per violation of the given impacts."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.add_script_tag(content=axe_source())
    assert page.evaluate("axe.version") == AXE_VERSION
    results = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    lines = []
    for violation in results["violations"]:
        if violation["impact"] not in impacts:
            continue
        targets = ["; ".join(" ".join(t) if isinstance(t, list) else t for t in node["target"])
                   for node in violation["nodes"][:3]]
        lines.append(f"{violation['id']} ({violation['impact']}, {len(violation['nodes'])} elements): "
                     f"{violation['help']}; e.g. {targets}")
    return lines


def serious_violations(page) -> list[str]:
    return violations(page, SERIOUS)
