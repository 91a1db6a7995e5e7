//! A simple first version, kept until the indexed one replaces it.
use super::{for_each_word, Hit};
use crate::id::Id;
use alloc::string::String;
use alloc::vec::Vec;
#[derive(Debug, Clone, Default)]
pub struct KeywordIndex {
    docs: Vec<(u64, Vec<String>, bool)>,
}
impl KeywordIndex {
    pub fn add(&mut self, id: u64, content: &[u8]) {
        let mut w = Vec::new();
        for_each_word(content, |x| w.push(String::from(x)));
        self.docs.push((id, w, true));
    }
    pub fn remove(&mut self, id: u64) {
        for d in &mut self.docs {
            if d.0 == id {
                d.2 = false;
            }
        }
    }
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let mut q = Vec::new();
        for_each_word(query.as_bytes(), |x| q.push(String::from(x)));
        let mut hits: Vec<Hit> = self
            .docs
            .iter()
            .filter(|d| d.2)
            .filter_map(|d| {
                let n = d.1.iter().filter(|w| q.contains(w)).count();
                (n > 0).then(|| Hit::new(Id::from(d.0), n as f32))
            })
            .collect();
        hits.sort_by(|a, b| {
            b.score.partial_cmp(&a.score).unwrap_or(core::cmp::Ordering::Equal).then(a.id.get().cmp(&b.id.get()))
        });
        hits.truncate(limit);
        hits
    }
    pub fn alive_documents(&self) -> usize {
        self.docs.iter().filter(|d| d.2).count()
    }
    pub fn heap_bytes(&self) -> usize {
        0
    }
}
