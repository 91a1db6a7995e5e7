//! Giving a lot or memory just written its vector. The write comes first and is durable
//! before the embeddings server is asked anything, so a server that is down, slow or talking
//! nonsense can cost the node its vector, never the node itself: it is still found by its words,
//! and `cheesedb embed` gives it a vector later.

use cheesedb::{Agent, Id};
use serde_json::{json, Map, Value};

use crate::embeddings::client::Embedder;

/// Whether a node just written got its vector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VectorStatus {
    /// It has its vector.
    Attached,
    /// It was stored without one, for this reason.
    Missing(String),
}

impl VectorStatus {
    /// The fields a write's JSON result gains: `"vector": true`, or `"vector": false` with
    /// the reason in `"vector_problem"`.
    pub fn json_fields(&self, into: &mut Map<String, Value>) {
        match self {
            VectorStatus::Attached => {
                into.insert("vector".into(), json!(true));
            }
            VectorStatus::Missing(reason) => {
                into.insert("vector".into(), json!(false));
                into.insert("vector_problem".into(), json!(reason));
            }
        }
    }

    /// What a person or a model is told when the node has no vector, naming it `id`.
    pub fn missing_note(&self, id: Id) -> Option<String> {
        match self {
            VectorStatus::Attached => None,
            VectorStatus::Missing(reason) => Some(format!(
                "{id} was stored without a vector ({reason}); search finds it by its words until `cheesedb embed` gives it one"
            )),
        }
    }
}

/// The text of `content` to embed, or why there is none.
pub fn embeddable_text(content: &[u8]) -> Result<&str, String> {
    let text = std::str::from_utf8(content).map_err(|_| String::from("its content is not UTF-8 text"))?;
    if text.trim().is_empty() {
        return Err(String::from("its content has no text to embed"));
    }
    Ok(text)
}

/// Asks `embedder` for the vector of `content`, which was just written as `id`, and attaches
/// it through an agent that `open` opens anew. The caller lets go of the store before this, so
/// other processes can use it while the server works.
pub fn attach_vector(
    embedder: &Embedder,
    id: Id,
    content: &[u8],
    open: &dyn Fn() -> Result<Agent, String>,
) -> VectorStatus {
    let attached = embeddable_text(content).and_then(|text| embedder.embed_one(text)).and_then(|vector| {
        let agent = open()?;
        agent.set_vector(id, &vector).map_err(|error| format!("storing it failed: {error}"))
    });
    match attached {
        Ok(()) => VectorStatus::Attached,
        Err(reason) => VectorStatus::Missing(reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cheesedb::Store;

    #[test]
    fn only_text_is_embedded() {
        assert_eq!(embeddable_text(b"rain"), Ok("rain"));
        assert!(embeddable_text(&[0xff, 0xfe]).unwrap_err().contains("UTF-8"));
        assert!(embeddable_text(b" \n").unwrap_err().contains("no text"));
    }

    #[test]
    fn a_missing_vector_is_reported_with_its_reason() {
        let mut fields = Map::new();
        VectorStatus::Missing(String::from("server down")).json_fields(&mut fields);
        assert_eq!(Value::Object(fields), json!({ "vector": false, "vector_problem": "server down" }));
        let note = VectorStatus::Missing(String::from("server down")).missing_note(Id::from(4)).unwrap();
        assert!(note.starts_with("4 was stored without a vector (server down)"), "{note}");
        assert_eq!(VectorStatus::Attached.missing_note(Id::from(4)), None);
    }

    #[test]
    fn a_server_that_cannot_be_reached_costs_the_vector_not_the_node() {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::open(folder.path()).unwrap();
        let token = store.create_agent("a").unwrap();
        let id = store.open_agent(&token).unwrap().add_lot("note", b"rain").unwrap();
        drop(store);
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let text = format!("base_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"");
        let embedder = Embedder::new(crate::endpoint::parse(&text, std::time::Duration::from_secs(2)).unwrap());
        let open = || -> Result<Agent, String> {
            let store = Store::open(folder.path()).map_err(|error| error.to_string())?;
            store.open_agent(&token).map_err(|error| error.to_string())
        };
        let status = attach_vector(&embedder, id, b"rain", &open);
        assert!(matches!(&status, VectorStatus::Missing(reason) if reason.contains("no reply")), "{status:?}");
        let agent = open().unwrap();
        assert_eq!(agent.get(id).unwrap().content(), Some(&b"rain"[..]));
        assert!(!agent.has_vector(id).unwrap());
    }
}
