#!/usr/bin/env bash
# Builds the DocC API reference of every library product, one archive per module, with
# swift-docc-plugin: the /// comments of the module's public symbols and its catalog
# Sources/<Module>/<Module>.docc (root page <Module>.md, articles).
#
#   Scripts/build-docs.sh [OUTPUT_DIR]       # default: .build-docs; writes OUTPUT_DIR/<Module>.doccarchive
#
# The modules are PortRunLoopKit, PortRunLoopBus, PortRunLoopDBus, PortRunLoopRedis,
# PortRunLoopMetrics, PortRunLoopServiceLifecycle and PortRunLoopTLS (the library products of Package.swift). Each
# is built with --warnings-as-errors: the script fails on any DocC warning (unresolved symbol or
# article link, undocumented parameter, ...) and on any public top-level symbol that its root page
# does not place in one of its Topics groups. A catalog's links resolve within its own module only,
# so other modules' symbols are written in code voice there. Each archive is a static website: serve
# it with any static file server, e.g.
#   python3 -m http.server --directory .build-docs/PortRunLoopKit.doccarchive 8000
# and open http://localhost:8000/documentation/portrunloopkit/ (the module's name, lowercased).
# Builds in its own scratch path (.build-docs), so it does not disturb .build.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh

scratch=.build-docs
modules=(PortRunLoopKit PortRunLoopBus PortRunLoopDBus PortRunLoopRedis PortRunLoopMetrics PortRunLoopServiceLifecycle PortRunLoopTLS)
out=${1:-$scratch}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$(mktemp)
trap 'rm -f "$log"' EXIT

for module in "${modules[@]}"; do
    archive=$out/$module.doccarchive
    rm -rf "$archive"
    echo "=== build-docs: $module"
    status=0
    swift package --scratch-path "$scratch" --allow-writing-to-directory "$archive" \
        generate-documentation --target "$module" --warnings-as-errors --output-path "$archive" \
        2>&1 | tee "$log" || status=$?
    if [ "$status" -ne 0 ]; then
        echo "build-docs: the documentation build of $module failed (exit $status)" >&2
        exit "$status"
    fi
    # SwiftPM's notes about files inside dependencies' folders (not ours to fix) are not warnings of
    # this build; everything else is.
    if grep "warning:" "$log" | grep -v "found [0-9]* file(s) which are unhandled" | grep -q .; then
        echo "build-docs: the documentation build of $module printed warnings (see above)" >&2
        exit 1
    fi

    # Every public top-level symbol must be curated by the root page: DocC files the uncurated ones
    # under generated groups ("Classes", "Structures", ...), which the root page must not have.
    page=$archive/data/documentation/$(echo "$module" | tr '[:upper:]' '[:lower:]').json
    python3 - "$page" "$module" <<'EOF'
import json, sys
path, module = sys.argv[1], sys.argv[2]
page = json.load(open(path))
loose = [page["references"][i]["title"]
         for section in page.get("topicSections", []) if section.get("generated")
         for i in section["identifiers"]]
if loose:
    print(f"build-docs: public symbols missing from the Topics of {module}.docc/{module}.md:",
          ", ".join(sorted(loose)), file=sys.stderr)
    sys.exit(1)
EOF
done
echo "build-docs: API reference in $out/<Module>.doccarchive for ${modules[*]}"
echo "build-docs: open documentation/<module, lowercased>/index.html of an archive through a web server"
