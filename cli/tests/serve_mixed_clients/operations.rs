//! What every kind of client can do, and what it was told about it.

/// The outcome of one operation as its client saw it.
#[derive(Debug)]
pub enum Outcome<T> {
    /// Acknowledged: the client was told it happened.
    Done(T),
    /// Refused: the client was told it did not happen (a recalled parent, no server to ask).
    Refused,
    /// Nobody can say: the connection or the command died before the answer came.
    Unknown,
}

/// A memory as acknowledged.
#[derive(Debug)]
pub struct Remembered {
    /// Its id.
    pub id: u64,
    /// What read tracking added to its legs, as the client was told.
    pub tracked: Vec<u64>,
}

/// A lot or memory as read.
#[derive(Debug)]
pub struct Read {
    /// Whether it is alive.
    pub alive: bool,
    /// Its text, when alive.
    pub content: Option<String>,
}

/// The operations of the workload, on the agent a client works on.
pub trait Operations {
    /// Adds a lot.
    fn add_lot(&mut self, label: &str, text: &str) -> Outcome<u64>;
    /// Remembers `text` on `legs` (each a list of parent ids).
    fn remember(&mut self, text: &str, legs: &[Vec<u64>]) -> Outcome<Remembered>;
    /// Recalls `id` (fair mode); the ids removed with it.
    fn recall(&mut self, id: u64) -> Outcome<Vec<u64>>;
    /// Reads `id`, an id acknowledged to this client: an unknown id fails the test.
    fn get(&mut self, id: u64) -> Outcome<Read>;
}
