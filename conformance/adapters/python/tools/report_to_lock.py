"""Turn pip's installation report (pip install --dry-run --report) into a lock file.

The lock pins every distribution pip resolved to its exact version and the sha256 of the exact
file pip chose, so `pip install --require-hashes --no-deps -r <lock>` installs the same bytes or
fails. Standard library only: this runs in a bare virtual environment.

Usage: python report_to_lock.py REPORT.json SOURCE.in > LOCK.txt
"""

import json
import platform
import sys


def lock_lines(report: dict, source_name: str) -> list[str]:
    if report.get("version") != "1":
        raise SystemExit(f"report_to_lock: unsupported pip report version {report.get('version')!r}")
    env = report.get("environment", {})
    header = [
        f"# Generated from {source_name} by scripts/python-locks.sh; do not edit by hand.",
        f"# Resolved by pip {report.get('pip_version', '?')} for CPython {env.get('python_version', '?')}"
        f" on {env.get('sys_platform', '?')} {env.get('platform_machine', '?')}.",
        f"# python-version: {env.get('python_version', '?')}",
        f"# platform: {env.get('sys_platform', '?')}-{env.get('platform_machine', platform.machine())}",
    ]
    entries = []
    for item in report.get("install", []):
        name = item["metadata"]["name"]
        version = item["metadata"]["version"]
        info = item["download_info"]
        hashes = info.get("archive_info", {}).get("hashes", {})
        if "sha256" not in hashes:
            raise SystemExit(f"report_to_lock: {name} {version} has no sha256 in the report ({info.get('url')})")
        filename = info["url"].rsplit("/", 1)[-1]
        if not filename.endswith(".whl"):
            raise SystemExit(f"report_to_lock: {name} {version} resolves to a source distribution ({filename}); the lock takes wheels only")
        entries.append((name.lower().replace("_", "-"), f"{name}=={version} \\\n    --hash=sha256:{hashes['sha256']}"))
    entries.sort()
    return header + [line for _, line in entries]


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        report = json.load(f)
    print("\n".join(lock_lines(report, sys.argv[2])))


if __name__ == "__main__":
    main()
