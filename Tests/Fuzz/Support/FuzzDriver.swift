import Foundation

/// The `main` of every fuzz target.
///
/// Built with `-DFUZZING -sanitize=fuzzer,address` (Scripts/fuzz.sh), it hands the process to
/// libFuzzer (`LLVMFuzzerRunDriver`), which calls the target's `LLVMFuzzerTestOneInput` with
/// each input and takes libFuzzer's flags. Built normally, it replays the files and folders named
/// on the command line through the same check (`fuzz-endpoint crash-1234 Tests/Fuzz/Corpus/fuzz-endpoint`),
/// or writes the seed corpus (`fuzz-endpoint --write-seeds DIR`).
///
/// Thread-safety: call from the main thread, once.
package enum FuzzDriver {
    /// Runs the target whose check is `harness`; never returns.
    package static func main(_ harness: any FuzzHarness.Type) -> Never {
        #if FUZZING
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(runDriver(&argc, &argv) { testOneInput($0, $1) })
        #else
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "--write-seeds", arguments.count == 2 {
            do {
                let written = try writeSeeds(of: harness, to: arguments[1])
                print("\(harness.targetName): wrote \(written) seeds to \(arguments[1])")
                exit(0)
            } catch {
                FileHandle.standardError.write(Data("\(harness.targetName): \(error)\n".utf8))
                exit(2)
            }
        }
        guard !arguments.isEmpty, !arguments.contains(where: { $0.hasPrefix("-") }) else {
            FileHandle.standardError.write(Data("""
                usage: \(harness.targetName) FILE-OR-DIR...   replays the inputs through the check
                       \(harness.targetName) --write-seeds DIR writes the seed corpus
                (built with -DFUZZING -sanitize=fuzzer,address: libFuzzer's flags; see Scripts/fuzz.sh)

                """.utf8))
            exit(2)
        }
        let files = arguments.flatMap { inputFiles(at: $0) }
        var failures = 0
        for file in files {
            guard let bytes = FileManager.default.contents(atPath: file) else {
                print("\(file): unreadable")
                failures += 1
                continue
            }
            do throws(InvariantViolation) {
                try harness.run([UInt8](bytes))
            } catch {
                print("\(file): \(error)")
                failures += 1
            }
        }
        print("\(harness.targetName): \(files.count - failures) passed, \(failures) failed")
        exit(failures == 0 ? 0 : 1)
        #endif
    }

    /// What `LLVMFuzzerTestOneInput` does: runs `harness` on the input, and traps with the broken
    /// invariant's description (libFuzzer reports the trap as a crash and keeps the input).
    package static func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int, _ harness: any FuzzHarness.Type) -> CInt {
        do throws(InvariantViolation) {
            try harness.run(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
        } catch {
            fatalError("\(harness.targetName): invariant broken: \(error)")
        }
        return 0
    }

    /// The files of `path`: itself when it is a file, else the regular files in it (not hidden),
    /// sorted by name.
    package static func inputFiles(at path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return [path] }
        guard isDirectory.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { path + "/" + $0 }
    }

    /// Writes `harness`'s seeds into `directory` (made if missing); returns how many.
    package static func writeSeeds(of harness: any FuzzHarness.Type, to directory: String) throws -> Int {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let seeds = harness.seeds()
        for seed in seeds {
            try Data(seed.bytes).write(to: URL(fileURLWithPath: directory + "/" + seed.name))
        }
        return seeds.count
    }
}

#if FUZZING
/// libFuzzer's entry for a program with its own `main` (compiler-rt's FuzzerInterface.h).
@_silgen_name("LLVMFuzzerRunDriver")
private func runDriver(_ argc: UnsafeMutablePointer<CInt>,
                       _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                       _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

/// The target's `@_cdecl("LLVMFuzzerTestOneInput")` (each target defines it).
@_silgen_name("LLVMFuzzerTestOneInput")
private func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt
#endif
