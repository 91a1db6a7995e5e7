//! One folder has one writer, or any number of readers: the files backends lock the store
//! folder itself, in this process and against others, with either `Io`. (A backend of one's
//! own keeps other processes out itself.) The lock cannot be removed from under its holder:
//! a `lock` file, which older versions used, means nothing.
//!
//! Every test here takes `SERIAL` first. A child process started by one test holds a copy of
//! every descriptor of this process until it execs, the lock of another test among them; an open
//! asks again for about 100 ms before it answers `Locked` (the library's lock unit tests show it
//! on a thread starting thousands of children), and the tests here still do not race for that.

use std::path::Path;
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

use cheesedb::{Error, Io, Store};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[test]
fn a_second_open_in_this_process_is_locked() {
    let _serial = serial();
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
    let _serial = serial();
    let folder = tempfile::tempdir().unwrap();
    let store = match Store::builder(folder.path()).io(Io::Uring).open() {
        Ok(store) => store,
        Err(error) => {
            println!("skipping io_uring: {error}");
            return;
        }
    };
    assert_eq!(Store::open(folder.path()).unwrap_err(), Error::Locked);
    drop(store);
    let store = Store::open(folder.path()).unwrap();
    assert_eq!(Store::builder(folder.path()).io(Io::Uring).open().unwrap_err(), Error::Locked);
    drop(store);
}

#[test]
fn deleting_an_old_lock_file_lets_no_second_writer_in() {
    let _serial = serial();
    let folder = tempfile::tempdir().unwrap();
    // A lock file left by an older version is harmless, and removing it changes nothing.
    std::fs::write(folder.path().join(cheesedb::LOCK_FILE), b"").unwrap();
    let store = Store::open(folder.path()).unwrap();
    std::fs::remove_file(folder.path().join(cheesedb::LOCK_FILE)).unwrap();
    assert_eq!(Store::open(folder.path()).unwrap_err(), Error::Locked);
    assert_eq!(Store::open_read_only(folder.path()).unwrap_err(), Error::Locked);
    assert_eq!(run_child(folder.path(), "write"), Some(42), "a writer in another process must see Locked");
    assert_eq!(run_child(folder.path(), "read"), Some(42), "a reader in another process must see Locked");
    drop(store);
    assert!(!folder.path().join(cheesedb::LOCK_FILE).exists(), "no lock file is made any more");
}

#[test]
fn readers_in_two_processes_share_and_exclude_a_writer() {
    let _serial = serial();
    let folder = tempfile::tempdir().unwrap();
    drop(Store::open(folder.path()).unwrap());
    let reader = Store::open_read_only(folder.path()).unwrap();
    assert_eq!(run_child(folder.path(), "read"), Some(0), "readers do not exclude readers");
    assert_eq!(run_child(folder.path(), "write"), Some(42), "a reader excludes a writer");
    drop(reader);
    assert_eq!(run_child(folder.path(), "write"), Some(0));
}

const CHILD_FOLDER: &str = "CHEESEDB_TEST_LOCK_CHILD_FOLDER";
const CHILD_ACCESS: &str = "CHEESEDB_TEST_LOCK_CHILD_ACCESS";

/// Run in a child process by the tests here: opens the folder it is given, for reading or for
/// writing as it is told, and exits 42 if it is locked.
#[test]
fn lock_child_process() {
    let Ok(folder) = std::env::var(CHILD_FOLDER) else { return };
    let opened = match std::env::var(CHILD_ACCESS).as_deref() {
        Ok("read") => Store::open_read_only(folder),
        _ => Store::open(folder),
    };
    match opened {
        Err(Error::Locked) => std::process::exit(42),
        Ok(_) => std::process::exit(0),
        Err(_) => std::process::exit(1),
    }
}

fn run_child(folder: &Path, access: &str) -> Option<i32> {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &cheesedb_tests::test_name(module_path!(), "lock_child_process"), "--nocapture"])
        .env(CHILD_FOLDER, folder)
        .env(CHILD_ACCESS, access)
        .status()
        .unwrap()
        .code()
}

#[test]
fn a_second_process_gets_locked_until_the_first_closes() {
    let _serial = serial();
    let folder = tempfile::tempdir().unwrap();
    let store = Store::open(folder.path()).unwrap();
    assert_eq!(run_child(folder.path(), "write"), Some(42), "the child must see Locked");
    drop(store);
    assert_eq!(run_child(folder.path(), "write"), Some(0), "the child opens once the lock is released");
}
