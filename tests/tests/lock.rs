//! One folder has one open store: the files backends hold a lock on it, in this process and
//! against others, with either `Io`. (A backend of one's own keeps other processes out itself.)

use std::process::Command;

use cheesedb::{Error, Io, Options, Store};

#[test]
fn a_second_open_in_this_process_is_locked() {
    let folder = tempfile::tempdir().unwrap();
    let store = Store::open(folder.path()).unwrap();
    assert_eq!(Store::open(folder.path()).unwrap_err(), Error::Locked);
    let agent = store.open_agent(&store.create_agent("alice").unwrap()).unwrap();
    drop(store);
    // An agent handle keeps the store, and its lock, alive.
    assert_eq!(Store::open(folder.path()).unwrap_err(), Error::Locked);
    drop(agent);
    Store::open(folder.path()).unwrap();
}

#[cfg(target_os = "linux")]
#[test]
fn the_lock_holds_across_io_choices() {
    let folder = tempfile::tempdir().unwrap();
    let store = Store::open_with_io(folder.path(), Options::default(), Io::Uring).unwrap();
    assert_eq!(Store::open(folder.path()).unwrap_err(), Error::Locked);
    drop(store);
    let store = Store::open(folder.path()).unwrap();
    assert_eq!(Store::open_with_io(folder.path(), Options::default(), Io::Uring).unwrap_err(), Error::Locked);
    drop(store);
}

const CHILD_FOLDER: &str = "CHEESEDB_TEST_LOCK_CHILD_FOLDER";

/// Run in a child process by the test below: tries to open the folder it is given.
#[test]
fn lock_child_process() {
    let Ok(folder) = std::env::var(CHILD_FOLDER) else { return };
    match Store::open(folder) {
        Err(Error::Locked) => std::process::exit(42),
        Ok(_) => std::process::exit(0),
        Err(_) => std::process::exit(1),
    }
}

#[test]
fn a_second_process_gets_locked_until_the_first_closes() {
    let folder = tempfile::tempdir().unwrap();
    let run_child = || {
        Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "lock_child_process", "--nocapture"])
            .env(CHILD_FOLDER, folder.path())
            .status()
            .unwrap()
            .code()
    };
    let store = Store::open(folder.path()).unwrap();
    assert_eq!(run_child(), Some(42), "the child must see Locked");
    drop(store);
    assert_eq!(run_child(), Some(0), "the child opens once the lock is released");
}
