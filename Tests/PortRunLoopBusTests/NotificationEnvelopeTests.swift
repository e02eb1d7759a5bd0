import Foundation
@testable import PortRunLoopBus
import Testing

/// ``NotificationEnvelope``: the userInfo in either form, its count, and the second form added
/// once for observers of the other kind.
@Suite struct NotificationEnvelopeTests {
    @Test func noUserInfoIsNilInBothFormsAndCountsZero() {
        let envelope = NotificationEnvelope(name: "n", object: nil, userInfo: nil, deliverImmediately: false)
        #expect(envelope.userInfo == nil)
        #expect(envelope.fields == nil)
        #expect(envelope.userInfoCount == 0)
        let fromFields = NotificationEnvelope(name: "n", object: "o", fields: nil, deliverImmediately: true)
        #expect(fromFields.userInfoCount == 0)
        #expect(fromFields.object == "o")
        #expect(fromFields.deliverImmediately)
    }

    @Test func aPropertyListIsCountedAndReadAsFields() {
        let envelope = NotificationEnvelope(name: "n", object: nil, userInfo: ["a": 1, "b": "two", "c": [1, 2, 3]],
                                            deliverImmediately: false)
        #expect(envelope.userInfoCount == 3)
        let fields = envelope.fields
        #expect(fields?.count == 3)
        #expect(fields?["a"] == .int(1))
        #expect(fields?["b"] == .string("two"))
        #expect(envelope.userInfo?["b"] as? String == "two")
    }

    @Test func fieldsAreCountedAndReadAsAPropertyList() {
        let posted: BusFields = ["x": 1.5, "y": true]
        let envelope = NotificationEnvelope(name: "n", object: nil, fields: posted, deliverImmediately: false)
        #expect(envelope.userInfoCount == 2)
        #expect(envelope.fields == posted)
        #expect(envelope.userInfo?["x"] as? Double == 1.5)
        #expect(envelope.userInfo?["y"] as? Bool == true)
    }

    @Test func theOtherFormIsAddedOnceAndTheCountStays() {
        var envelope = NotificationEnvelope(name: "n", object: nil, userInfo: ["a": 1, "b": "two"], deliverImmediately: false)
        envelope.provideUserInfo(asFields: true)
        guard case .both(let fields, let dictionary) = envelope.payload else {
            Issue.record("expected both forms, got \(envelope.payload)")
            return
        }
        #expect(fields.count == 2)
        #expect(dictionary.count == 2)
        #expect(envelope.userInfoCount == 2)
        // Asked again, in either form: nothing changes.
        envelope.provideUserInfo(asFields: false)
        envelope.provideUserInfo(asFields: true)
        #expect(envelope.fields == fields)

        var fromFields = NotificationEnvelope(name: "n", object: nil, fields: ["k": "v"], deliverImmediately: false)
        fromFields.provideUserInfo(asFields: true) // already fields: nothing to add
        guard case .fields = fromFields.payload else {
            Issue.record("fields asked as fields must stay as they are, got \(fromFields.payload)")
            return
        }
        fromFields.provideUserInfo(asFields: false)
        guard case .both = fromFields.payload else {
            Issue.record("expected both forms, got \(fromFields.payload)")
            return
        }
        #expect(fromFields.userInfoCount == 1)
    }
}
