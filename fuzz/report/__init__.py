"""The HTML report of a check (``mxfp4-fuzz check FILE --html report.html``): verdict table, failure cards,
error maps and coverage, drawn as inline SVG and PNG by the small modules here (no plotting library)."""
