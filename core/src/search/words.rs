//! A simple first version, kept until the indexed one replaces it.
pub fn for_each_word(text: &[u8], mut visit: impl FnMut(&str)) {
    let text = alloc::string::String::from_utf8_lossy(text).to_lowercase();
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        visit(word)
    }
}
