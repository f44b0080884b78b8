"""A screenshot of an HTML report in headless Chromium: how the test sees the page a person sees, and how
the screenshots in docs/ were made (``python -m fuzz.report.screenshot report.html out.png``)."""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "chromium-headless-shell", "google-chrome", "google-chrome-stable")


def find_browser() -> str | None:
    """The first Chromium on PATH (Debian's package installs /usr/bin/chromium), else None."""
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


def screenshot(html: Path, png: Path, width: int = 1200, height: int = 1600, timeout: float = 120.0) -> Path:
    """Render ``html`` at ``width`` x ``height`` CSS pixels, device scale 1, into ``png``. Raises
    RuntimeError naming the browser's last output when no PNG came out."""
    browser = find_browser()
    if browser is None:
        raise RuntimeError("no Chromium found on PATH (Debian: apt-get install chromium)")
    png = Path(png).resolve()
    png.parent.mkdir(parents=True, exist_ok=True)
    if png.exists():
        png.unlink()
    with tempfile.TemporaryDirectory(prefix="mxfp4-fuzz-chromium-") as profile:
        command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                   "--force-device-scale-factor=1", f"--user-data-dir={profile}", f"--window-size={width},{height}",
                   f"--screenshot={png}", Path(html).resolve().as_uri()]
        # Chromium has no thread-count switch; one screenshot is a second or two of a core or two
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if not png.exists():
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"{browser} wrote no screenshot (exit {done.returncode}): {' | '.join(tail)}")
    return png


def main(argv=None) -> int:
    import argparse
    import json

    from fuzz.report.page import report_html

    parser = argparse.ArgumentParser(prog="python -m fuzz.report.screenshot",
                                     description="screenshot an HTML report (or a JSON report, rendered first)")
    parser.add_argument("page", type=Path, help="report.html, or the JSON report of mxfp4-fuzz check")
    parser.add_argument("png", type=Path)
    parser.add_argument("--size", nargs=2, type=int, default=(1200, 1600), metavar=("WIDTH", "HEIGHT"))
    parser.add_argument("--only", nargs="*", default=(), metavar="VERDICT",
                        help="a JSON report: show only these verdicts' failures")
    args = parser.parse_args(argv)
    page = args.page
    with tempfile.TemporaryDirectory(prefix="mxfp4-fuzz-page-") as folder:
        if page.suffix == ".json":
            rendered = Path(folder) / "report.html"
            rendered.write_text(report_html(json.loads(page.read_text()), only=tuple(args.only)), encoding="utf-8")
            page = rendered
        print(screenshot(page, args.png, *args.size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
