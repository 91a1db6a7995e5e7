//! [`MessageProblem`]: why bytes on a connection were not a message of the protocol.

use core::fmt;

/// Why the peer of a connection to the memory server sent something that is not a message of
/// the protocol, or not one it may send then ([`Error::MalformedMessage`]). New problems may be
/// added; match with a wildcard arm.
///
/// [`Error::MalformedMessage`]: crate::Error::MalformedMessage
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum MessageProblem {
    /// The bytes do not decode as a request.
    RequestUndecodable,
    /// The bytes do not decode as a response.
    ResponseUndecodable,
    /// Bytes are left over after one whole message.
    BytesLeftOver,
    /// The server answered with another kind of response than the request asks for.
    UnexpectedResponse,
    /// The first request of a connection was not a hello.
    FirstRequestNotHello,
    /// A request that needs an open agent came before one was opened.
    NoAgentOpen,
    /// An agent was opened on a connection that has one open already.
    AgentAlreadyOpen,
    /// A write came outside the staged batch that is open on the connection.
    BatchOpen,
}

impl MessageProblem {
    /// The problem in words, as messages print it.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            MessageProblem::RequestUndecodable => "the bytes do not decode as a request",
            MessageProblem::ResponseUndecodable => "the bytes do not decode as a response",
            MessageProblem::BytesLeftOver => "bytes are left over after the message",
            MessageProblem::UnexpectedResponse => "the server answered with another kind of response",
            MessageProblem::FirstRequestNotHello => "the first request was not a hello",
            MessageProblem::NoAgentOpen => "a request before an agent was opened",
            MessageProblem::AgentAlreadyOpen => "an agent is open on this connection already",
            MessageProblem::BatchOpen => "a batch is open: write through the batch",
        }
    }
}

impl fmt::Display for MessageProblem {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.describe())
    }
}
