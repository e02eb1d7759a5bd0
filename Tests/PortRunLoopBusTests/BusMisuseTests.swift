import PortRunLoopBus
import Testing

/// The bus module's documented misuse stops the process with the library's message, in release
/// builds as in debug ones.
@Suite(.timeLimit(.minutes(1))) struct BusMisuseTests {
    @Test func aDictionaryLiteralWithARepeatedKeyIsNamed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let key = "same"
            _ = BusFields(dictionaryLiteral: (key, 1), (key, 2))
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("PortRunLoop misuse: a dictionary literal contains the key \"same\" twice (at PortRunLoopBus/BusFields.swift:"),
                "stderr was: \(stderr)")
    }
}
