import Foundation

// portrunloop-soak: every feature of the package at once, for a chosen time, with every promised
// delivery checked and the process's memory, descriptors and threads followed (see
// Reliability.md, "Soak"). `--child` and `--die-with-parent` are its own internal modes.

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "--child":
    SoakChild.run(Array(arguments.dropFirst()))
case "--die-with-parent":
    SupervisedExec.run(Array(arguments.dropFirst()))
case "--help", "-h":
    print(SoakOptions.usage)
default:
    switch SoakOptions.parse(arguments) {
    case .failure(let error):
        FileHandle.standardError.write(Data("portrunloop-soak: \(error.message)\n\(SoakOptions.usage)\n".utf8))
        exit(2)
    case .success(let options):
        exit(SoakRun.run(options))
    }
}
