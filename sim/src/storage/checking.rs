//! What the harness tells the trace checker that watches this disk, and what it reads back.
//!
//! The checker sees every operation of the disk; the harness adds where each call into the
//! engine begins and how it ended, so the checker can tell an acknowledgement that rests on
//! unsynced data.

use super::SimStorage;
use crate::trace::Event;

impl SimStorage {
    /// Prints every event of the trace to standard error from now on when `echo` is set, to
    /// replay one seed by hand. Echoing changes nothing the trace records.
    pub fn echo_trace(&self, echo: bool) {
        self.shared.borrow_mut().trace.set_echo(echo);
    }

    /// Whether every event of the trace is printed to standard error.
    pub fn is_echoing_trace(&self) -> bool {
        self.shared.borrow().trace.is_echoing()
    }

    /// The hash of the whole trace so far.
    pub fn trace_hash(&self) -> u64 {
        self.shared.borrow().trace.hash()
    }

    /// The last events of the trace, one a line.
    pub fn recent_events(&self) -> String {
        self.shared.borrow().trace.recent()
    }

    /// Tells the trace checker that a call into the engine starts.
    pub fn begin_call(&self, call: &str) {
        self.shared.borrow_mut().trace.begin_call(call);
    }

    /// Tells the trace checker that the engine acknowledged the call; returns what it found wrong.
    pub fn acknowledge(&self) -> Result<(), String> {
        self.shared.borrow_mut().trace.acknowledge()
    }

    /// Tells the trace checker that the engine refused or failed the call.
    pub fn refuse(&self, why: &str) {
        self.shared.borrow_mut().trace.refuse(why);
    }

    /// Records a harness step in the trace (it counts in the trace hash).
    pub fn note(&self, operation: &'static str, subject: &str, number: u64) {
        self.shared.borrow_mut().trace.record(Event { operation, subject: subject.to_string(), number, outcome: "ok" });
    }
}
