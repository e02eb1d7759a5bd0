import Logging

extension BusNotificationCenter {
    /// A reconnecting transport has its connection back: logged, and the next loss is logged again.
    /// (The D-Bus transport never reconnects; a Redis one does.)
    ///
    /// Thread-safety: the transport's loop thread.
    package func transportReconnected() {
        let records = state.withLock { state in
            state.disconnectionLogged = false
            return state.observations
        }
        for record in records { record.resetDisconnectionReport() } // once per loss
        logger.notice("BusNotificationCenter reconnected", metadata: [BusLogKey.endpoint: "\(endpoint)"])
    }
}
