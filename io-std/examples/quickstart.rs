//! The reference story through the library: three sources, three memories, one bad source
//! recalled with Erase, and a byte search of the folder that proves the text is gone.
//!
//! Run with `cargo run -p cheesedb --example quickstart`.

use std::path::Path;

use cheesedb::{Error, Leg, Mode, Removal, Store};

fn main() {
    if let Err(error) = run() {
        eprintln!("quickstart failed: {error}");
        std::process::exit(1);
    }
}

fn folder_contains(folder: &Path, needle: &[u8]) -> usize {
    let mut count = 0;
    let mut pending = vec![folder.to_path_buf()];
    while let Some(current) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else { continue };
        for path in entries.flatten().map(|entry| entry.path()) {
            if path.is_dir() {
                pending.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                count += bytes.windows(needle.len()).filter(|window| *window == needle).count();
            }
        }
    }
    count
}

fn list(ids: &[cheesedb::Id]) -> String {
    let numbers: Vec<String> = ids.iter().map(ToString::to_string).collect();
    format!("[{}]", numbers.join(", "))
}

fn run() -> Result<(), Error> {
    let folder = std::env::temp_dir().join(format!("cheesedb-quickstart-{}", std::process::id()));
    let store = Store::open(&folder)?;
    let token = store.create_agent("alice")?;
    let alice = store.open_agent(&token)?;
    println!("store in {}; agent alice (token shown once, kept only as a hash)", folder.display());

    let a = alice.add_lot("user_message", b"I live in Pune")?;
    let b = alice.add_lot("web_page", b"profile: lives in Pune")?;
    let c = alice.add_lot("weather_tool", b"Pune: rain all week")?;
    let m1 = alice.remember(b"user lives in Pune", &[Leg::from([a]), Leg::from([b])])?;
    let m2 = alice.remember(b"Pune will be rainy", &[Leg::from([c])])?;
    let m3 = alice.remember(b"remind the user to carry an umbrella", &[Leg::from([m1, m2])])?;
    println!("lots {a} {b} {c}; memories {m1} = {{{a}}} or {{{b}}}, {m2} = {{{c}}}, {m3} = {{{m1}, {m2}}}");

    println!("the weather tool was wrong; a dry run of recalling {c}: {}", list(&alice.preview_recall(c, Mode::Fair)?));
    println!(
        "before the recall, \"rain all week\" appears {} time(s) in the files",
        folder_contains(&folder, b"rain all week")
    );
    let removed = alice.recall(c, Mode::Fair, Removal::Erase)?;
    println!("recall({c}, Fair, Erase) removed {}; {m1} survives: {}", list(&removed), alice.get(m1)?.is_alive());
    println!(
        "after the recall, \"rain all week\" appears {} time(s) in the files",
        folder_contains(&folder, b"rain all week")
    );
    println!("alive memories: {}", list(&alice.memories()?));
    println!("head fingerprint (keep it elsewhere): {}", alice.verify()?);

    drop(alice);
    drop(store);
    let _ = std::fs::remove_dir_all(&folder);
    Ok(())
}
