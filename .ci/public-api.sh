#!/usr/bin/env bash
# The public API of the two library crates, as rustdoc renders it on stable: every documented
# item and the signature of every public function, method, field and variant, one per line.
# Compares the listing with the checked-in .ci/public-api.txt and fails on any difference, so a
# change to the API is always a visible change to that file. `--update` rewrites the file.
#
# A listing rather than cargo-semver-checks: that tool could not be built and wired in here in
# time, and this needs nothing but rustdoc. It sees removals, renames and signature changes; it
# does not judge whether a change is compatible, the reviewer of the diff does.
set -euo pipefail

cd "$(dirname "$0")/.."
listing=.ci/public-api.txt
target="${CARGO_TARGET_DIR:-target}"

cargo doc --quiet --no-deps -p cheesedb-core -p cheesedb --features cheesedb/server 2>/dev/null

python3 - "$target/doc" > "$target/public-api.txt" <<'PYTHON'
import html, pathlib, re, sys

root = pathlib.Path(sys.argv[1])
lines = set()
for crate in ("cheesedb_core", "cheesedb"):
    for page in sorted((root / crate).rglob("*.html")):
        name = page.name
        if not re.match(r"(struct|enum|trait|fn|constant|type|macro)\.", name):
            continue
        if any(part.startswith("internal") for part in page.relative_to(root).parts):
            continue
        item = str(page.relative_to(root))
        text = page.read_text(encoding="utf-8")
        if "<title>Redirection</title>" in text or 'http-equiv="refresh"' in text:
            continue
        lines.add(item)
        for header in re.findall(r'class="code-header">(.*?)</h[34]>', text, re.S):
            signature = html.unescape(re.sub(r"<[^>]+>", "", header))
            lines.add(item + " :: " + " ".join(signature.split()))
        for declaration in re.findall(r'<pre class="rust item-decl"><code>(.*?)</code></pre>', text, re.S):
            body = html.unescape(re.sub(r"<[^>]+>", "", declaration))
            lines.add(item + " := " + " ".join(body.split()))
print("\n".join(sorted(lines)))
PYTHON

if [ "${1:-}" = "--update" ]; then
    cp "$target/public-api.txt" "$listing"
    echo "public API listing updated: $(wc -l < "$listing") lines"
    exit 0
fi
if ! diff -u "$listing" "$target/public-api.txt"; then
    echo "the public API changed; if that is intended, run .ci/public-api.sh --update and commit" >&2
    exit 1
fi
echo "public API unchanged: $(wc -l < "$listing") lines"
