//! `cheesedb demo`: one story told three ways, so the difference between deleting a source and
//! recalling it can be seen, and the files searched.
//!
//! - [`config`]: reading `llm.conf`.
//! - [`model`]: what the story needs from a model, and checking what a model says.
//! - [`llm`]: a real model behind an OpenAI-compatible chat-completions server.
//! - [`scripted`]: the stand-in used when no server is configured.
//! - [`naive`]: the plain memory list the story compares against.
//! - [`story`]: the story itself and its closing table.

pub mod config;
pub mod llm;
pub mod model;
pub mod naive;
pub mod scripted;
pub mod story;
