#!/usr/bin/env bash
# Builds the DocC API reference of PortRunLoopKit: the /// comments of its public symbols and the
# catalog Sources/PortRunLoopKit/PortRunLoopKit.docc (root page, guides), with swift-docc-plugin.
#
#   Scripts/build-docs.sh [OUTPUT_DIR]       # default: .build-docs/PortRunLoopKit.doccarchive
#
# Fails on any DocC warning (unresolved symbol link, undocumented parameter, ...) and on any public
# top-level symbol that the root page (PortRunLoopKit.md) does not place in one of its Topics
# groups. The output is a static website: serve the folder with any static file server, e.g.
#   python3 -m http.server --directory .build-docs/PortRunLoopKit.doccarchive 8000
# and open http://localhost:8000/documentation/portrunloopkit/.
# Builds in its own scratch path (.build-docs), so it does not disturb .build.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh

scratch=.build-docs
out=${1:-$scratch/PortRunLoopKit.doccarchive}
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
rm -rf "$out"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

status=0
swift package --scratch-path "$scratch" --allow-writing-to-directory "$out" \
    generate-documentation --target PortRunLoopKit --warnings-as-errors --output-path "$out" \
    2>&1 | tee "$log" || status=$?
if [ "$status" -ne 0 ]; then
    echo "build-docs: documentation build failed (exit $status)" >&2
    exit "$status"
fi
# SwiftPM's notes about files inside dependencies' folders (not ours to fix) are not warnings of
# this build; everything else is.
if grep "warning:" "$log" | grep -v "found [0-9]* file(s) which are unhandled" | grep -q .; then
    echo "build-docs: the build printed warnings (see above)" >&2
    exit 1
fi

# Every public top-level symbol must be curated by the root page: DocC files the uncurated ones
# under generated groups ("Classes", "Structures", ...), which the root page must not have.
python3 - "$out/data/documentation/portrunloopkit.json" <<'EOF'
import json, sys
page = json.load(open(sys.argv[1]))
loose = [page["references"][i]["title"]
         for section in page.get("topicSections", []) if section.get("generated")
         for i in section["identifiers"]]
if loose:
    print("build-docs: public symbols missing from the Topics of PortRunLoopKit.docc/PortRunLoopKit.md:",
          ", ".join(sorted(loose)), file=sys.stderr)
    sys.exit(1)
EOF
echo "build-docs: API reference in $out (open documentation/portrunloopkit/index.html through a web server)"
