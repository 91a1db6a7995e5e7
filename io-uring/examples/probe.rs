//! Says whether this process can use io_uring and, when it cannot, why: the same probe that
//! `UringStorage::new` (and so `Store::builder(..).io(Io::Uring).open()`) runs before anything else.
//!
//! ```text
//! cargo run -p cheesedb-io-uring --example probe
//! ```
//!
//! Exits with status 0 when io_uring is usable, 1 when it is not.

#[cfg(target_os = "linux")]
fn main() {
    match cheesedb_io_uring::UringStorage::new() {
        Ok(_) => println!("io_uring is available"),
        Err(unavailable) => {
            println!("{unavailable}");
            std::process::exit(1);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn main() {
    println!("io_uring is unavailable: it exists only on Linux");
    std::process::exit(1);
}
