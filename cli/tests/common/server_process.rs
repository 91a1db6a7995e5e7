//! A `cheesedb serve` process in a data folder of its own, for the tests of the memory server.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use cheesedb::Client;

use super::BINARY;

/// How long a server may take to stop, or a restarted one to take over a store a killed one
/// held. Generous: a busy two-core machine must not fail a test by its clock.
pub const PATIENCE: Duration = Duration::from_secs(120);

/// A running server.
pub struct ServerProcess {
    child: Child,
    /// The data folder it serves.
    pub folder: PathBuf,
    /// Its socket.
    pub socket: PathBuf,
    stderr: Option<ChildStderr>,
}

impl ServerProcess {
    /// Starts `cheesedb serve` on `folder` with `extra` arguments, and waits until it listens.
    pub fn start(folder: &Path, extra: &[&str]) -> ServerProcess {
        ServerProcess::try_start(folder, extra).unwrap_or_else(|stderr| panic!("the server did not start: {stderr}"))
    }

    /// Like [`ServerProcess::start`]; `Err` with its standard error when it exits instead.
    pub fn try_start(folder: &Path, extra: &[&str]) -> Result<ServerProcess, String> {
        let mut child = Command::new(BINARY)
            .arg("--dir")
            .arg(folder)
            .arg("--json")
            .arg("serve")
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        if line.is_empty() {
            let mut stderr = String::new();
            child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
            child.wait().unwrap();
            return Err(stderr);
        }
        let ready: serde_json::Value = serde_json::from_str(&line).expect("a JSON line when ready");
        let socket = PathBuf::from(ready["socket"].as_str().unwrap());
        assert_eq!(ready["pid"].as_u64(), Some(u64::from(child.id())));
        let stderr = child.stderr.take();
        Ok(ServerProcess { child, folder: folder.to_path_buf(), socket, stderr })
    }

    /// Like [`ServerProcess::start`], started again while a command holds the store's folder
    /// lock (a server refuses to start then, by design) until the lock is free; returns the
    /// server and how many times it was refused.
    pub fn start_when_free(folder: &Path) -> (ServerProcess, u64) {
        let started = Instant::now();
        let mut refusals = 0;
        loop {
            match ServerProcess::try_start(folder, &[]) {
                Ok(server) => return (server, refusals),
                Err(stderr)
                    if stderr.contains("in use by another cheesedb process") && started.elapsed() < PATIENCE =>
                {
                    refusals += 1;
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(stderr) => panic!("the server did not start: {stderr}"),
            }
        }
    }

    /// A client of this server.
    pub fn client(&self) -> Client {
        Client::connect(&self.socket).expect("the server answers")
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` to the server.
    pub fn signal(&self, signal: rustix::process::Signal) {
        let pid = rustix::process::Pid::from_raw(i32::try_from(self.child.id()).unwrap()).unwrap();
        rustix::process::kill_process(pid, signal).unwrap();
    }

    /// Waits for the server to exit; returns its status and standard error.
    pub fn wait(mut self) -> (ExitStatus, String) {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let mut stderr = String::new();
                if let Some(mut pipe) = self.stderr.take() {
                    pipe.read_to_string(&mut stderr).unwrap();
                }
                return (status, stderr);
            }
            assert!(started.elapsed() < PATIENCE, "the server did not stop");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// SIGTERM, then waits; asserts a clean stop.
    pub fn stop(self) {
        self.signal(rustix::process::Signal::TERM);
        let (status, stderr) = self.wait();
        assert_eq!(status.code(), Some(0), "a clean stop; stderr: {stderr}");
    }

    /// SIGKILL, then waits: the server has no chance to clean up.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
