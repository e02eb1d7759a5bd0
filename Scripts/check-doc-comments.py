#!/usr/bin/env python3
"""Checks that every public/open declaration in the library targets (Sources/PortRunLoopKit and the
integration products beside it) has a `///` doc comment
that contains a `Thread-safety:` line (the project's rule). Members of a public type may rely on
the type's line only when they are protocol-conformance boilerplate (==, hash(into:), description,
makeAsyncIterator, next()). Exits non-zero and lists the offenders otherwise."""
import pathlib, re, sys

sources = pathlib.Path(__file__).resolve().parent.parent / "Sources"
# The library products: the core and every integration target (executables are not listed).
libraries = ["PortRunLoopKit", "PortRunLoopServiceLifecycle", "PortRunLoopMetrics", "PortRunLoopBus", "PortRunLoopDBus", "PortRunLoopRedis", "PortRunLoopTLS"]
roots = [sources / name for name in libraries if (sources / name).is_dir()]
decl = re.compile(r'^\s*(@\w+(\([^)]*\))?\s+)*(public|open)\s+(?!import)(.*)$')
exempt = re.compile(r'(static func ==|func hash\(into|var description|var debugDescription|func makeAsyncIterator|mutating func next\(|typealias |init\(rawValue|let rawValue|var rawValue)')
bad = []
for path in sorted(p for root in roots for p in root.rglob("*.swift")):
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        m = decl.match(line)
        if not m or line.lstrip().startswith("//"):
            continue
        if exempt.search(line):
            continue
        # Walk up over attributes and the doc comment block.
        j = i - 1
        while j >= 0 and lines[j].strip().startswith("@"):
            j -= 1
        doc = []
        while j >= 0 and lines[j].strip().startswith("///"):
            doc.append(lines[j]); j -= 1
        if not doc:
            bad.append(f"{path.relative_to(sources.parent)}:{i+1}: no /// comment: {line.strip()[:90]}")
        elif not any("Thread-safety" in d for d in doc):
            bad.append(f"{path.relative_to(sources.parent)}:{i+1}: no Thread-safety line: {line.strip()[:90]}")
if bad:
    print("\n".join(bad))
    print(f"{len(bad)} public declaration(s) break the doc-comment rule")
    sys.exit(1)
print("doc comments: every public declaration has a /// comment with a Thread-safety line")
