"""Write memcli's Claude Code plugin and its marketplace from the code
(:func:`memcli.agents.claude_plugin.files`): the hooks of ``agent install claude-code``, the MCP
server and the policy as a skill.

    python .ci/genplugin.py            # write .claude-plugin/
    python .ci/genplugin.py --check    # exit 1 when a committed file is stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from memcli.agents.claude_plugin import files

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when a file is stale")
    args = parser.parse_args()
    stale = []
    for name, text in files().items():
        path = ROOT / name
        if path.exists() and path.read_text("utf-8") == text:
            continue
        stale.append(name)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    for name in stale:
        print(f"{'stale' if args.check else 'wrote'}: {name}", file=sys.stderr)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
