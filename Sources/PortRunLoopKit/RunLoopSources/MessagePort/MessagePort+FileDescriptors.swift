import Foundation

extension MessagePort {
    /// Sends a message carrying file descriptors, as a Mach message carries port rights: the
    /// receiving handler finds them, owned, in ``Message/fileDescriptors``. The caller keeps its own
    /// descriptors (a local port gets close-on-exec duplicates; to another process they travel as
    /// `SCM_RIGHTS`, which the kernel duplicates). Otherwise as ``send(before:msgid:components:from:)``.
    ///
    /// - Returns: false as for ``send(before:msgid:components:from:)``, and also when a descriptor
    ///   could not be duplicated (an invalid fd) or, to another process, when there are more than
    ///   ``CrossProcessPortOptions/maximumFileDescriptorsPerMessage`` (logged).
    ///
    /// Thread-safety: safe from any thread.
    @discardableResult
    public func send(before date: Date, msgid: UInt32 = 0, components: [Data] = [], fileDescriptors: [Int32],
                     from replyPort: MessagePort? = nil) -> Bool {
        if let remote {
            return send(to: remote, before: date, msgid: msgid, components: components, replyPort: replyPort,
                        descriptors: fileDescriptors)
        }
        var owned = [TransferredFileDescriptor]()
        owned.reserveCapacity(fileDescriptors.count)
        for fd in fileDescriptors {
            guard let copy = System.duplicateDescriptor(fd) else {
                withLock { state.rejected += 1 }
                return false // the copies made so far close with `owned`
            }
            owned.append(TransferredFileDescriptor(taking: copy))
        }
        return send(before: date, msgid: msgid, components: components, from: replyPort,
                    context: CallerContext.capture(), descriptors: owned)
    }
}
